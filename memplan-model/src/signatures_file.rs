//! The file `memplan-build` writes beside a crate's images, with their
//! kernels' signatures, for `memplan!` to read: its name, and the seal
//! that tells the macro the text is `memplan-build`'s, byte for byte.
//!
//! The text is Rust syntax, which the macro parses with syn; inside a proc
//! macro syn hands it to rustc's lexer, so text that is not valid tokens
//! would be rustc's error at the macro's call. The macro reads only a
//! sealed text, and `memplan-build` writes only valid tokens.

/// The file's name in `OUT_DIR`.
pub const FILE: &str = "memplan_kernels.signatures";

/// The first line of the file, up to the seal: the hash of the lines below.
const HEADER: &str =
    "// memplan-build: the signatures of this crate's kernels; FNV-1a 64 of the lines below: ";

/// `body` behind a first line that seals it.
pub fn seal(body: &str) -> String {
    format!("{HEADER}{:016x}\n{body}", fnv1a(body))
}

/// The body of a sealed `text`; `None` where the seal does not hold.
pub fn unsealed(text: &str) -> Option<&str> {
    let (header, body) = text.split_once('\n')?;
    let seal = u64::from_str_radix(header.strip_prefix(HEADER)?, 16).ok()?;
    (seal == fnv1a(body)).then_some(body)
}

/// FNV-1a, 64 bits.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_was_sealed_is_unsealed() {
        let sealed = seal("[(\"A\", &[])]\n");
        assert_eq!(unsealed(&sealed), Some("[(\"A\", &[])]\n"));
        assert_eq!(unsealed(&sealed.replace("\"A\"", "\"B\"")), None);
        assert_eq!(unsealed(&sealed[1..]), None);
        assert_eq!(unsealed("[(\"A\", &[])]\n"), None);
        assert_eq!(unsealed(""), None);
    }
}
