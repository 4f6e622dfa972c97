//! The `memplan!` macro.

use proc_macro::TokenStream;

/// Declares a transfer plan (placeholder until the language lands).
#[proc_macro]
pub fn memplan(input: TokenStream) -> TokenStream {
    let _ = input;
    TokenStream::new()
}
