//! Server-side rules and adapters (feature `server`): authoritative projection, durable epoch
//! allocation, summary repair, clarification respond outcomes, stall detection and profile-session
//! lifecycle. Native only; the wasm build compiles none of it.
//!
//! The server decides with the very functions in [`crate::rules`]; this module will only add
//! storage and services around them.
