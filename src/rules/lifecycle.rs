//! Workflow profile-session lifecycle (SPEC §10): policy normalization.

/// `profile_session_start_policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartPolicy {
    Reuse,
    New,
}

/// `profile_session_end_policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndPolicy {
    Complete,
    Park,
}

impl StartPolicy {
    pub const fn as_str(self) -> &'static str {
        match self {
            StartPolicy::Reuse => "reuse",
            StartPolicy::New => "new",
        }
    }
}

impl EndPolicy {
    pub const fn as_str(self) -> &'static str {
        match self {
            EndPolicy::Complete => "complete",
            EndPolicy::Park => "park",
        }
    }
}

/// Trimmed `new` → new; anything else (including a non-string, `None`) → reuse.
pub fn normalize_start_policy(value: Option<&str>) -> StartPolicy {
    match value.map(str::trim) {
        Some("new") => StartPolicy::New,
        _ => StartPolicy::Reuse,
    }
}

/// Trimmed `park` → park; anything else → complete.
pub fn normalize_end_policy(value: Option<&str>) -> EndPolicy {
    match value.map(str::trim) {
        Some("park") => EndPolicy::Park,
        _ => EndPolicy::Complete,
    }
}
