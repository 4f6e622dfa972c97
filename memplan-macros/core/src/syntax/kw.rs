//! The words of the language that Rust does not reserve, but for the
//! words of ops alone, which `op.rs` keeps beside their parse.

syn::custom_keyword!(plan);
syn::custom_keyword!(kernel);
syn::custom_keyword!(from);
syn::custom_keyword!(out);
syn::custom_keyword!(atomic);
syn::custom_keyword!(host);
syn::custom_keyword!(device);
syn::custom_keyword!(stream);
syn::custom_keyword!(event);
syn::custom_keyword!(on);
syn::custom_keyword!(pinned);
syn::custom_keyword!(pageable);
syn::custom_keyword!(mapped);
syn::custom_keyword!(write_combined);
syn::custom_keyword!(portable);
syn::custom_keyword!(registered);
syn::custom_keyword!(priority);
syn::custom_keyword!(high);
syn::custom_keyword!(normal);
syn::custom_keyword!(run);
syn::custom_keyword!(gpus);
syn::custom_keyword!(peer);
syn::custom_keyword!(ranks);
