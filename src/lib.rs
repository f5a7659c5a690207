//! # task-projection
//!
//! Decides what a user must see about their AI-agent tasks while REST snapshots and WebSocket
//! events arrive late, twice or out of order. The rules of `SPEC.md` live in [`rules`] as pure
//! functions over plain data, one module per rule family; [`wire`] validates the backend's JSON
//! shapes (from `serde_json` natively, from the tape `js/read.js` writes in the wasm binding) into
//! rule types.
//!
//! * `rules` — no I/O, no JS, no allocation of wire objects: the only place decisions are made.
//! * `wire` — translation of wire objects into rule types, with typed errors naming the field.
//! * `wasm` — the wasm-bindgen binding (wasm32 only): translation, no rule logic.
//!
//! The reference server (storage, services, HTTP/WebSocket) is the workspace crate
//! `task-projection-server` (server/). It builds on feature `server`, which adds the rule modules
//! only the server uses (`rules::respond`, `rules::stall`, `rules::inbox`) and pulls in no
//! dependency.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]

pub mod error;
pub(crate) mod hash;
pub(crate) mod json;
pub mod rules;
mod sort;
pub mod store;
pub(crate) mod text;
/// Traces (docs/trace-format.md): native only. The package records in JS (`js/trace.js`), so the
/// wasm carries none of it; this is the native API and the reference the JS recorder is checked
/// against (`tests/js/trace.test.mjs`).
#[cfg(not(target_arch = "wasm32"))]
pub mod trace;
pub mod wire;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use error::{ErrorCode, WireError, WireErrorKind};
