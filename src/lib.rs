//! memplan: declare a CUDA transfer plan once, have it checked while the
//! program compiles, and run it as plain driver calls.
