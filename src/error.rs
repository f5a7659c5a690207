//! Typed errors for malformed input. Every error names the offending field with a path such as
//! `messages[2].metadata.status`, and carries a stable machine code that the wasm binding puts
//! on the thrown JS `Error` as `code`.

use std::fmt;

/// The stable machine codes of [`WireError`]. Callers switch on these, never on the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    /// A value of the wrong JS/JSON type (not an array, not an object, not a string, ...).
    InvalidType,
    /// A value of the right type outside its domain (an unknown `pending_action`, a negative
    /// summary revision, ...).
    InvalidValue,
    /// A revision that is not an object, whose `epoch` is not a string, or whose `sequence` is
    /// not a non-negative integer.
    InvalidRevision,
    /// A revision epoch that is not all decimal digits where a comparison needs its value.
    MalformedEpoch,
    /// A snapshot of another format or version than this build reads.
    UnsupportedVersion,
}

impl ErrorCode {
    /// The code as it appears on the JS error (`err.code`).
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidType => "invalid_type",
            ErrorCode::InvalidValue => "invalid_value",
            ErrorCode::InvalidRevision => "invalid_revision",
            ErrorCode::MalformedEpoch => "malformed_epoch",
            ErrorCode::UnsupportedVersion => "unsupported_version",
        }
    }
}

/// Malformed input: a [`WireErrorKind`], boxed so that a decoder's `Result` carries one word
/// for its error (each `?` of the decoders copies the error it passes on: in the wasm, the boxed
/// error made those copies 1 word instead of 7).
#[derive(Clone, PartialEq, Eq)]
pub struct WireError(Box<WireErrorKind>);

/// What is wrong with the input. `field` is the path of the offending value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireErrorKind {
    InvalidType {
        field: String,
        expected: &'static str,
        got: &'static str,
    },
    InvalidValue {
        field: String,
        problem: String,
    },
    InvalidRevision {
        field: String,
        problem: &'static str,
    },
    MalformedEpoch {
        field: String,
        epoch: String,
    },
    UnsupportedVersion {
        field: String,
        problem: String,
    },
}

/// At most this many bytes (UTF-8) of an offending value are quoted in an error message, so a
/// message stays short whatever the value (10 MB, or 200 four-byte characters).
pub const QUOTE_LIMIT: usize = 200;

/// `text` for an error message: whole up to [`QUOTE_LIMIT`] bytes, else its longest prefix of at
/// most `QUOTE_LIMIT` bytes that ends on a character boundary, and how many characters follow.
pub fn quoted(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= QUOTE_LIMIT {
        return std::borrow::Cow::Borrowed(text);
    }
    let end = (0..=QUOTE_LIMIT)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let (head, rest) = text.split_at(end);
    std::borrow::Cow::Owned(
        [
            head,
            "… (",
            &crate::text::decimal(rest.chars().count() as u64),
            " more characters)",
        ]
        .concat(),
    )
}

impl From<WireErrorKind> for WireError {
    #[cold]
    #[inline(never)]
    fn from(kind: WireErrorKind) -> Self {
        WireError(Box::new(kind))
    }
}

impl fmt::Debug for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl WireError {
    /// What is wrong, with its fields.
    pub fn kind(&self) -> &WireErrorKind {
        &self.0
    }

    /// The message: `messages[2].type: expected a string, got number` (written without
    /// `core::fmt`, which the wasm builds then link none of; `Display` writes the same).
    pub fn message(&self) -> String {
        match &*self.0 {
            WireErrorKind::InvalidType {
                field,
                expected,
                got,
            } => [field.as_str(), ": expected ", expected, ", got ", got].concat(),
            WireErrorKind::InvalidValue { field, problem }
            | WireErrorKind::UnsupportedVersion { field, problem } => {
                [field.as_str(), ": ", problem].concat()
            }
            WireErrorKind::InvalidRevision { field, problem } => {
                [field.as_str(), ": ", problem].concat()
            }
            WireErrorKind::MalformedEpoch { field, epoch } => [
                field.as_str(),
                ": epoch \"",
                epoch,
                "\" is not all decimal digits",
            ]
            .concat(),
        }
    }

    /// The stable machine code of this error.
    pub fn code(&self) -> ErrorCode {
        match &*self.0 {
            WireErrorKind::InvalidType { .. } => ErrorCode::InvalidType,
            WireErrorKind::InvalidValue { .. } => ErrorCode::InvalidValue,
            WireErrorKind::InvalidRevision { .. } => ErrorCode::InvalidRevision,
            WireErrorKind::MalformedEpoch { .. } => ErrorCode::MalformedEpoch,
            WireErrorKind::UnsupportedVersion { .. } => ErrorCode::UnsupportedVersion,
        }
    }

    /// The path of the offending value, e.g. `messages[1].id`.
    pub fn field(&self) -> &str {
        match &*self.0 {
            WireErrorKind::InvalidType { field, .. }
            | WireErrorKind::InvalidValue { field, .. }
            | WireErrorKind::InvalidRevision { field, .. }
            | WireErrorKind::MalformedEpoch { field, .. }
            | WireErrorKind::UnsupportedVersion { field, .. } => field,
        }
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for WireError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_keeps_short_text_and_cuts_long_text_at_a_char_boundary() {
        assert_eq!(quoted("abc"), "abc");
        let exact = "x".repeat(QUOTE_LIMIT);
        assert_eq!(quoted(&exact), exact);
        let long = format!("{}{}", "é".repeat(QUOTE_LIMIT), "x".repeat(10_000_000));
        let q = quoted(&long);
        assert!(q.starts_with(&"é".repeat(QUOTE_LIMIT / 2)), "{q}");
        assert!(q.ends_with("… (10000100 more characters)"), "{q}");
        // Four-byte characters: the cut falls between two of them, within the limit.
        let emoji = "😀".repeat(300);
        let q = quoted(&emoji);
        assert!(q.len() <= QUOTE_LIMIT + 40, "{} bytes", q.len());
        assert!(q.starts_with(&"😀".repeat(QUOTE_LIMIT / 4)));
    }
}
