//! The simulated agent and the simulator API (`--simulator`, docs/server-api.md), in three
//! modules, each importing only the ones before it:
//!
//! | module | what | imports of `http` |
//! |---|---|---|
//! | [`agent`] | [`SimAgent`], this process's agent runtime: waiters, resumes, executions | none |
//! | [`actions`] | the simulator's writes (tasks, sessions, turns, messages, questions, detach) and the events they publish | `error`, `wire`, `app` |
//! | [`routes`] | the simulator API under `/api/dev/sim/` | `error`, `wire`, `hub`, `app`, `seed`, `agent`, `actions` |
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
//! ([`actions::continue_after_response`]): a live waiter continues the bundle's turn (an agent
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
//! data again, [`seed::reset`](super::seed::reset)) exist for it.
//!
//! This file only declares the three modules (no item, no re-export), so that none of them
//! reaches another through it.
//!
//! [`SimAgent`]: agent::SimAgent
//! [`WaiterRegistry`]: crate::respond::WaiterRegistry
//! [`Resumer`]: crate::respond::Resumer
//! [`ExecutionRegistry`]: crate::stall::ExecutionRegistry
//! [`Storage`]: crate::storage::Storage
//! [`Projector`]: crate::projection::Projector

pub mod actions;
pub mod agent;
pub mod routes;
