//! The simulated agent's writes, the demo data and the simulator API (`--simulator`,
//! docs/server-api.md), in five modules, each importing only the ones before it. The agent's
//! runtime, [`SimAgent`], is not here: [`app`](super::app) holds it, so it is a module of `http`
//! ([`agent`](super::agent)) that `app` imports and this directory's modules use.
//!
//! | module | what | imports of `http` |
//! |---|---|---|
//! | [`sessions`] | tasks (create, delete) and sessions (create, state changes), the liveness check, the summary repair | `error`, `wire`, `app` |
//! | [`turns`] | the current turn, turns (start, complete) and the messages written into a turn | `error`, `app`, `sessions` |
//! | [`questions`] | clarifications and permissions (ask, resolve), `detach`, the continuation after a response | `error`, `agent`, `app`, `sessions`, `turns` |
//! | [`seed`] | the demo tasks of `--seed-demo`, and the simulator's `reset` | `error`, `config`, `app`, `sessions`, `turns`, `questions` |
//! | [`routes`] | the simulator API under `/api/dev/sim/` | `error`, `wire`, `hub`, `agent`, `app`, `sessions`, `turns`, `questions`, `seed` |
//!
//! [`SimAgent`] is deterministic and in memory:
//!
//! * **waiters** ([`WaiterRegistry`]): a live clarification registers a waiter before its rows
//!   are written; `deliver` takes the response and records a continuation;
//! * **resumes** ([`Resumer`]): a detached answer's resume is acknowledged (or refused, per the
//!   session's `resume` mode set by `detach`) and records a continuation;
//! * **executions** ([`ExecutionRegistry`]): a session has a live execution while the agent is
//!   attached to it (created active, a turn started, a live question asked); `detach`, a
//!   terminal state and a restart end it.
//!
//! After a successful respond, the continuation runs
//! ([`questions::continue_after_response`]): a live waiter continues the bundle's turn (an agent
//! message, the turn completes, the session goes `IDLE`); a resumed session gets a successor
//! turn that does the same.
//!
//! Every simulator call writes through [`Storage`] and publishes the events a real agent would
//! cause: `session.message.*` with the session's projection (built by the [`Projector`]),
//! `turn.*`, `session.created`, `session.state_changed` (with projection keys), `task.updated`,
//! `task.deleted`, and a summary repair after each change (`task.status_summary.updated` when
//! the task's action moved). Their names are in [`crate::events`].
//!
//! The demo page plays every scenario through these routes (its "Play the agent" panel, shown
//! when `GET /api/dev/sim` answers): asking in an open turn (`open_turn`), a new turn after the
//! open ones (`close_open`), resolving a session's pending permission, and `reset` (the demo
//! data again, [`seed::reset`]) exist for it.
//!
//! This file only declares the five modules (no item, no re-export), so that none of them
//! reaches another through it.
//!
//! [`SimAgent`]: super::agent::SimAgent
//! [`WaiterRegistry`]: crate::respond::WaiterRegistry
//! [`Resumer`]: crate::respond::Resumer
//! [`ExecutionRegistry`]: crate::stall::ExecutionRegistry
//! [`Storage`]: crate::storage::Storage
//! [`Projector`]: crate::projection::Projector

pub mod questions;
pub mod routes;
pub mod seed;
pub mod sessions;
pub mod turns;
