//! memplan-runtime.
