//! The reference server of `task-projection` (this workspace crate, `task-projection-server`):
//! server-side storage and services (authoritative projection, durable revisions, summary repair,
//! clarification respond, stall detection and profile-session lifecycle) and the HTTP/WebSocket
//! adapter. Native only; the wasm package compiles none of it. It is built on the root crate's
//! feature `server`, which adds the rules only the server uses and no dependency.
//!
//! The server decides with the very functions in [`task_projection::rules`]: storage reads rows
//! (and may prefilter them), the services gather facts and call the rule functions, then perform
//! the writes the rules ask for. No rule is restated in SQL or here.
//!
//! | module | what | SPEC |
//! |---|---|---|
//! | [`db`] | SQLite (one `rusqlite` connection, called on the task) or PostgreSQL (typed sqlx connections in a `bb8` pool, `db/pg.rs`); `query`/`query_scalar` with `$n` arguments for both; embedded versioned migrations (sqlx's migrator on PostgreSQL, `rusqlite_migration` on SQLite) | — |
//! | [`storage`] | typed rows; rows implement the rule views; [`storage::connect`]: a database migrated and backfilled for the services | §1 |
//! | [`revision`] | durable epoch, sequence reserved before each read | §5 |
//! | [`projection`] | per-session/per-task action, message-event projection | §2, §4 |
//! | [`summary`] | summary repair by compare-and-set, invalidation marker | §7 |
//! | [`respond`] | clarification respond: claim with a durable intent, finalize/restore, startup reconciliation | §8 |
//! | [`stall`] | stall sweep, episodes, orphan healing by compare-and-set | §9 |
//! | [`lifecycle`] | profile switch (keep/reuse/new, complete/park), stamped stop intents | §10 |
//! | [`events`] | every WebSocket event name (the services', the simulator's, `server.hello`), `EventSink`, in-memory broadcast sink | — |
//! | [`outbox`] | PostgreSQL: the event outbox (offsets, `LISTEN`/`NOTIFY` fan-out to every instance, resume, retention) | — |
//! | [`inbox`] | the needs-you inbox: a workspace's live bundles, the requester's sidecar, its pages | §3, §4 |
//! | [`clock`] | injectable wall clock, wire timestamps | — |
//! | [`http`] | the reference server: REST, WebSocket hub, simulator, demo seeding (docs/server-api.md) | §1 |
//!
//! Wiring, in startup order:
//!
//! ```no_run
//! # async fn start() -> task_projection_server::Result<()> {
//! use std::sync::Arc;
//! use task_projection_server::{clock::SystemClock, events::BroadcastSink};
//! use task_projection_server::{projection::Projector, revision::RevisionClock, storage};
//! use task_projection_server::{storage::Storage, summary::SummaryRepair};
//!
//! // sqlite://… or postgres://…; runs the migrations and fills turns' order keys (Db::connect
//! // alone only migrates)
//! let db = storage::connect("sqlite://tasks.db?mode=rwc").await?;
//! let clock = RevisionClock::start(db.clone()).await?;        // allocates this start's epoch
//! let projector = Projector::new(Storage::new(db.clone()), clock);
//! let events = Arc::new(BroadcastSink::default());
//! let summaries = SummaryRepair::new(projector.clone(), events.clone(), Arc::new(SystemClock));
//! // RespondService::new(…).reconcile_intents() before serving; StallService::sweep() on a timer.
//! let task = summaries.task_answer("task-1").await?;          // task-list / boot answer
//! # let _ = task; Ok(()) }
//! ```
//!
//! Portability: one SQL text for both backends through [`db::query`] (`$n` parameters,
//! `TEXT`/`BIGINT`, `INSERT … ON CONFLICT`, `UPDATE … RETURNING`, no JSON operators: JSON is
//! stored as text and read by the wire decoder). Multi-statement writes start with a write, so a
//! SQLite transaction takes the write lock before it reads and cannot deadlock on lock upgrade;
//! read snapshots are a read transaction (REPEATABLE READ on PostgreSQL).
//!
//! # Several instances on one database
//!
//! Any number of instances may share one PostgreSQL database (SQLite: one instance).
//!
//! **Revisions** (SPEC §5: strictly increasing per session across instances and restarts,
//! reserved before the authoritative read). A naive per-instance epoch breaks a client that talks
//! to two instances: the instance with the lower epoch would see every projection rejected. So
//! the epoch is shared (`meta.projection_epoch`, advanced at each start by
//! `rules::revision::next_epoch`, compare-and-set), and the sequence is shared too, without a row
//! written per projection: on PostgreSQL a database `SEQUENCE`, read together with the epoch under
//! a *shared* advisory lock that an epoch change takes *exclusively* until it commits. Shared
//! locks never wait for each other and `nextval` is not transactional, so the reservations of
//! every instance run in parallel, yet every reservation that starts after another returned gets
//! a greater pair: same phase between two epoch changes → same epoch, greater sequence; a later
//! phase → a greater epoch. A database restart (which could hand out a sequence value again) is
//! detected by the server start time recorded with the epoch and advances the epoch first. The
//! whole argument is in [`revision`]. On SQLite, one writer at a time: the sequence is the
//! epoch row's counter, one short WAL append per reservation.
//!
//! *Reserved before the read* is about snapshots, not statement order: one statement reads the
//! snapshot taken when it starts, so a reservation made inside the reading statement (or inside
//! the write before it, before that write commits) would come after the snapshot, and a write
//! committed in between could be missed by a read labelled newer than that write's own
//! projection. The reservation is therefore a statement of its own, after the write committed
//! and before the read. (A PL/pgSQL function that reserved in its first statement and read in a
//! later one, with a new snapshot under READ COMMITTED, made it one round trip; measured on
//! 2026-12-04 it cost as much CPU per event as the two statements, so it was not kept.)
//!
//! **Events** fan out through the database itself ([`outbox`]): every instance inserts what it
//! publishes into `event_outbox` (offset = the row id), `NOTIFY` wakes every instance, each reads
//! the new rows in offset order and sends them to its sockets. A client on any instance sees
//! every event in one order and can resume on any instance from its last offset
//! (docs/server-api.md, "Several instances").

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

pub mod clock;
pub mod db;
pub mod error;
pub mod events;
pub mod http;
pub mod inbox;
pub mod lifecycle;
pub mod outbox;
pub mod projection;
pub mod respond;
pub mod revision;
pub mod stall;
pub mod storage;
pub mod summary;

pub use db::{Backend, Db};
pub use error::{Result, ServerError};
