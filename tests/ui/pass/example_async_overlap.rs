// The example, as a pass case: it compiles, and without a GPU it runs to
// the end, explaining its plan.
include!("../../../examples/async_overlap.rs");
