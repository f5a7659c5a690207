//! Typed errors for malformed input. Every error names the offending field with a path such as
//! `messages[2].metadata.status`, and carries a stable machine code that the wasm binding puts
//! on the thrown JS `Error` as `code`.

use thiserror::Error;

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
}

impl ErrorCode {
    /// The code as it appears on the JS error (`err.code`).
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidType => "invalid_type",
            ErrorCode::InvalidValue => "invalid_value",
            ErrorCode::InvalidRevision => "invalid_revision",
            ErrorCode::MalformedEpoch => "malformed_epoch",
        }
    }
}

/// Malformed input. `field` is the path of the offending value.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum WireError {
    #[error("{field}: expected {expected}, got {got}")]
    InvalidType {
        field: String,
        expected: &'static str,
        got: &'static str,
    },
    #[error("{field}: {problem}")]
    InvalidValue { field: String, problem: String },
    #[error("{field}: {problem}")]
    InvalidRevision {
        field: String,
        problem: &'static str,
    },
    #[error("{field}: epoch \"{epoch}\" is not all decimal digits")]
    MalformedEpoch { field: String, epoch: String },
}

impl WireError {
    /// The stable machine code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            WireError::InvalidType { .. } => ErrorCode::InvalidType,
            WireError::InvalidValue { .. } => ErrorCode::InvalidValue,
            WireError::InvalidRevision { .. } => ErrorCode::InvalidRevision,
            WireError::MalformedEpoch { .. } => ErrorCode::MalformedEpoch,
        }
    }

    /// The path of the offending value, e.g. `messages[1].id`.
    pub fn field(&self) -> &str {
        match self {
            WireError::InvalidType { field, .. }
            | WireError::InvalidValue { field, .. }
            | WireError::InvalidRevision { field, .. }
            | WireError::MalformedEpoch { field, .. } => field,
        }
    }
}
