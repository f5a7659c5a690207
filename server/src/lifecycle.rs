//! Workflow profile-session lifecycle (SPEC §10): a transition between workflow steps that
//! switches agent profiles, and the stop callbacks of the retired execution.
//!
//! [`rules::lifecycle`](task_projection::rules::lifecycle) decides everything: policy
//! normalization, the plan (keep / reuse / create, complete / park), the order of effects and how
//! each failure is handled, the reuse re-check before promotion, and whether a stop callback
//! consumes the stamped intent. The service reads the facts and performs the effects in the planned
//! order: the destination is prepared and promoted before the source is touched; a park persists a
//! durable stop intent `{execution id, unique stamp}` before the source is retired; a matching
//! callback consumes it by compare-and-set on the stamp and leaves a tombstone.

use std::future::Future;
use std::sync::Arc;

use serde_json::json;

use task_projection::rules::lifecycle::{
    normalize_end_policy, normalize_start_policy, plan_transition, recheck_reuse, ActiveSession,
    CallbackHandling, CandidateSession, Destination, Effect, KeepReason, OnFailure, Retirement,
    StopCallback, StopIntent, StopIntentReason, Switch, TransitionPlan,
};
use task_projection::rules::time::Timestamp;

use super::clock::{wire_time, Clock};
use super::error::{Result, ServerError};
use super::events::{Event, EventSink, SESSION_STATE_CHANGED};
use super::storage::{NewSession, SessionRow, StateChange, Storage};

/// A runtime operation failed.
#[derive(Debug, thiserror::Error)]
#[error("runtime error: {0}")]
pub struct RuntimeError(pub String);

/// The agent runtime as the lifecycle sees it.
pub trait Runtime: Send + Sync {
    /// Preflight managed Git credentials and prepare the destination session (`session_id` is
    /// the reused session, or the id the new session will get). Fails before any source mutation.
    fn prepare(
        &self,
        session_id: &str,
        profile: &str,
        created: bool,
    ) -> impl Future<Output = Result<(), RuntimeError>> + Send;
    /// The live execution of a session, if any.
    fn execution_id(&self, session_id: &str) -> Option<String>;
    /// Stops an execution (the stamp travels with the request when the runtime echoes it).
    fn stop(
        &self,
        session_id: &str,
        execution_id: &str,
        stamp: Option<&str>,
    ) -> impl Future<Output = Result<(), RuntimeError>> + Send;
}

/// A workflow transition, with the raw step settings (normalized by the rules).
#[derive(Clone, Debug, Default)]
pub struct TransitionInput<'a> {
    pub task_id: &'a str,
    /// The session active on the source step.
    pub active_session_id: Option<&'a str>,
    /// The destination step's effective profile.
    pub destination_profile: Option<&'a str>,
    /// The destination step's `profile_session_start_policy`.
    pub destination_start_policy: Option<&'a str>,
    /// The source step's `profile_session_end_policy`.
    pub source_end_policy: Option<&'a str>,
}

/// How the source was retired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceOutcome {
    pub session_id: String,
    pub retirement: Retirement,
    /// The stop intent written by a park (`None` for complete, or when nothing was running).
    pub stop_intent: Option<StopIntent>,
    /// The runtime stop failed after the retirement was committed (reported, state kept).
    pub stop_error: Option<String>,
}

/// What a transition did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransitionOutcome {
    /// The current session stays; neither policy applied.
    Kept(KeepReason),
    Switched {
        destination_session_id: String,
        created: bool,
        source: Option<SourceOutcome>,
    },
}

/// The profile-session lifecycle service.
pub struct LifecycleService<R> {
    storage: Storage,
    runtime: Arc<R>,
    clock: Arc<dyn Clock>,
    events: Arc<dyn EventSink>,
}

fn failure(effect: Effect, detail: impl std::fmt::Display) -> ServerError {
    let handling = match effect.on_failure() {
        OnFailure::AbortSourceUntouched => "aborted, source untouched",
        OnFailure::AbortBeforeRetirement => "aborted before retiring the source",
        OnFailure::ReportAndKeep => "reported, committed state kept",
    };
    ServerError::Invalid(format!("{effect:?} failed ({handling}): {detail}"))
}

