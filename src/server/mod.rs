//! Server-side storage and services (feature `server`): authoritative projection, durable
//! revisions, summary repair, clarification respond, stall detection and profile-session
//! lifecycle. Native only; the wasm build compiles none of it.
//!
//! The server decides with the very functions in [`crate::rules`]: storage reads rows (and may
//! prefilter them), the services gather facts and call the rule functions, then perform the
//! writes the rules ask for. No rule is restated in SQL or here.
//!
//! | module | what | SPEC |
//! |---|---|---|
//! | [`db`] | sqlx Any pool (SQLite default, PostgreSQL), embedded versioned migrations | — |
//! | [`storage`] | typed rows; rows implement the rule views | §1 |
//! | [`revision`] | durable epoch, sequence reserved before each read | §5 |
//! | [`projection`] | per-session/per-task action, message-event projection | §2, §4 |
//! | [`summary`] | summary repair by compare-and-set, invalidation marker | §7 |
//! | [`respond`] | clarification respond: claim with a durable intent, finalize/restore, startup reconciliation | §8 |
//! | [`stall`] | stall sweep, episodes, orphan healing by compare-and-set | §9 |
//! | [`lifecycle`] | profile switch (keep/reuse/new, complete/park), stamped stop intents | §10 |
//! | [`events`] | event names, `EventSink`, in-memory broadcast sink | — |
//! | [`outbox`] | PostgreSQL: the event outbox (offsets, `LISTEN`/`NOTIFY` fan-out to every instance, resume, retention) | — |
//! | [`clock`] | injectable wall clock, wire timestamps | — |
//! | [`http`] | the reference server: REST, WebSocket hub, simulator, demo seeding (docs/server-api.md) | §1 |
//!
//! Wiring, in startup order:
//!
//! ```no_run
//! # async fn start() -> task_projection::server::Result<()> {
//! use std::sync::Arc;
//! use task_projection::server::{clock::SystemClock, events::BroadcastSink, Db};
//! use task_projection::server::{projection::Projector, revision::RevisionClock, storage::Storage};
//! use task_projection::server::summary::SummaryRepair;
//!
//! let db = Db::connect("sqlite://tasks.db?mode=rwc").await?; // or postgres://…; runs migrations
//! let clock = RevisionClock::start(db.clone()).await?;        // allocates this start's epoch
//! let projector = Projector::new(Storage::new(db.clone()), clock);
//! let events = Arc::new(BroadcastSink::default());
//! let summaries = SummaryRepair::new(projector.clone(), events.clone(), Arc::new(SystemClock));
//! // RespondService::new(…).reconcile_intents() before serving; StallService::sweep() on a timer.
//! let task = summaries.task_answer("task-1").await?;          // task-list / boot answer
//! # let _ = task; Ok(()) }
//! ```
//!
//! Portability: one SQL text for both backends through sqlx's `Any` driver (`$n` parameters,
//! `TEXT`/`BIGINT`, `INSERT … ON CONFLICT`, `UPDATE … RETURNING`, no JSON operators: JSON is
//! stored as text and read by the wire decoder). Multi-statement writes start with a write, so a
//! SQLite transaction takes the write lock before it reads and cannot deadlock on lock upgrade;
//! read snapshots are a read transaction (REPEATABLE READ on PostgreSQL).
//!
//! # Revisions across several instances
//!
//! A naive per-instance epoch breaks a client that talks to two instances: the instance with the
//! lower epoch would see every projection rejected. Here the revision clock is **one database
//! row** (`meta.projection_epoch`: the epoch text and a sequence counter) shared by all instances:
//!
//! * each start advances the shared epoch with `rules::revision::next_epoch` (compare-and-set on
//!   the old text, retried when two instances start together) and resets the sequence;
//! * each reservation is one atomic `UPDATE … SET counter = counter + 1 RETURNING value,
//!   counter`, made before the authoritative read it labels.
//!
//! The row lock serializes reservations, so the `(epoch, sequence)` pairs handed out by all
//! instances form one strictly increasing sequence; an instance that started earlier picks up a
//! newer epoch as soon as another instance restarts. The cost is one single-row write per
//! projection, the price of a total order without clock assumptions (blocks of sequences per
//! instance would not be ordered across instances). With one instance the behaviour is exactly
//! SPEC §5's "epoch per start, process-wide sequence".

pub mod clock;
pub mod db;
pub mod error;
pub mod events;
pub mod http;
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
