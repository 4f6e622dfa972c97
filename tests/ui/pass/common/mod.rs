// The examples' shared helpers, where the examples included by the pass
// cases look for them.
include!("../../../../examples/common/mod.rs");