impl<R: Runtime> LifecycleService<R> {
    pub fn new(
        storage: Storage,
        runtime: Arc<R>,
        clock: Arc<dyn Clock>,
        events: Arc<dyn EventSink>,
    ) -> Self {
        LifecycleService {
            storage,
            runtime,
            clock,
            events,
        }
    }

    fn now(&self) -> String {
        wire_time(self.clock.now())
    }

    /// Runs a transition (SPEC §10).
    pub async fn transition(&self, input: &TransitionInput<'_>) -> Result<TransitionOutcome> {
        let rows = self.storage.sessions_of_task(input.task_id).await?;
        let active_row = match input.active_session_id {
            Some(id) => {
                Some(
                    rows.iter()
                        .find(|r| r.id == id)
                        .ok_or_else(|| ServerError::NotFound {
                            what: "session",
                            id: id.to_owned(),
                        })?,
                )
            }
            None => None,
        };
        let active = active_row.map(|r| ActiveSession {
            id: &r.id,
            profile: Some(r.agent_profile_id.as_str()),
            state: r.state(),
        });
        let stamps: Vec<Timestamp> = rows
            .iter()
            .map(|r| Timestamp::parse(&r.started_at))
            .collect();
        let candidates: Vec<CandidateSession<'_>> = rows
            .iter()
            .zip(&stamps)
            .map(|(r, started)| CandidateSession {
                id: &r.id,
                profile: Some(r.agent_profile_id.as_str()),
                state: r.state(),
                started_at: started,
                created_at: started,
            })
            .collect();
        let start = normalize_start_policy(input.destination_start_policy);
        let end = normalize_end_policy(input.source_end_policy);
        let plan = plan_transition(
            input.destination_profile,
            active.as_ref(),
            &candidates,
            start,
            end,
        );
        let switch = match plan {
            TransitionPlan::Keep(reason) => {
                tracing::info!(
                    task_id = input.task_id,
                    ?reason,
                    "profile transition keeps the session"
                );
                return Ok(TransitionOutcome::Kept(reason));
            }
            TransitionPlan::Switch(switch) => switch,
        };
        tracing::info!(
            task_id = input.task_id,
            start = start.as_str(),
            end = end.as_str(),
            ?switch,
            "profile switch"
        );
        self.execute(input.task_id, active_row, &switch).await
    }

    async fn execute(
        &self,
        task_id: &str,
        source: Option<&SessionRow>,
        switch: &Switch<'_>,
    ) -> Result<TransitionOutcome> {
        let mut destination_id = String::new();
        let mut created = false;
        let mut outcome: Option<SourceOutcome> = None;
        let mut intent: Option<StopIntent> = None;
        for effect in switch.effects() {
            match effect {
                Effect::PrepareDestination => {
                    let destination = match switch.destination {
                        Destination::Reuse(id) => {
                            let fresh = self.storage.session(id).await?;
                            recheck_reuse(id, fresh.state())
                        }
                        Destination::CreateNew => Destination::CreateNew,
                    };
                    let (id, new) = match destination {
                        Destination::Reuse(id) => (id.to_owned(), false),
                        Destination::CreateNew => (uuid::Uuid::new_v4().to_string(), true),
                    };
                    self.runtime
                        .prepare(&id, switch.profile, new)
                        .await
                        .map_err(|e| failure(effect, e))?;
                    if new {
                        let now = self.now();
                        self.storage
                            .insert_session(&NewSession {
                                id: &id,
                                task_id,
                                state: "CREATED",
                                agent_profile_id: switch.profile,
                                is_primary: false,
                                started_at: &now,
                                updated_at: &now,
                            })
                            .await
                            .map_err(|e| failure(effect, e))?;
                    }
                    destination_id = id;
                    created = new;
                }
                Effect::PromoteDestination => {
                    self.storage
                        .set_session_primary(&destination_id, true)
                        .await
                        .map_err(|e| failure(effect, e))?;
                    if let Some(source) = source {
                        self.storage
                            .set_session_primary(&source.id, false)
                            .await
                            .map_err(|e| failure(effect, e))?;
                    }
                }
                Effect::PersistStopIntent => {
                    let Some(source) = source else { continue };
                    if let Some(execution_id) = self.runtime.execution_id(&source.id) {
                        let stamp = uuid::Uuid::new_v4().to_string();
                        self.storage
                            .put_stop_intent(&source.id, &execution_id, &stamp, &self.now())
                            .await
                            .map_err(|e| failure(effect, e))?;
                        intent = Some(StopIntent::new(execution_id, stamp));
                    }
                }
                Effect::MarkSourceCompleted | Effect::MarkSourceWaitingForInput => {
                    let Some(source) = source else { continue };
                    let now = self.now();
                    let (state, completed_at, retirement) = if effect == Effect::MarkSourceCompleted
                    {
                        ("COMPLETED", Some(now.as_str()), Retirement::Complete)
                    } else {
                        ("WAITING_FOR_INPUT", None, Retirement::Park)
                    };
                    self.set_state(task_id, source, state, completed_at, &now)
                        .await?;
                    outcome = Some(SourceOutcome {
                        session_id: source.id.clone(),
                        retirement,
                        stop_intent: intent.clone(),
                        stop_error: None,
                    });
                }
                Effect::StopSourceRuntime => {
                    let Some(source) = source else { continue };
                    let execution_id = intent
                        .as_ref()
                        .map(|i| i.execution_id.clone())
                        .or_else(|| self.runtime.execution_id(&source.id));
                    let Some(execution_id) = execution_id else {
                        continue;
                    };
                    let stamp = intent.as_ref().map(|i| i.stamp.as_str());
                    if let Err(error) = self.runtime.stop(&source.id, &execution_id, stamp).await {
                        tracing::warn!(session_id = %source.id, %error, "source runtime stop failed; intent kept");
                        if let Some(outcome) = outcome.as_mut() {
                            outcome.stop_error = Some(error.to_string());
                        }
                    }
                }
            }
        }
        Ok(TransitionOutcome::Switched {
            destination_session_id: destination_id,
            created,
            source: outcome,
        })
    }

