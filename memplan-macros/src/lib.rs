//! The `memplan!` macro.
