//! Clarification respond (SPEC §8): classify the bundle, claim it with a durable delivery intent,
//! hand it off, finalize or restore, and reconcile outstanding intents at startup.
//!
//! Every decision is a [`task_projection::rules::respond`] function:
//! [`observe_bundle_with`](task_projection::rules::respond::observe_bundle_with) and
//! [`classify_bundle`] place the bundle, [`respond_plan`] picks the plan, [`live_delivery_failed`]
//! and [`detached_resume_outcome`] resolve failures, [`reconcile_delivery_intent`] drives startup
//! recovery. This module only gathers the facts and performs the writes the plans name.
//!
//! The facts come from a [`BundleSnapshot`]: the session, its turns, which of them messages
//! reference, and the bundle's own rows (by the indexed `pending_id`), never the transcript, so a
//! respond costs the same in a session of ten messages or ten thousand. `observe_bundle_with` over
//! that read equals `observe_bundle` over the whole transcript (server/tests/server_projection.rs).
//!
//! The claim is one transaction that starts with a write: insert the intent (`ON CONFLICT DO
//! NOTHING`, so of two racing responses exactly one inserts), re-read the bundle, re-classify it
//! and compare-and-set every pending row on its version. Anything unexpected rolls the whole
//! claim back and answers conflict: the loser writes nothing.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use task_projection::rules::model::MessageRecord;
use task_projection::rules::respond::{
    check_answers, classify_bundle, detached_resume_outcome, live_delivery_failed,
    reconcile_delivery_intent, respond_plan, AnswerProblem, BundleFacts, BundleObservation,
    BundleState, ClaimAfter, Handoff, IntentReason, IntentRecovery, PriorActive, Resolution,
    ResolutionReason, RespondPlan, RespondReply, Response, ResumeReport, MAX_ANSWER_BYTES,
};
use task_projection::wire::{self, Json, Wire};

use super::clock::{wire_time, Clock};
use super::db::query;
use super::error::{Result, ServerError};
use super::events::EventSink;
use super::projection::{
    bundle_snapshot_on, load_bundle_snapshot, BundleSnapshot, MessageEventKind, Projector,
};
use super::storage::{cas_message_metadata_on, insert_intent_on, IntentRow, MessageRow, Storage};
use super::summary::SummaryRepair;

/// The user's response to a bundle.
#[derive(Clone, Debug, PartialEq)]
pub struct ResponseInput {
    pub kind: Response,
    /// The answers (or the rejection) as the API received them; stored with the claim.
    pub payload: Value,
}

/// A live waiter could not take the response.
#[derive(Debug, thiserror::Error)]
#[error("waiter delivery failed: {0}")]
pub struct DeliveryError(pub String);

/// The in-memory waiters of this process (an agent blocked on its clarification tool call).
pub trait WaiterRegistry: Send + Sync {
    /// A waiter owns the bundle right now.
    fn has_waiter(&self, pending_id: &str) -> bool;
    /// Hands the response to the same-turn waiter; `Ok` once it durably confirmed consumption.
    fn deliver(
        &self,
        pending_id: &str,
        response: &ResponseInput,
    ) -> impl Future<Output = Result<(), DeliveryError>> + Send;
}

/// What a detached answer asks the orchestrator to resume.
#[derive(Clone, Debug, PartialEq)]
pub struct ResumeRequest {
    pub session_id: String,
    pub turn_id: String,
    pub pending_id: String,
    pub answer: Value,
}

/// The orchestrator: dispatches exactly one resume of a detached session.
pub trait Resumer: Send + Sync {
    fn resume(&self, request: &ResumeRequest) -> impl Future<Output = ResumeReport> + Send;
}

/// What a respond call ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RespondOutcome {
    pub reply: RespondReply,
    /// The bundle's state when the call classified it.
    pub state: BundleState,
    pub plan: RespondPlan,
    /// How a failure after the claim was resolved, when one happened.
    pub resolution: Option<ResolutionReason>,
}

/// What startup did with one intent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntentReconciliation {
    pub pending_id: String,
    pub recovery: IntentRecovery,
    pub reason: IntentReason,
}

const PRIOR_LIVE: &str = "live";
const PRIOR_DETACHED: &str = "detached";

fn handoff_text(handoff: Handoff) -> &'static str {
    match handoff {
        Handoff::None => "none",
        Handoff::Acknowledged => "acknowledged",
        Handoff::Reserved => "reserved",
    }
}

