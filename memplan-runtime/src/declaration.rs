//! What the code `memplan!` generates for a `kernel` declaration calls:
//! the check of [`memplan_model::declaration`] against the image the
//! declaration names, evaluated in a constant of the user's crate, so that
//! a mismatch is a compile error at the declaration.
//!
//! Where the macro could read the image's signatures itself (an image of
//! the crate being compiled, whose build step wrote them), it ran the same
//! check and *predicted* its message; it then words the error as an
//! ordinary one, through a trait bound that holds unless
//! [`fails_with`] confirms the prediction against the image the path
//! really names. Where it could not, or guessed wrong (a path that names
//! another image of that name), the constant that evaluates
//! [`check_kernel`] panics with the real message, as it does for every
//! message but the predicted one: one error either way, never a guessed
//! one.

use crate::image::Image;
use crate::kernel::KernelValue;
use memplan_model::ParamLayout;
pub use memplan_model::RustScalar;
use memplan_model::declaration::check;
pub use memplan_model::declaration::str_eq;
pub use memplan_model::declaration::{Access, Declared, DeclaredParam, Message, RustType};

/// `T` as its [`KernelValue`] impl describes it: read from the type, so
/// that an alias is the type it aliases.
pub const fn rust_type<T: KernelValue>() -> RustType {
    RustType {
        scalar: match T::PRIMITIVE {
            Some(scalar) => scalar,
            None => RustScalar::Named { cpp: T::CPP_NAME },
        },
        layout: ParamLayout::of::<T>(),
    }
}

/// `Ok` with the kernel's symbol if the declaration matches the kernel
/// of that name in `image`, else the message of the compile error. An
/// image built without nvcc ([`Image::unbuilt`]) accepts every
/// declaration: it cannot be loaded anyway.
// The message is built in constant evaluation, where nothing can be boxed;
// it is never moved around at run time.
#[allow(clippy::result_large_err)]
pub const fn check_kernel(
    image: &Image,
    declared: &Declared<'static>,
) -> Result<&'static str, Message> {
    if image.is_unbuilt() {
        return Ok(declared.name);
    }
    check(image.kernels(), declared)
}

/// Whether the declaration fails its check with exactly `message`: the
/// macro's prediction, confirmed against the image itself.
pub const fn fails_with(image: &Image, declared: &Declared<'static>, message: &str) -> bool {
    match check_kernel(image, declared) {
        Ok(_) => false,
        Err(real) => str_eq(real.as_str(), message),
    }
}

/// Whether the macro's predicted error is wrong: the type of its trait
/// bound (`Verdict<true>` implements the macro's trait, `Verdict<false>`,
/// a prediction [`fails_with`] confirms, does not, and rustc shows the
/// trait's message).
pub struct Verdict<const HOLDS: bool>;

/// What an `unsafe kernel` declaration calls, in an `unsafe` block of the
/// user's, so that it is an `unsafe` promise to the compiler too.
///
/// # Safety
/// The declaration matches the kernel's C++ parameters, in number, kind
/// (pointer or value), type and width, and what the kernel reads and
/// writes through each pointer, within the extent declared (the whole
/// argument where none is).
pub const unsafe fn promise_kernel_matches() {}

/// The symbol to load for a checked declaration (its own name when the
/// check fails: that is a compile error anyway).
pub const fn kernel_symbol(image: &Image, declared: &Declared<'static>) -> &'static str {
    match check_kernel(image, declared) {
        Ok(symbol) => symbol,
        Err(_) => declared.name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_read_from_their_impls_not_their_spelling() {
        type Count = i32;
        let i32 = RustType::primitive(RustScalar::I32).unwrap();
        assert_eq!(rust_type::<Count>(), i32);
        assert_eq!(
            rust_type::<core::ffi::c_float>(),
            RustType::primitive(RustScalar::F32).unwrap()
        );
        assert_eq!(
            rust_type::<[u64; 2]>().scalar,
            RustScalar::Named { cpp: None }
        );
        // The macro predicts with `primitive`: the same as the impls.
        for (scalar, of) in [
            (RustScalar::Usize, rust_type::<usize>()),
            (RustScalar::Isize, rust_type::<isize>()),
            (RustScalar::Bool, rust_type::<bool>()),
            (RustScalar::F64, rust_type::<f64>()),
            (RustScalar::U8, rust_type::<u8>()),
        ] {
            assert_eq!(RustType::primitive(scalar), Some(of));
        }
    }

    #[test]
    fn images_of_unknown_origin_need_unsafe_and_unbuilt_ones_pass() {
        const DECLARED: Declared = Declared {
            name: "vadd",
            rust_name: "vadd",
            module: "KERNELS",
            params: &[],
            names: &[],
        };
        // SAFETY: never loaded.
        let foreign = unsafe { Image::from_static(&[]) };
        let message = check_kernel(&foreign, &DECLARED).unwrap_err();
        assert!(message.as_str().contains("declare it `unsafe kernel`"));
        assert!(fails_with(&foreign, &DECLARED, message.as_str()));
        assert!(!fails_with(&foreign, &DECLARED, "another message"));
        assert!(check_kernel(&Image::unbuilt(&[]), &DECLARED).is_ok());
        assert!(!fails_with(&Image::unbuilt(&[]), &DECLARED, ""));
    }
}
