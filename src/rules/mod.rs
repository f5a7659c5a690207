//! The rules of SPEC.md as pure functions over plain data, one module per rule family. Nothing
//! here knows about JavaScript, JSON or storage; this is the only place decisions are made.
//!
//! | module | SPEC |
//! |---|---|
//! | [`action`] | §13 the user's actions: respond starts and replies, settlements, what the user may do |
//! | [`time`] | §2 timestamp order |
//! | [`turn`] | §2 current-turn authority, visible turn history |
//! | [`clarification`] | §3 scope, pending request, bundle, transcript, permission |
//! | [`pending`] | §4 authoritative session/task pending action |
//! | [`revision`] | §5 revision comparison and projection merge |
//! | [`order`] | §5–§7 the order of the store's inputs: staleness, list merges, tombstones |
//! | [`owner`] | §6 pending-owner resolution and selection settle |
//! | [`summary`] | §7 status-summary merging |
//! | `respond` | §8 clarification bundle states and respond outcomes (feature `server`) |
//! | `inbox` | §3, §4 the reference server's "needs you" inbox: rows, order, page, sidecar (feature `server`) |
//! | `stall` | §9 stall detection and orphan healing (feature `server`) |
//! | [`lifecycle`] | §10 workflow profile-session lifecycle |
//! | [`knowledge`] | §11 what the client knows: which inputs make each answer known |
//! | [`workspace`] | §14 the workspace's "needs you" inbox on the client: which page is held, where each row comes from, whether it is known |
//! | [`connection`] | docs/server-api.md: what a connection's `server.hello` means for held state |

pub mod action;
pub mod clarification;
pub mod connection;
#[cfg(feature = "server")]
pub mod inbox;
pub mod knowledge;
pub mod lifecycle;
pub mod model;
pub mod order;
pub mod owner;
pub mod pending;
#[cfg(feature = "server")]
pub mod respond;
pub mod revision;
#[cfg(feature = "server")]
pub mod stall;
pub mod summary;
pub mod time;
pub mod turn;
pub mod workspace;