fn parse_handoff(intent: &IntentRow) -> Result<Handoff> {
    match intent.handoff.as_str() {
        "none" => Ok(Handoff::None),
        "acknowledged" => Ok(Handoff::Acknowledged),
        "reserved" => Ok(Handoff::Reserved),
        other => Err(ServerError::corrupt(
            "delivery_intents",
            &intent.pending_id,
            format!("unknown handoff {other:?}"),
        )),
    }
}

fn parse_prior(intent: &IntentRow) -> Result<PriorActive> {
    match intent.prior_state.as_str() {
        PRIOR_LIVE => Ok(PriorActive::Live),
        PRIOR_DETACHED => Ok(PriorActive::Detached),
        other => Err(ServerError::corrupt(
            "delivery_intents",
            &intent.pending_id,
            format!("unknown prior state {other:?}"),
        )),
    }
}

fn response_text(kind: Response) -> &'static str {
    match kind {
        Response::Answer => "answer",
        Response::Reject => "reject",
    }
}

/// `metadata.agent_disconnected` is set (the §2 flag rule, via the wire decoder).
fn agent_disconnected(row: &MessageRow) -> bool {
    wire::flag(&Json::new(&row.metadata).get("agent_disconnected"))
}

fn object(metadata: &Value) -> Map<String, Value> {
    match metadata {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    }
}

/// The provisional terminal metadata a claim writes.
fn claimed_metadata(row: &MessageRow, input: &ResponseInput, detached: bool) -> Value {
    let mut map = object(&row.metadata);
    let status = match input.kind {
        Response::Answer => "answered",
        Response::Reject => "rejected",
    };
    map.insert("status".into(), Value::from(status));
    map.insert("response".into(), input.payload.clone());
    if detached {
        map.insert("agent_disconnected".into(), Value::Bool(true));
    }
    Value::Object(map)
}

/// The pending metadata a restore writes back.
fn restored_metadata(row: &MessageRow, record_disconnected: bool) -> Value {
    let mut map = object(&row.metadata);
    map.insert("status".into(), Value::from("pending"));
    map.remove("response");
    if record_disconnected {
        map.insert("agent_disconnected".into(), Value::Bool(true));
    }
    Value::Object(map)
}

/// The clarification respond service.
pub struct RespondService<W, R> {
    projector: Projector,
    waiters: Arc<W>,
    resumer: Arc<R>,
    events: Arc<dyn EventSink>,
    clock: Arc<dyn Clock>,
    summaries: Option<SummaryRepair>,
    resume_deadline: Duration,
}

impl<W: WaiterRegistry, R: Resumer> RespondService<W, R> {
    pub fn new(
        projector: Projector,
        waiters: Arc<W>,
        resumer: Arc<R>,
        events: Arc<dyn EventSink>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        RespondService {
            projector,
            waiters,
            resumer,
            events,
            clock,
            summaries: None,
            resume_deadline: Duration::from_secs(30),
        }
    }

    /// Refreshes the task summary after every finalize or restore.
    pub fn with_summary_repair(mut self, summaries: SummaryRepair) -> Self {
        self.summaries = Some(summaries);
        self
    }

    /// The bounded wait for a detached resume's acknowledgement (default 30 s); on timeout the
    /// dispatch is ambiguous.
    pub fn with_resume_deadline(mut self, deadline: Duration) -> Self {
        self.resume_deadline = deadline;
        self
    }

    fn storage(&self) -> &Storage {
        self.projector.storage()
    }

    fn now(&self) -> String {
        wire_time(self.clock.now())
    }