    /// Retires the source by compare-and-set on its version; publishes the state change.
    async fn set_state(
        &self,
        task_id: &str,
        source: &SessionRow,
        state: &str,
        completed_at: Option<&str>,
        now: &str,
    ) -> Result<()> {
        // Re-read: promotion bumped the version.
        let fresh = self.storage.session(&source.id).await?;
        let change = StateChange {
            state,
            updated_at: now,
            completed_at,
            reason: Some("workflow profile switch"),
        };
        if !self
            .storage
            .cas_session_state(&fresh.id, fresh.version, &change)
            .await?
        {
            return Err(ServerError::Invalid(format!(
                "session {} changed during the profile switch",
                fresh.id
            )));
        }
        let event = Event {
            name: SESSION_STATE_CHANGED,
            payload: json!({
                "session_id": fresh.id,
                "task_id": task_id,
                "state": state,
                "previous_state": fresh.state_text,
                "reason": "workflow profile switch",
                "updated_at": now,
            }),
        };
        if let Err(error) = self.events.publish(event) {
            tracing::warn!(session_id = %fresh.id, %error, "state change publication failed");
        }
        Ok(())
    }

    /// A stop/completion callback of `execution_id` on `session_id`. Returns how to handle it:
    /// a suppressing result means skip turn completion, transition evaluation and task-state
    /// reconciliation.
    pub async fn on_stop_callback(
        &self,
        session_id: &str,
        execution_id: &str,
        stamp: &str,
    ) -> Result<(CallbackHandling, StopIntentReason)> {
        // A lost compare-and-set means another callback consumed it: decide again.
        for _ in 0..3 {
            let intent = self
                .storage
                .stop_intent(session_id)
                .await?
                .map(|row| StopIntent {
                    execution_id: row.execution_id,
                    stamp: row.stamp,
                    consumed: row.consumed,
                });
            let callback = StopCallback {
                execution_id,
                stamp,
            };
            let (handling, reason) = task_projection::rules::lifecycle::stop_callback_handling(
                intent.as_ref(),
                &callback,
            );
            if handling != CallbackHandling::ConsumeAndSuppress {
                if handling.suppresses() {
                    tracing::info!(
                        session_id,
                        execution_id,
                        stamp,
                        "stop callback suppressed (tombstone)"
                    );
                }
                return Ok((handling, reason));
            }
            if self
                .storage
                .consume_stop_intent(session_id, execution_id, stamp, &self.now())
                .await?
            {
                tracing::info!(
                    session_id,
                    execution_id,
                    stamp,
                    "stop intent consumed; callback suppressed"
                );
                return Ok((handling, reason));
            }
        }
        Err(ServerError::Invalid(format!(
            "stop intent of session {session_id} kept changing"
        )))
    }
}
