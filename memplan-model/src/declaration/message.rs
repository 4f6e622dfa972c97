//! Text built in constant evaluation, where `format!` is not available:
//! the messages of declaration checks, which rustc shows as compile errors.

/// A message appended into a fixed buffer (cut at its end, on a character).
#[derive(Clone, Copy)]
pub struct Message {
    bytes: [u8; Message::CAPACITY],
    len: usize,
}

impl Message {
    pub(crate) const CAPACITY: usize = 2048;

    /// An empty message.
    pub const fn new() -> Message {
        Message {
            bytes: [0; Message::CAPACITY],
            len: 0,
        }
    }

    /// `text` appended, as far as it fits; never splits a character.
    pub const fn push(mut self, text: &str) -> Message {
        let text = text.as_bytes();
        let mut index = 0;
        while index < text.len() && self.len < Message::CAPACITY {
            self.bytes[self.len] = text[index];
            self.len += 1;
            index += 1;
        }
        // Cut short: back off a character cut in two.
        if index < text.len() {
            while self.len > 0 && core::str::from_utf8(self.bytes.split_at(self.len).0).is_err() {
                self.len -= 1;
            }
        }
        self
    }

    /// `3 parameters`, `1 parameter`.
    pub(crate) const fn push_count(self, count: usize) -> Message {
        let message = self.push_number(count as u64);
        if count == 1 {
            message.push(" parameter")
        } else {
            message.push(" parameters")
        }
    }

    /// `value` in decimal digits.
    pub(crate) const fn push_number(mut self, mut value: u64) -> Message {
        let mut digits = [0u8; 20];
        let mut len = 0;
        loop {
            digits[digits.len() - 1 - len] = b'0' + (value % 10) as u8;
            len += 1;
            value /= 10;
            if value == 0 {
                break;
            }
        }
        let mut index = digits.len() - len;
        while index < digits.len() && self.len < Message::CAPACITY {
            self.bytes[self.len] = digits[index];
            self.len += 1;
            index += 1;
        }
        self
    }

    /// The message so far.
    pub const fn as_str(&self) -> &str {
        match core::str::from_utf8(self.bytes.split_at(self.len).0) {
            Ok(text) => text,
            Err(_) => "",
        }
    }
}

impl Default for Message {
    fn default() -> Self {
        Message::new()
    }
}

impl core::fmt::Debug for Message {
    fn fmt(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `a == b`, in constant evaluation.
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        if a[index] != b[index] {
            return false;
        }
        index += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_stop_at_their_capacity_on_a_character() {
        let long = "é".repeat(2 * Message::CAPACITY);
        let message = Message::new().push(&long);
        assert!(message.as_str().len() <= Message::CAPACITY);
        assert!(message.as_str().chars().all(|c| c == 'é'));
        assert_eq!(Message::new().push_count(1).as_str(), "1 parameter");
        assert_eq!(Message::new().push_number(1024).as_str(), "1024");
        assert_eq!(
            Message::new().push_number(u64::MAX).as_str(),
            "18446744073709551615"
        );
    }
}