    /// The session holding the bundle.
    async fn bundle_session(&self, pending_id: &str) -> Result<String> {
        let sessions = self.storage().sessions_with_bundle(pending_id).await?;
        match sessions.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(ServerError::NotFound {
                what: "clarification bundle",
                id: pending_id.to_owned(),
            }),
            _ => Err(ServerError::Invalid(format!(
                "clarification bundle {pending_id:?} spans several sessions"
            ))),
        }
    }

    fn facts(
        &self,
        snapshot: &BundleSnapshot,
        observation: &BundleObservation,
        pending_id: &str,
        intent_outstanding: bool,
    ) -> BundleFacts {
        BundleFacts {
            turn: observation.turn,
            has_pending_rows: !observation.pending_rows.is_empty(),
            waiter_live: self.waiters.has_waiter(pending_id),
            agent_disconnected: observation
                .rows
                .iter()
                .filter_map(|&i| snapshot.rows.get(i))
                .any(agent_disconnected),
            delivery_intent: intent_outstanding,
        }
    }

    /// Classifies the bundle as it stands (SPEC §8).
    pub async fn classify(&self, pending_id: &str) -> Result<BundleState> {
        let session_id = self.bundle_session(pending_id).await?;
        let snapshot = self.snapshot(&session_id, pending_id).await?;
        let observation = snapshot.observe(pending_id);
        let intent = self.storage().delivery_intent(pending_id).await?.is_some();
        Ok(classify_bundle(&self.facts(&snapshot, &observation, pending_id, intent)).0)
    }

    /// What the rules read of bundle `pending_id` in its session ([`BundleSnapshot`]).
    async fn snapshot(&self, session_id: &str, pending_id: &str) -> Result<BundleSnapshot> {
        load_bundle_snapshot(self.storage(), session_id, pending_id).await
    }

    /// Responds to bundle `pending_id` (`POST /clarification/:pendingId/respond`).
    pub async fn respond(&self, pending_id: &str, input: &ResponseInput) -> Result<RespondOutcome> {
        let session_id = self.bundle_session(pending_id).await?;
        let snapshot = self.snapshot(&session_id, pending_id).await?;
        let observation = snapshot.observe(pending_id);
        let intent = self.storage().delivery_intent(pending_id).await?.is_some();
        let facts = self.facts(&snapshot, &observation, pending_id, intent);
        let (state, _) = classify_bundle(&facts);
        let (plan, _) = respond_plan(state, input.kind);
        let outcome = |reply, resolution| RespondOutcome {
            reply,
            state,
            plan,
            resolution,
        };
        if !plan.writes() {
            return Ok(outcome(RespondReply::Conflict, None));
        }
        if input.kind == Response::Answer {
            check_bundle_answers(&snapshot, &observation, &input.payload)?;
        }
        let Some(claim) = self
            .claim(&session_id, pending_id, state, facts.waiter_live, input)
            .await?
        else {
            return Ok(outcome(RespondReply::Conflict, None));
        };
        match plan {
            RespondPlan::Conflict => Ok(outcome(RespondReply::Conflict, None)),
            RespondPlan::PersistRejectWithoutResume => {
                self.finalize(&claim).await?;
                Ok(outcome(RespondReply::Success, None))
            }
            RespondPlan::DeliverToWaiter => match self.waiters.deliver(pending_id, input).await {
                Ok(()) => {
                    self.record_handoff(pending_id, Handoff::Acknowledged)
                        .await?;
                    self.finalize(&claim).await?;
                    Ok(outcome(RespondReply::Success, None))
                }
                Err(error) => {
                    tracing::warn!(pending_id, %error, "live clarification delivery failed");
                    let current = self.turn_still_current(&claim).await?;
                    let (resolution, reason) = live_delivery_failed(current);
                    self.apply(&claim, resolution).await?;
                    Ok(outcome(resolution.reply, Some(reason)))
                }
            },
            RespondPlan::ClaimResumeThenFinalize => {
                let request = ResumeRequest {
                    session_id: claim.session_id.clone(),
                    turn_id: claim.turn_id.clone(),
                    pending_id: pending_id.to_owned(),
                    answer: input.payload.clone(),
                };
                let report =
                    tokio::time::timeout(self.resume_deadline, self.resumer.resume(&request))
                        .await
                        .unwrap_or(ResumeReport::Ambiguous);
                let current = self.turn_still_current(&claim).await?;
                let (resolution, reason) = detached_resume_outcome(report, current);
                if resolution.claim == ClaimAfter::Finalize {
                    self.record_handoff(pending_id, Handoff::Acknowledged)
                        .await?;
                }
                self.apply(&claim, resolution).await?;
                Ok(outcome(resolution.reply, Some(reason)))
            }
        }
    }

    /// Records the handoff an intent reached (the orchestrator calls it with
    /// [`Handoff::Reserved`] once a detached dispatch reserved its durable successor).
    pub async fn record_handoff(&self, pending_id: &str, handoff: Handoff) -> Result<()> {
        self.storage()
            .set_intent_handoff(pending_id, handoff_text(handoff), &self.now())
            .await
    }

    /// The claim transaction. `None`: another response owns the bundle, or it changed since it
    /// was classified; everything was rolled back.
    async fn claim(
        &self,
        session_id: &str,
        pending_id: &str,
        state: BundleState,
        waiter_live: bool,
        input: &ResponseInput,
    ) -> Result<Option<IntentRow>> {
        let now = self.now();
        let mut tx = self.storage().db().begin().await?;
        // Write first: on SQLite the transaction takes the write lock before it reads.
        let mut intent = IntentRow {
            pending_id: pending_id.to_owned(),
            session_id: session_id.to_owned(),
            turn_id: String::new(),
            message_ids: Vec::new(),
            prior_state: if state == BundleState::ActiveLive {
                PRIOR_LIVE
            } else {
                PRIOR_DETACHED
            }
            .to_owned(),
            response_kind: response_text(input.kind).to_owned(),
            response: input.payload.clone(),
            handoff: handoff_text(Handoff::None).to_owned(),
            created_at: now.clone(),
            updated_at: now.clone(),
        };
        if !insert_intent_on(&mut tx, &intent).await? {
            tx.rollback().await?;
            return Ok(None);
        }
        // Re-read inside the claim: the bundle must still be what was classified.
        let snapshot = bundle_snapshot_on(&mut tx, session_id, pending_id).await?;
        let observation = snapshot.observe(pending_id);
        let mut facts = self.facts(&snapshot, &observation, pending_id, false);
        facts.waiter_live = waiter_live;
        if classify_bundle(&facts).0 != state {
            tx.rollback().await?;
            return Ok(None);
        }
        let detached = state == BundleState::ActiveDetached;
        let claimed: Vec<&MessageRow> = observation
            .pending_rows
            .iter()
            .filter_map(|&i| snapshot.rows.get(i))
            .collect();
        for row in &claimed {
            let metadata = claimed_metadata(row, input, detached);
            if cas_message_metadata_on(&mut tx, row, &metadata, &now)
                .await?
                .is_none()
            {
                tx.rollback().await?;
                return Ok(None);
            }
        }
        intent.turn_id = claimed
            .first()
            .and_then(|row| row.turn_id())
            .unwrap_or_default()
            .to_owned();
        intent.message_ids = claimed.iter().map(|row| row.id().to_owned()).collect();
        query("UPDATE delivery_intents SET turn_id = $1, message_ids = $2 WHERE pending_id = $3")
            .bind(&intent.turn_id)
            .bind(
                serde_json::to_string(&intent.message_ids)
                    .map_err(|e| ServerError::Invalid(e.to_string()))?,
            )
            .bind(pending_id)
            .execute(&mut tx)
            .await?;
        tx.commit().await?;
        Ok(Some(intent))
    }

    /// Is the claimed bundle's turn still the session's current turn?
    async fn turn_still_current(&self, intent: &IntentRow) -> Result<bool> {
        let snapshot = self
            .snapshot(&intent.session_id, &intent.pending_id)
            .await?;
        Ok(snapshot.observe(&intent.pending_id).turn.is_current())
    }

    async fn apply(&self, intent: &IntentRow, resolution: Resolution) -> Result<()> {
        match resolution.claim {
            ClaimAfter::Finalize | ClaimAfter::KeepTerminal => self.finalize(intent).await,
            ClaimAfter::Restore => self.restore(intent, false).await,
            ClaimAfter::LeaveForRecovery => Ok(()),
        }
    }

    /// The rows stay terminal; the intent is retired; the terminal rows are published.
    async fn finalize(&self, intent: &IntentRow) -> Result<()> {
        self.storage().delete_intent(&intent.pending_id).await?;
        self.after_change(intent).await;
        Ok(())
    }

    /// The claimed rows go back to pending; the intent is retired; the rows are published.
    async fn restore(&self, intent: &IntentRow, record_disconnected: bool) -> Result<()> {
        let now = self.now();
        for id in &intent.message_ids {
            let row = self.storage().message(id).await?;
            let disconnected = record_disconnected
                || intent.prior_state == PRIOR_DETACHED
                || agent_disconnected(&row);
            let metadata = restored_metadata(&row, disconnected);
            if self
                .storage()
                .cas_message_metadata(&row, &metadata, &now)
                .await?
                .is_none()
            {
                tracing::warn!(pending_id = %intent.pending_id, message_id = %id, "restore lost a race");
            }
        }
        self.storage().delete_intent(&intent.pending_id).await?;
        self.after_change(intent).await;
        Ok(())
    }

    /// Publishes the bundle's rows with the session projection and refreshes the task summary.
    async fn after_change(&self, intent: &IntentRow) {
        for id in &intent.message_ids {
            match self.storage().message(id).await {
                Ok(row) => {
                    self.projector
                        .publish_message_event(
                            self.events.as_ref(),
                            MessageEventKind::Updated,
                            &intent.session_id,
                            row.to_wire(),
                        )
                        .await;
                }
                Err(error) => tracing::warn!(message_id = %id, %error, "cannot publish bundle row"),
            }
        }
        if let Some(summaries) = &self.summaries {
            match self.storage().session(&intent.session_id).await {
                Ok(session) => {
                    if let Err(error) = summaries.repair(&session.task_id).await {
                        tracing::warn!(task_id = %session.task_id, %error, "summary refresh failed");
                    }
                }
                Err(error) => tracing::warn!(%error, "summary refresh: session unreadable"),
            }
        }
    }

    /// Startup reconciliation of every outstanding delivery intent, before event processing or
    /// prompt admission. A malformed intent is a startup error.
    pub async fn reconcile_intents(&self) -> Result<Vec<IntentReconciliation>> {
        let mut done = Vec::new();
        for intent in self.storage().delivery_intents().await? {
            let prior = parse_prior(&intent)?;
            let handoff = parse_handoff(&intent)?;
            let snapshot = self
                .snapshot(&intent.session_id, &intent.pending_id)
                .await?;
            let turn = snapshot.observe(&intent.pending_id).turn;
            let (recovery, reason) = reconcile_delivery_intent(prior, handoff, turn);
            match recovery {
                IntentRecovery::Restore {
                    record_agent_disconnected,
                } => self.restore(&intent, record_agent_disconnected).await?,
                IntentRecovery::Finalize | IntentRecovery::RetireKeepHistory => {
                    self.finalize(&intent).await?;
                }
                IntentRecovery::DeferToReservationRecovery => {}
            }
            tracing::info!(pending_id = %intent.pending_id, ?recovery, ?reason, "delivery intent reconciled");
            done.push(IntentReconciliation {
                pending_id: intent.pending_id,
                recovery,
                reason,
            });
        }
        Ok(done)
    }
}

