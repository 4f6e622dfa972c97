//! Attributes inside a plan: doc comments, and nothing else.

use syn::Attribute;
use syn::parse::ParseStream;

/// Doc comments document the plan's code and are kept out of its meaning;
/// any other attribute inside a plan is an error.
pub fn skip_doc_comments(input: ParseStream) -> syn::Result<()> {
    for attribute in input.call(Attribute::parse_outer)? {
        if !attribute.path().is_ident("doc") {
            return Err(syn::Error::new_spanned(
                attribute,
                "inside a plan only doc comments may annotate declarations and operations\n\n\
                 help: put attributes such as `#[cfg]` on the plan itself",
            ));
        }
    }
    Ok(())
}
