//! Placeholder: written by the server-rules work (issue 4).