/// The answers of `payload` against the bundle's questions ([`check_answers`]): a question's id
/// is its `metadata.question_id`, else its message id. A problem is [`ServerError::Invalid`]
/// (400, nothing written).
fn check_bundle_answers(
    snapshot: &BundleSnapshot,
    observation: &BundleObservation,
    payload: &Value,
) -> Result<()> {
    let questions: Vec<&str> = observation
        .rows
        .iter()
        .filter_map(|&i| snapshot.rows.get(i))
        .map(|row| {
            row.metadata
                .get("question_id")
                .and_then(Value::as_str)
                .unwrap_or_else(|| row.id())
        })
        .collect();
    let answers: Vec<(&str, &str)> = payload
        .get("answers")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|a| {
                    let text = |key| a.get(key).and_then(Value::as_str).unwrap_or_default();
                    (text("question_id"), text("answer"))
                })
                .collect()
        })
        .unwrap_or_default();
    check_answers(&questions, &answers).map_err(|problem| {
        let quoted = |id: &str| format!("{:?}", id.chars().take(64).collect::<String>());
        ServerError::Invalid(match problem {
            AnswerProblem::Unknown(id) => format!("the bundle has no question {}", quoted(id)),
            AnswerProblem::Duplicate(id) => format!("question {} is answered twice", quoted(id)),
            AnswerProblem::Missing(id) => format!(
                "question {} has no answer (answer every question of the bundle, or reject it)",
                quoted(id)
            ),
            AnswerProblem::TooLong(id) => format!(
                "the answer to question {} is longer than {MAX_ANSWER_BYTES} bytes",
                quoted(id)
            ),
        })
    })
}

/// The wire spelling of a reply (`success`, `retryable_error`, ...), for logs and APIs.
pub fn reply_text(reply: RespondReply) -> &'static str {
    match reply {
        RespondReply::Success => "success",
        RespondReply::RetryableError => "retryable_error",
        RespondReply::NonRetryableError => "non_retryable_error",
        RespondReply::Conflict => "conflict",
    }
}

/// A JSON body for a reply.
pub fn reply_json(outcome: &RespondOutcome) -> Value {
    json!({ "result": reply_text(outcome.reply), "state": outcome.state.as_str() })
}
