//! [`SimAgent`], the simulated agent's runtime (see [`sim`](super::sim)): the waiters, resumes
//! and executions the services ask about, and the continuations a respond records. Deterministic,
//! in memory, lost on a (simulated) restart. [`app`](super::app) holds it; the simulator's writes
//! and routes use it. A leaf: it imports no module of `http`.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::Value;

use crate::respond::{DeliveryError, ResponseInput, ResumeRequest, Resumer, WaiterRegistry};
use crate::stall::ExecutionRegistry;
use task_projection::rules::respond::{Response as ResponseKind, ResumeReport};
use task_projection::rules::stall::Execution;

/// How a detached session's next resumes answer (`detach` body `resume`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ResumeMode {
    /// Acknowledged and published: the answer succeeds.
    #[default]
    Accepted,
    /// Known not accepted, rolled back: retryable error, the bundle is restored.
    NotAccepted,
    /// No answer within the attempt: non-retryable error, the bundle stays terminal.
    Ambiguous,
}

impl ResumeMode {
    /// The `detach` body's `resume`: `accepted`, `not_accepted` or `ambiguous`.
    pub fn parse(text: &str) -> Option<ResumeMode> {
        match text {
            "accepted" => Some(ResumeMode::Accepted),
            "not_accepted" => Some(ResumeMode::NotAccepted),
            "ambiguous" => Some(ResumeMode::Ambiguous),
            _ => None,
        }
    }
}

/// What the agent does after a successful response.
#[derive(Clone, Debug, PartialEq)]
pub struct Continuation {
    pub session_id: String,
    pub pending_id: String,
    /// A detached answer resumed the session (a successor turn), rather than a live waiter.
    pub resumed: bool,
    pub kind: ResponseKind,
    pub payload: Value,
}

#[derive(Debug, Default)]
struct AgentState {
    /// pending id → session id.
    waiters: HashMap<String, String>,
    /// Sessions with a live execution.
    attached: HashSet<String>,
    resume: HashMap<String, ResumeMode>,
    continuations: HashMap<String, Continuation>,
}

/// The in-memory simulated agent. See the [`sim`](super) module docs.
#[derive(Debug, Default)]
pub struct SimAgent {
    state: Mutex<AgentState>,
    /// One `reset` at a time (two at once would seed the demo twice).
    resetting: tokio::sync::Mutex<()>,
}

impl SimAgent {
    fn lock(&self) -> MutexGuard<'_, AgentState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The agent runs the session (a live execution).
    pub fn attach(&self, session_id: &str) {
        self.lock().attached.insert(session_id.to_owned());
    }

    /// Registers a live waiter for a bundle (the agent blocks on its clarification tool call).
    pub fn add_waiter(&self, pending_id: &str, session_id: &str) {
        let mut state = self.lock();
        state
            .waiters
            .insert(pending_id.to_owned(), session_id.to_owned());
        state.attached.insert(session_id.to_owned());
    }

    /// The agent leaves the session: its waiters and its execution are gone.
    pub fn detach(&self, session_id: &str) {
        let mut state = self.lock();
        state.waiters.retain(|_, session| session != session_id);
        state.attached.remove(session_id);
    }

    /// The session is gone (its task was deleted): the agent forgets everything about it.
    pub fn forget(&self, session_id: &str) {
        let mut state = self.lock();
        state.waiters.retain(|_, session| session != session_id);
        state.attached.remove(session_id);
        state.resume.remove(session_id);
        state
            .continuations
            .retain(|_, c| c.session_id != session_id);
    }

    /// How the session's next resumes answer.
    pub fn set_resume_mode(&self, session_id: &str, mode: ResumeMode) {
        self.lock().resume.insert(session_id.to_owned(), mode);
    }

    /// A restart: every waiter, execution and pending continuation is lost.
    pub fn restart(&self) {
        let mut state = self.lock();
        state.waiters.clear();
        state.attached.clear();
        state.continuations.clear();
    }

    /// The continuation a respond recorded for a bundle, if any.
    pub fn take_continuation(&self, pending_id: &str) -> Option<Continuation> {
        self.lock().continuations.remove(pending_id)
    }

    /// Held for a whole `reset` (one at a time: two at once would seed the demo twice).
    pub async fn reset_lock(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.resetting.lock().await
    }
}

impl WaiterRegistry for SimAgent {
    fn has_waiter(&self, pending_id: &str) -> bool {
        self.lock().waiters.contains_key(pending_id)
    }

    async fn deliver(
        &self,
        pending_id: &str,
        response: &ResponseInput,
    ) -> Result<(), DeliveryError> {
        let mut state = self.lock();
        let Some(session_id) = state.waiters.remove(pending_id) else {
            return Err(DeliveryError(format!("no waiter for {pending_id}")));
        };
        state.continuations.insert(
            pending_id.to_owned(),
            Continuation {
                session_id,
                pending_id: pending_id.to_owned(),
                resumed: false,
                kind: response.kind,
                payload: response.payload.clone(),
            },
        );
        Ok(())
    }
}

impl Resumer for SimAgent {
    async fn resume(&self, request: &ResumeRequest) -> ResumeReport {
        let mut state = self.lock();
        let mode = state
            .resume
            .get(&request.session_id)
            .copied()
            .unwrap_or_default();
        match mode {
            ResumeMode::Accepted => {
                state.attached.insert(request.session_id.clone());
                state.continuations.insert(
                    request.pending_id.clone(),
                    Continuation {
                        session_id: request.session_id.clone(),
                        pending_id: request.pending_id.clone(),
                        resumed: true,
                        kind: ResponseKind::Answer,
                        payload: request.answer.clone(),
                    },
                );
                ResumeReport::AcceptedAndPublished
            }
            ResumeMode::NotAccepted => ResumeReport::NotAccepted {
                rollback_succeeded: true,
            },
            ResumeMode::Ambiguous => ResumeReport::Ambiguous,
        }
    }
}

impl ExecutionRegistry for SimAgent {
    fn execution(&self, session_id: &str) -> Execution {
        if self.lock().attached.contains(session_id) {
            Execution::Live
        } else {
            Execution::Absent
        }
    }
}
