//! Clarification bundle states and the respond decision (SPEC §8, design
//! `spec/000` "Active clarification lifecycle").
//!
//! The service gathers plain facts about one bundle (its rows, whether its turn is current,
//! whether an in-memory waiter exists, whether `agent_disconnected` or a durable delivery intent
//! is recorded) and asks these functions what the bundle is and what to do:
//!
//! 1. [`observe_bundle`] finds the bundle's rows and whether its turn is the session's current
//!    turn, using the §2 rule [`current_turn`] (lifecycle turns and unpublished reservations
//!    excluded, session quarantine applied).
//! 2. [`classify_bundle`] turns the facts into a [`BundleState`].
//! 3. [`respond_plan`] decides the respond outcome from the state and the response kind.
//! 4. After a plan ran: [`live_delivery_failed`] (waiter delivery failed) and
//!    [`detached_resume_outcome`] (result of the one resume of a detached answer).
//! 5. At startup, [`reconcile_delivery_intent`] decides what to do with each outstanding
//!    delivery intent, before event processing or prompt admission begins.
//!
//! Nothing here performs a write; the plans say which writes the service performs, in order.

use super::model::{MessageKind, MessageRecord, SessionState, TurnRecord};
use super::turn::{current_turn, TurnReason};

/// Where a bundle's turn stands against the session's current turn (SPEC §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BundleTurn {
    /// The bundle's rows belong to the session's current turn.
    Current,
    /// Another turn is current (or no turn is eligible any more): the rows are history.
    Superseded,
    /// The session state is known and not input-capable (terminal, `IDLE`, ...): it has no
    /// current clarification turn, whatever its rows say (session quarantine).
    SessionQuarantined,
    /// The rows name no turn, name a turn that does not exist, or disagree on their turn: inert
    /// (a malformed row is never input authority).
    Orphaned,
}

impl BundleTurn {
    pub const fn is_current(self) -> bool {
        matches!(self, BundleTurn::Current)
    }
}

/// What [`observe_bundle`] found of one bundle among a session's messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleObservation {
    /// Indices of every `clarification_request` row of the bundle (`metadata.pending_id`), in
    /// array order, whatever their status. Empty when the bundle does not exist.
    pub rows: Vec<usize>,
    /// Indices of the rows whose status is pending (missing, empty or `pending`): the rows a
    /// response claims.
    pub pending_rows: Vec<usize>,
    /// The bundle's turn against the current turn.
    pub turn: BundleTurn,
}

impl BundleObservation {
    /// The classification facts of this observation plus what the service knows besides the
    /// rows: the waiter registry, the `agent_disconnected` marker and the delivery intent.
    pub fn facts(
        &self,
        waiter_live: bool,
        agent_disconnected: bool,
        delivery_intent: bool,
    ) -> BundleFacts {
        BundleFacts {
            turn: self.turn,
            has_pending_rows: !self.pending_rows.is_empty(),
            waiter_live,
            agent_disconnected,
            delivery_intent,
        }
    }
}

/// Finds the bundle `pending_id` among a session's `messages` and places its turn against the
/// current turn of the session (`turns` is the session's whole turn history, `state` its state;
/// `None` when unknown, which falls through to the turn rule).
///
/// Reservations count as published when any message references them (SPEC §2 rule 3). A bundle
/// whose rows name different turns, or no turn, or a turn absent from `turns`, is
/// [`BundleTurn::Orphaned`].
pub fn observe_bundle<T: TurnRecord, M: MessageRecord>(
    state: Option<SessionState>,
    turns: &[T],
    messages: &[M],
    pending_id: &str,
) -> BundleObservation {
    let referenced = |id: &str| messages.iter().any(|m| m.turn_id() == Some(id));
    observe_bundle_with(state, turns, referenced, messages, pending_id)
}

/// [`observe_bundle`] from what it reads (a server reads no more): `referenced` answers whether
/// any message of the session names a turn, and `rows` is any subsequence of the session's
/// messages, in their order, that holds every `clarification_request` row of `pending_id` (the
/// observation's indices are into `rows`). Over the whole transcript it is [`observe_bundle`].
pub fn observe_bundle_with<T: TurnRecord, M: MessageRecord>(
    state: Option<SessionState>,
    turns: &[T],
    referenced: impl Fn(&str) -> bool,
    rows: &[M],
    pending_id: &str,
) -> BundleObservation {
    let messages = rows;
    let rows: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            m.kind() == MessageKind::ClarificationRequest && m.pending_id() == Some(pending_id)
        })
        .map(|(index, _)| index)
        .collect();
    let pending_rows: Vec<usize> = rows
        .iter()
        .copied()
        .filter(|&i| messages.get(i).is_some_and(|m| m.status().is_pending()))
        .collect();
    let turn = bundle_turn(state, turns, messages, &rows, referenced);
    BundleObservation {
        rows,
        pending_rows,
        turn,
    }
}

fn bundle_turn<T: TurnRecord, M: MessageRecord>(
    state: Option<SessionState>,
    turns: &[T],
    messages: &[M],
    rows: &[usize],
    referenced: impl Fn(&str) -> bool,
) -> BundleTurn {
    let mut turn_ids = rows
        .iter()
        .filter_map(|&i| messages.get(i))
        .map(MessageRecord::turn_id);
    let Some(Some(turn_id)) = turn_ids.next() else {
        return BundleTurn::Orphaned;
    };
    if turn_ids.any(|other| other != Some(turn_id)) {
        return BundleTurn::Orphaned;
    }
    if !turns.iter().any(|t| t.id() == turn_id) {
        return BundleTurn::Orphaned;
    }
    let (current, reason) = current_turn(Some(turns), state, referenced);
    if reason == TurnReason::SessionNotInputCapable {
        return BundleTurn::SessionQuarantined;
    }
    match current.turn().and_then(|index| turns.get(index)) {
        Some(current) if current.id() == turn_id => BundleTurn::Current,
        _ => BundleTurn::Superseded,
    }
}

/// The plain facts that classify a bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BundleFacts {
    /// The bundle's turn against the current turn ([`observe_bundle`]).
    pub turn: BundleTurn,
    /// At least one row of the bundle is still pending.
    pub has_pending_rows: bool,
    /// An in-memory waiter owns the bundle (this process's waiter registry).
    pub waiter_live: bool,
    /// `metadata.agent_disconnected` is recorded on the bundle.
    pub agent_disconnected: bool,
    /// A durable response-delivery intent (claim) is outstanding for the bundle.
    pub delivery_intent: bool,
}

/// The five operational states of one bundle (SPEC §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BundleState {
    /// Pending in the current turn, an in-memory waiter exists.
    ActiveLive,
    /// Pending in the current turn, no waiter (`agent_disconnected` records deferred answers).
    ActiveDetached,
    /// A response claimed every pending row; no handoff acknowledged yet.
    DeliveryClaimed,
    /// Nothing actionable is pending and no delivery intent is outstanding.
    Terminal,
    /// Pending rows, but they are not the current turn's (a newer turn is current, the session
    /// is quarantined, or the rows are orphaned).
    SupersededHistory,
}

impl BundleState {
    /// The wire/log spelling (`active_live`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            BundleState::ActiveLive => "active_live",
            BundleState::ActiveDetached => "active_detached",
            BundleState::DeliveryClaimed => "delivery_claimed",
            BundleState::Terminal => "terminal",
            BundleState::SupersededHistory => "superseded_history",
        }
    }

    /// `active_live` or `active_detached`: a response may claim the bundle.
    pub const fn is_active(self) -> bool {
        matches!(self, BundleState::ActiveLive | BundleState::ActiveDetached)
    }
}

/// Why [`classify_bundle`] decided what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BundleReason {
    /// A durable delivery intent is outstanding: the first response owns the bundle.
    DeliveryIntentOutstanding,
    /// No row is pending.
    NoPendingRows,
    /// A newer turn is current.
    NewerTurnCurrent,
    /// The session is not input-capable (terminal, idle, ...).
    SessionQuarantined,
    /// The rows have no usable turn.
    OrphanedRows,
    /// An in-memory waiter owns the bundle.
    WaiterLive,
    /// No waiter and `agent_disconnected` is recorded.
    AgentDisconnected,
    /// No waiter and `agent_disconnected` is not (yet) recorded, for example after a crash before
    /// detachment was persisted: detached, and the service records the marker with its claim.
    WaiterGoneUnmarked,
}

/// Classifies a bundle (SPEC §8). In order: an outstanding delivery intent → `delivery_claimed`;
/// no pending row → `terminal`; a turn that is not current → `superseded_history`; a live waiter
/// → `active_live` (the in-memory waiter is the truth even if a stale marker is recorded);
/// otherwise `active_detached`.
pub fn classify_bundle(facts: &BundleFacts) -> (BundleState, BundleReason) {
    if facts.delivery_intent {
        return (
            BundleState::DeliveryClaimed,
            BundleReason::DeliveryIntentOutstanding,
        );
    }
    if !facts.has_pending_rows {
        return (BundleState::Terminal, BundleReason::NoPendingRows);
    }
    let not_current = match facts.turn {
        BundleTurn::Current => None,
        BundleTurn::Superseded => Some(BundleReason::NewerTurnCurrent),
        BundleTurn::SessionQuarantined => Some(BundleReason::SessionQuarantined),
        BundleTurn::Orphaned => Some(BundleReason::OrphanedRows),
    };
    if let Some(reason) = not_current {
        return (BundleState::SupersededHistory, reason);
    }
    if facts.waiter_live {
        (BundleState::ActiveLive, BundleReason::WaiterLive)
    } else if facts.agent_disconnected {
        (BundleState::ActiveDetached, BundleReason::AgentDisconnected)
    } else {
        (
            BundleState::ActiveDetached,
            BundleReason::WaiterGoneUnmarked,
        )
    }
}

/// The user's response: an answer, or a rejection (the chat's Skip, `rejected=true`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Response {
    Answer,
    Reject,
}

/// What the respond service must do (SPEC §8 table). Every plan except [`RespondPlan::Conflict`]
/// starts by claiming every pending row with a durable delivery intent (compare-and-set: the
/// bundle must still be active and unclaimed; the loser of a race gets `Conflict`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RespondPlan {
    /// `active_live`, answer or reject: claim, hand the response to the same-turn waiter (which
    /// durably confirms consumption before the agent sees it), finalize to terminal, respond
    /// success. On delivery failure see [`live_delivery_failed`].
    DeliverToWaiter,
    /// `active_detached` answer: claim, dispatch exactly one resume, wait (bounded) for the
    /// orchestrator's acknowledgement and the durable successor, then finalize and respond
    /// success. Does not wait for the resumed turn to finish. The outcome of the resume is
    /// decided by [`detached_resume_outcome`].
    ClaimResumeThenFinalize,
    /// `active_detached` reject: claim and finalize the rejection, respond success, never resume
    /// the agent.
    PersistRejectWithoutResume,
    /// `delivery_claimed`, `terminal`, `superseded_history`: respond conflict, write nothing,
    /// resume nothing.
    Conflict,
}

impl RespondPlan {
    /// The plan writes (claims) rows.
    pub const fn writes(self) -> bool {
        !matches!(self, RespondPlan::Conflict)
    }

    /// The plan may resume the agent.
    pub const fn resumes(self) -> bool {
        matches!(self, RespondPlan::ClaimResumeThenFinalize)
    }
}

/// Why [`respond_plan`] decided what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RespondReason {
    LiveWaiter,
    DetachedAnswerNeedsResume,
    DetachedRejectNeedsNoResume,
    AlreadyClaimed,
    AlreadyTerminal,
    Superseded,
}

/// The longest answer taken, in bytes (a bundle's answers are stored and replayed to the agent).
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// Why a bundle's answers cannot be taken: a response answers every question of the bundle
/// exactly once, and nothing else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerProblem<'a> {
    /// An answer to a question the bundle does not have.
    Unknown(&'a str),
    /// A second answer to the same question.
    Duplicate(&'a str),
    /// A question of the bundle without an answer.
    Missing(&'a str),
    /// An answer longer than [`MAX_ANSWER_BYTES`].
    TooLong(&'a str),
}

/// Checks `answers` (question id, answer) against the bundle's `questions` (their ids): each
/// question answered exactly once, no other id, no answer over [`MAX_ANSWER_BYTES`]. The first
/// problem in answer order, then in question order.
pub fn check_answers<'a>(
    questions: &[&'a str],
    answers: &[(&'a str, &'a str)],
) -> Result<(), AnswerProblem<'a>> {
    let mut answered: Vec<&str> = Vec::with_capacity(answers.len().min(questions.len()));
    for &(id, answer) in answers {
        if !questions.contains(&id) {
            return Err(AnswerProblem::Unknown(id));
        }
        if answered.contains(&id) {
            return Err(AnswerProblem::Duplicate(id));
        }
        if answer.len() > MAX_ANSWER_BYTES {
            return Err(AnswerProblem::TooLong(id));
        }
        answered.push(id);
    }
    match questions.iter().find(|q| !answered.contains(q)) {
        Some(missing) => Err(AnswerProblem::Missing(missing)),
        None => Ok(()),
    }
}

/// The respond decision (SPEC §8): the bundle's state × the response.
pub fn respond_plan(state: BundleState, response: Response) -> (RespondPlan, RespondReason) {
    match (state, response) {
        (BundleState::ActiveLive, _) => (RespondPlan::DeliverToWaiter, RespondReason::LiveWaiter),
        (BundleState::ActiveDetached, Response::Answer) => (
            RespondPlan::ClaimResumeThenFinalize,
            RespondReason::DetachedAnswerNeedsResume,
        ),
        (BundleState::ActiveDetached, Response::Reject) => (
            RespondPlan::PersistRejectWithoutResume,
            RespondReason::DetachedRejectNeedsNoResume,
        ),
        (BundleState::DeliveryClaimed, _) => (RespondPlan::Conflict, RespondReason::AlreadyClaimed),
        (BundleState::Terminal, _) => (RespondPlan::Conflict, RespondReason::AlreadyTerminal),
        (BundleState::SupersededHistory, _) => (RespondPlan::Conflict, RespondReason::Superseded),
    }
}

/// The reply the respond endpoint gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RespondReply {
    Success,
    /// Server error; the bundle is answerable again, the client may retry.
    RetryableError,
    /// Server error; the bundle stays terminal (or awaits startup recovery), retrying cannot
    /// help.
    NonRetryableError,
    /// Conflict: nothing was written, nothing resumed.
    Conflict,
}

/// What becomes of the claimed rows after a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimAfter {
    /// Finalize: the rows are terminal and the delivery intent is retired.
    Finalize,
    /// Restore the claimed rows to pending (the bundle's prior active state; without a waiter
    /// that is `active_detached`) and retire the intent.
    Restore,
    /// Keep the rows terminal and retire the intent (history is preserved, nothing resumes).
    KeepTerminal,
    /// Leave the claim and its intent as they are: startup reconciliation decides.
    LeaveForRecovery,
}

/// A resolution: what to do with the claim and what to reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolution {
    pub claim: ClaimAfter,
    pub reply: RespondReply,
}

/// Why a failure resolved as it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResolutionReason {
    Delivered,
    NotAcceptedRestored,
    NotAcceptedTurnSuperseded,
    RollbackFailed,
    AcceptedPublicationFailed,
    DispatchAmbiguous,
    DeliveryFailedRestored,
    DeliveryFailedTurnSuperseded,
}

/// A live waiter delivery failed unexpectedly: restore the durable claim only while its turn is
/// still current (retryable); after a successor turn was accepted it is never restored
/// (non-retryable, history kept).
pub fn live_delivery_failed(turn_still_current: bool) -> (Resolution, ResolutionReason) {
    if turn_still_current {
        (
            Resolution {
                claim: ClaimAfter::Restore,
                reply: RespondReply::RetryableError,
            },
            ResolutionReason::DeliveryFailedRestored,
        )
    } else {
        (
            Resolution {
                claim: ClaimAfter::KeepTerminal,
                reply: RespondReply::NonRetryableError,
            },
            ResolutionReason::DeliveryFailedTurnSuperseded,
        )
    }
}

/// What is known about the one resume a detached answer dispatched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResumeReport {
    /// The orchestrator acknowledged the dispatch and the successor turn was durably published.
    AcceptedAndPublished,
    /// The dispatch is known not to have been accepted (acceptance failed, or persisting the
    /// successor or its attempt marker failed before any external call); `rollback_succeeded`
    /// says whether the session claim and any reserved successor were rolled back.
    NotAccepted { rollback_succeeded: bool },
    /// The orchestrator accepted the dispatch but publishing the successor failed.
    AcceptedPublicationFailed,
    /// The attempt boundary was crossed without an answer (timeout after the attempt marker):
    /// the prompt may be running.
    Ambiguous,
}

/// The outcome of a detached answer's resume (SPEC §8, design "Failure modes"):
///
/// * accepted and published → finalize, success;
/// * known not accepted, rollback succeeded, turn still current → restore the bundle to
///   `active_detached`, retryable error (scenario 57);
/// * known not accepted but the turn was superseded meanwhile → keep terminal history, no
///   restore, non-retryable error;
/// * known not accepted but rollback failed → leave the claim for startup recovery (prompt
///   admission stays blocked), non-retryable error;
/// * accepted but publication failed, or ambiguous → the prompt may be running: keep terminal,
///   non-retryable error (later rollback must fail closed).
pub fn detached_resume_outcome(
    report: ResumeReport,
    turn_still_current: bool,
) -> (Resolution, ResolutionReason) {
    let resolve = |claim, reply, reason| (Resolution { claim, reply }, reason);
    match report {
        ResumeReport::AcceptedAndPublished => resolve(
            ClaimAfter::Finalize,
            RespondReply::Success,
            ResolutionReason::Delivered,
        ),
        ResumeReport::NotAccepted {
            rollback_succeeded: false,
        } => resolve(
            ClaimAfter::LeaveForRecovery,
            RespondReply::NonRetryableError,
            ResolutionReason::RollbackFailed,
        ),
        ResumeReport::NotAccepted {
            rollback_succeeded: true,
        } if turn_still_current => resolve(
            ClaimAfter::Restore,
            RespondReply::RetryableError,
            ResolutionReason::NotAcceptedRestored,
        ),
        ResumeReport::NotAccepted { .. } => resolve(
            ClaimAfter::KeepTerminal,
            RespondReply::NonRetryableError,
            ResolutionReason::NotAcceptedTurnSuperseded,
        ),
        ResumeReport::AcceptedPublicationFailed => resolve(
            ClaimAfter::KeepTerminal,
            RespondReply::NonRetryableError,
            ResolutionReason::AcceptedPublicationFailed,
        ),
        ResumeReport::Ambiguous => resolve(
            ClaimAfter::KeepTerminal,
            RespondReply::NonRetryableError,
            ResolutionReason::DispatchAmbiguous,
        ),
    }
}

/// The active state a bundle was in when a response claimed it (recorded with the intent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriorActive {
    Live,
    Detached,
}

/// How far an outstanding delivery intent got before the restart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handoff {
    /// No handoff boundary was acknowledged.
    None,
    /// The live waiter durably confirmed consumption, or the detached successor is authoritative:
    /// the answer reached (or may have reached) the agent.
    Acknowledged,
    /// A detached dispatch reached its durable successor reservation: prompt-reservation
    /// recovery owns the claimed rows.
    Reserved,
}

/// What startup does with one outstanding delivery intent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntentRecovery {
    /// Restore the claimed rows to pending and retire the intent. No waiter survives a restart,
    /// so the bundle is `active_detached`: when `record_agent_disconnected` the service records
    /// the marker (the prior state was live).
    Restore { record_agent_disconnected: bool },
    /// The handoff happened: finalize the rows as terminal and retire the intent.
    Finalize,
    /// Superseded (a newer turn is current, or the session is quarantined): retire the intent,
    /// keep the rows terminal as history, never reactivate.
    RetireKeepHistory,
    /// Leave the rows and intent to prompt-reservation recovery.
    DeferToReservationRecovery,
}

/// Why [`reconcile_delivery_intent`] decided what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntentReason {
    HandoffAcknowledged,
    ReservationOwnsClaim,
    TurnNoLongerCurrent,
    NoHandoffStillCurrent,
}

/// Startup reconciliation of a durable delivery intent (SPEC §8, design "Transitions"): a
/// handed-off claim is finalized; a claim whose detached dispatch reached its reservation belongs
/// to reservation recovery; a claim whose turn is no longer current is retired as history; a
/// still-current claim with no acknowledged handoff is restored to its prior active state.
///
/// `turn` is where the claimed rows' turn stands now (from [`observe_bundle`], which reads the
/// claimed rows whatever their provisional status).
pub fn reconcile_delivery_intent(
    prior: PriorActive,
    handoff: Handoff,
    turn: BundleTurn,
) -> (IntentRecovery, IntentReason) {
    match handoff {
        Handoff::Acknowledged => (IntentRecovery::Finalize, IntentReason::HandoffAcknowledged),
        Handoff::Reserved => (
            IntentRecovery::DeferToReservationRecovery,
            IntentReason::ReservationOwnsClaim,
        ),
        Handoff::None if !turn.is_current() => (
            IntentRecovery::RetireKeepHistory,
            IntentReason::TurnNoLongerCurrent,
        ),
        Handoff::None => (
            IntentRecovery::Restore {
                record_agent_disconnected: prior == PriorActive::Live,
            },
            IntentReason::NoHandoffStillCurrent,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_cover_the_bundle_exactly_once() {
        let questions = ["q1", "q2"];
        assert_eq!(
            check_answers(&questions, &[("q1", "a"), ("q2", "b")]),
            Ok(())
        );
        assert_eq!(
            check_answers(&questions, &[("q2", "b"), ("q1", "a")]),
            Ok(())
        );
        assert_eq!(
            check_answers(&questions, &[("q1", "a")]),
            Err(AnswerProblem::Missing("q2"))
        );
        assert_eq!(
            check_answers(&questions, &[("q1", "a"), ("q1", "a"), ("q2", "b")]),
            Err(AnswerProblem::Duplicate("q1"))
        );
        assert_eq!(
            check_answers(&questions, &[("q1", "a"), ("q3", "c"), ("q2", "b")]),
            Err(AnswerProblem::Unknown("q3"))
        );
        assert_eq!(
            check_answers(&questions, &[("", "a")]),
            Err(AnswerProblem::Unknown(""))
        );
        let long = "x".repeat(MAX_ANSWER_BYTES + 1);
        assert_eq!(
            check_answers(&questions, &[("q1", &long), ("q2", "b")]),
            Err(AnswerProblem::TooLong("q1"))
        );
        let longest = "x".repeat(MAX_ANSWER_BYTES);
        assert_eq!(
            check_answers(&questions, &[("q1", &longest), ("q2", "b")]),
            Ok(())
        );
        assert_eq!(
            check_answers(&questions, &[]),
            Err(AnswerProblem::Missing("q1"))
        );
    }
    use crate::rules::model::{Message, RequestStatus, Turn};
    use crate::rules::time::Timestamp;

    const T0: &str = "2026-11-29T12:00:00Z";
    const T1: &str = "2026-11-29T12:00:01Z";
    const T2: &str = "2026-11-29T12:00:02Z";

    fn turn(id: &str, started: &str, completed: bool) -> Turn {
        Turn {
            id: id.into(),
            completed,
            started_at: Timestamp::parse(started),
            created_at: Timestamp::parse(started),
            ..Turn::default()
        }
    }

    fn clar(id: &str, turn: Option<&str>, pending_id: &str, status: Option<&str>) -> Message {
        Message {
            id: id.into(),
            turn_id: turn.map(Into::into),
            kind: MessageKind::ClarificationRequest,
            status: RequestStatus::parse(status),
            pending_id: Some(pending_id.into()),
            question_total: None,
            created_at: Timestamp::parse(T0),
            updated_at: None,
        }
    }

    fn ordinary(id: &str, turn: &str) -> Message {
        Message {
            id: id.into(),
            turn_id: Some(turn.into()),
            kind: MessageKind::Other,
            status: RequestStatus::parse(None),
            pending_id: None,
            question_total: None,
            created_at: Timestamp::parse(T1),
            updated_at: None,
        }
    }

    const RUNNING: Option<SessionState> = Some(SessionState::Running);

    fn facts(turn: BundleTurn) -> BundleFacts {
        BundleFacts {
            turn,
            has_pending_rows: true,
            waiter_live: false,
            agent_disconnected: false,
            delivery_intent: false,
        }
    }

    // --- observe_bundle -------------------------------------------------------------------

    #[test]
    fn observes_rows_and_pending_rows_of_the_current_turn() {
        let turns = [turn("t1", T0, false)];
        let messages = [
            ordinary("noise", "t1"),
            clar("a", Some("t1"), "p1", None),
            clar("b", Some("t1"), "p1", Some("answered")),
            clar("c", Some("t1"), "p1", Some("pending")),
            clar("other", Some("t1"), "p2", None),
        ];
        let seen = observe_bundle(RUNNING, &turns, &messages, "p1");
        assert_eq!(seen.rows, vec![1, 2, 3]);
        assert_eq!(seen.pending_rows, vec![1, 3]);
        assert_eq!(seen.turn, BundleTurn::Current);
    }

    #[test]
    fn newer_turn_supersedes_even_without_messages() {
        // Deleting every message of the newer turn never moves ownership backwards.
        let turns = [turn("old", T0, true), turn("new", T1, true)];
        let messages = [clar("a", Some("old"), "p1", None)];
        let seen = observe_bundle(RUNNING, &turns, &messages, "p1");
        assert_eq!(seen.turn, BundleTurn::Superseded);
    }

    #[test]
    fn lifecycle_turn_and_unpublished_reservation_never_supersede() {
        let mut life = turn("life", T2, false);
        life.flags.lifecycle_only = true;
        let mut reserved = turn("succ", T2, false);
        reserved.flags.prompt_dispatch_pending = true;
        let turns = [turn("t1", T0, false), life, reserved.clone()];
        let messages = [clar("a", Some("t1"), "p1", None)];
        assert_eq!(
            observe_bundle(RUNNING, &turns, &messages, "p1").turn,
            BundleTurn::Current
        );
        // A message referencing the reservation is evidence of acceptance: it supersedes.
        let messages = [clar("a", Some("t1"), "p1", None), ordinary("out", "succ")];
        assert_eq!(
            observe_bundle(RUNNING, &turns, &messages, "p1").turn,
            BundleTurn::Superseded
        );
        // So does the attempt marker.
        reserved.flags.prompt_dispatch_attempted = true;
        let turns = [turn("t1", T0, false), reserved];
        let messages = [clar("a", Some("t1"), "p1", None)];
        assert_eq!(
            observe_bundle(RUNNING, &turns, &messages, "p1").turn,
            BundleTurn::Superseded
        );
    }

    #[test]
    fn quarantine_and_unknown_state() {
        let turns = [turn("t1", T0, false)];
        let messages = [clar("a", Some("t1"), "p1", None)];
        for state in [
            SessionState::Completed,
            SessionState::Failed,
            SessionState::Cancelled,
            SessionState::Idle,
            SessionState::Created,
        ] {
            assert_eq!(
                observe_bundle(Some(state), &turns, &messages, "p1").turn,
                BundleTurn::SessionQuarantined,
                "{state:?}"
            );
        }
        assert_eq!(
            observe_bundle(Some(SessionState::WaitingForInput), &turns, &messages, "p1").turn,
            BundleTurn::Current
        );
        assert_eq!(
            observe_bundle(None, &turns, &messages, "p1").turn,
            BundleTurn::Current
        );
    }

    #[test]
    fn orphaned_rows() {
        let turns = [turn("t1", T0, false)];
        // No rows at all.
        let seen = observe_bundle(RUNNING, &turns, &[] as &[Message], "p1");
        assert!(seen.rows.is_empty() && seen.pending_rows.is_empty());
        assert_eq!(seen.turn, BundleTurn::Orphaned);
        // Turnless row.
        let messages = [clar("a", None, "p1", None)];
        assert_eq!(
            observe_bundle(RUNNING, &turns, &messages, "p1").turn,
            BundleTurn::Orphaned
        );
        // A turn that does not exist.
        let messages = [clar("a", Some("ghost"), "p1", None)];
        assert_eq!(
            observe_bundle(RUNNING, &turns, &messages, "p1").turn,
            BundleTurn::Orphaned
        );
        // Rows that disagree on their turn.
        let turns = [turn("t0", T0, true), turn("t1", T1, false)];
        let messages = [
            clar("a", Some("t1"), "p1", None),
            clar("b", Some("t0"), "p1", None),
        ];
        assert_eq!(
            observe_bundle(RUNNING, &turns, &messages, "p1").turn,
            BundleTurn::Orphaned
        );
        let messages = [
            clar("a", Some("t1"), "p1", None),
            clar("b", None, "p1", None),
        ];
        assert_eq!(
            observe_bundle(RUNNING, &turns, &messages, "p1").turn,
            BundleTurn::Orphaned
        );
    }

    #[test]
    fn permission_rows_are_not_bundle_members() {
        let turns = [turn("t1", T0, false)];
        let mut permission = clar("perm", Some("t1"), "p1", None);
        permission.kind = MessageKind::PermissionRequest;
        let messages = [permission, clar("a", Some("t1"), "p1", None)];
        assert_eq!(
            observe_bundle(RUNNING, &turns, &messages, "p1").rows,
            vec![1]
        );
    }

    // --- classify_bundle ------------------------------------------------------------------

    #[test]
    fn classification_table() {
        let mut f = facts(BundleTurn::Current);
        f.waiter_live = true;
        assert_eq!(
            classify_bundle(&f),
            (BundleState::ActiveLive, BundleReason::WaiterLive)
        );
        f.agent_disconnected = true;
        assert_eq!(classify_bundle(&f).0, BundleState::ActiveLive);
        f.waiter_live = false;
        assert_eq!(
            classify_bundle(&f),
            (BundleState::ActiveDetached, BundleReason::AgentDisconnected)
        );
        f.agent_disconnected = false;
        assert_eq!(
            classify_bundle(&f),
            (
                BundleState::ActiveDetached,
                BundleReason::WaiterGoneUnmarked
            )
        );
        f.has_pending_rows = false;
        assert_eq!(
            classify_bundle(&f),
            (BundleState::Terminal, BundleReason::NoPendingRows)
        );
        f.delivery_intent = true;
        assert_eq!(
            classify_bundle(&f),
            (
                BundleState::DeliveryClaimed,
                BundleReason::DeliveryIntentOutstanding
            )
        );
    }

    #[test]
    fn not_current_pending_rows_are_superseded_history_whatever_the_waiter() {
        for (turn, reason) in [
            (BundleTurn::Superseded, BundleReason::NewerTurnCurrent),
            (
                BundleTurn::SessionQuarantined,
                BundleReason::SessionQuarantined,
            ),
            (BundleTurn::Orphaned, BundleReason::OrphanedRows),
        ] {
            let mut f = facts(turn);
            f.waiter_live = true;
            f.agent_disconnected = true;
            assert_eq!(
                classify_bundle(&f),
                (BundleState::SupersededHistory, reason)
            );
        }
        // Terminal beats superseded: nothing pending is terminal history.
        let mut f = facts(BundleTurn::Superseded);
        f.has_pending_rows = false;
        assert_eq!(classify_bundle(&f).0, BundleState::Terminal);
    }

    #[test]
    fn state_spellings() {
        assert_eq!(BundleState::ActiveLive.as_str(), "active_live");
        assert_eq!(BundleState::ActiveDetached.as_str(), "active_detached");
        assert_eq!(BundleState::DeliveryClaimed.as_str(), "delivery_claimed");
        assert_eq!(BundleState::Terminal.as_str(), "terminal");
        assert_eq!(
            BundleState::SupersededHistory.as_str(),
            "superseded_history"
        );
        assert!(BundleState::ActiveLive.is_active() && BundleState::ActiveDetached.is_active());
        assert!(!BundleState::DeliveryClaimed.is_active());
    }

    // --- respond_plan ---------------------------------------------------------------------

    #[test]
    fn respond_table() {
        use BundleState::*;
        use Response::*;
        assert_eq!(
            respond_plan(ActiveLive, Answer).0,
            RespondPlan::DeliverToWaiter
        );
        assert_eq!(
            respond_plan(ActiveLive, Reject).0,
            RespondPlan::DeliverToWaiter
        );
        assert_eq!(
            respond_plan(ActiveDetached, Answer).0,
            RespondPlan::ClaimResumeThenFinalize
        );
        assert_eq!(
            respond_plan(ActiveDetached, Reject).0,
            RespondPlan::PersistRejectWithoutResume
        );
        for state in [DeliveryClaimed, Terminal, SupersededHistory] {
            for response in [Answer, Reject] {
                let (plan, _) = respond_plan(state, response);
                assert_eq!(plan, RespondPlan::Conflict);
                assert!(!plan.writes() && !plan.resumes());
            }
        }
        assert!(RespondPlan::ClaimResumeThenFinalize.resumes());
        assert!(!RespondPlan::PersistRejectWithoutResume.resumes());
        assert!(!RespondPlan::DeliverToWaiter.resumes());
        assert!(RespondPlan::PersistRejectWithoutResume.writes());
    }

    #[test]
    fn scenario_56_superseded_bundle_conflicts() {
        let turns = [turn("old", T0, true), turn("new", T1, false)];
        let messages = [clar("q", Some("old"), "p-old", None), ordinary("m", "new")];
        let seen = observe_bundle(RUNNING, &turns, &messages, "p-old");
        let (state, _) = classify_bundle(&seen.facts(false, true, false));
        assert_eq!(state, BundleState::SupersededHistory);
        for response in [Response::Answer, Response::Reject] {
            assert_eq!(
                respond_plan(state, response),
                (RespondPlan::Conflict, RespondReason::Superseded)
            );
        }
    }

    #[test]
    fn second_concurrent_response_conflicts() {
        let mut f = facts(BundleTurn::Current);
        f.agent_disconnected = true;
        assert!(respond_plan(classify_bundle(&f).0, Response::Answer)
            .0
            .writes());
        // The first response claimed every pending row.
        f.has_pending_rows = false;
        f.delivery_intent = true;
        assert_eq!(
            respond_plan(classify_bundle(&f).0, Response::Answer),
            (RespondPlan::Conflict, RespondReason::AlreadyClaimed)
        );
    }

    // --- failures after the claim ---------------------------------------------------------

    #[test]
    fn scenario_57_detached_acceptance_failure_restores_and_is_retryable() {
        let (resolution, reason) = detached_resume_outcome(
            ResumeReport::NotAccepted {
                rollback_succeeded: true,
            },
            true,
        );
        assert_eq!(
            resolution,
            Resolution {
                claim: ClaimAfter::Restore,
                reply: RespondReply::RetryableError
            }
        );
        assert_eq!(reason, ResolutionReason::NotAcceptedRestored);
        // Restored rows are pending again in the current turn with the marker: answerable.
        let mut f = facts(BundleTurn::Current);
        f.agent_disconnected = true;
        assert_eq!(classify_bundle(&f).0, BundleState::ActiveDetached);
        assert_eq!(
            respond_plan(BundleState::ActiveDetached, Response::Answer).0,
            RespondPlan::ClaimResumeThenFinalize
        );
    }

    #[test]
    fn detached_resume_outcomes() {
        let outcome = |report, current| detached_resume_outcome(report, current).0;
        let terminal_error = Resolution {
            claim: ClaimAfter::KeepTerminal,
            reply: RespondReply::NonRetryableError,
        };
        for current in [true, false] {
            assert_eq!(
                outcome(ResumeReport::AcceptedAndPublished, current),
                Resolution {
                    claim: ClaimAfter::Finalize,
                    reply: RespondReply::Success
                }
            );
            assert_eq!(
                outcome(ResumeReport::AcceptedPublicationFailed, current),
                terminal_error
            );
            assert_eq!(outcome(ResumeReport::Ambiguous, current), terminal_error);
            assert_eq!(
                outcome(
                    ResumeReport::NotAccepted {
                        rollback_succeeded: false
                    },
                    current
                ),
                Resolution {
                    claim: ClaimAfter::LeaveForRecovery,
                    reply: RespondReply::NonRetryableError
                }
            );
        }
        // Never restored after a successor turn was accepted.
        assert_eq!(
            detached_resume_outcome(
                ResumeReport::NotAccepted {
                    rollback_succeeded: true
                },
                false
            ),
            (terminal_error, ResolutionReason::NotAcceptedTurnSuperseded)
        );
    }

    #[test]
    fn live_delivery_failure() {
        assert_eq!(
            live_delivery_failed(true),
            (
                Resolution {
                    claim: ClaimAfter::Restore,
                    reply: RespondReply::RetryableError
                },
                ResolutionReason::DeliveryFailedRestored
            )
        );
        assert_eq!(
            live_delivery_failed(false).0,
            Resolution {
                claim: ClaimAfter::KeepTerminal,
                reply: RespondReply::NonRetryableError
            }
        );
    }

    // --- startup reconciliation -----------------------------------------------------------

    #[test]
    fn intent_reconciliation() {
        use BundleTurn::*;
        for turn in [Current, Superseded, SessionQuarantined, Orphaned] {
            for prior in [PriorActive::Live, PriorActive::Detached] {
                assert_eq!(
                    reconcile_delivery_intent(prior, Handoff::Acknowledged, turn).0,
                    IntentRecovery::Finalize
                );
                assert_eq!(
                    reconcile_delivery_intent(prior, Handoff::Reserved, turn).0,
                    IntentRecovery::DeferToReservationRecovery
                );
            }
        }
        for turn in [Superseded, SessionQuarantined, Orphaned] {
            assert_eq!(
                reconcile_delivery_intent(PriorActive::Live, Handoff::None, turn),
                (
                    IntentRecovery::RetireKeepHistory,
                    IntentReason::TurnNoLongerCurrent
                )
            );
        }
        assert_eq!(
            reconcile_delivery_intent(PriorActive::Live, Handoff::None, Current),
            (
                IntentRecovery::Restore {
                    record_agent_disconnected: true
                },
                IntentReason::NoHandoffStillCurrent
            )
        );
        assert_eq!(
            reconcile_delivery_intent(PriorActive::Detached, Handoff::None, Current).0,
            IntentRecovery::Restore {
                record_agent_disconnected: false
            }
        );
    }

    #[test]
    fn restored_claim_after_restart_is_detached_and_answerable() {
        // Claimed rows (provisionally answered) in the current turn, no handoff.
        let turns = [turn("t1", T0, false)];
        let messages = [clar("a", Some("t1"), "p1", Some("answered"))];
        let seen = observe_bundle(RUNNING, &turns, &messages, "p1");
        assert!(seen.pending_rows.is_empty());
        let (recovery, _) = reconcile_delivery_intent(PriorActive::Live, Handoff::None, seen.turn);
        assert_eq!(
            recovery,
            IntentRecovery::Restore {
                record_agent_disconnected: true
            }
        );
        // After the restore: pending, marker recorded, no waiter survives a restart.
        let f = BundleFacts {
            turn: seen.turn,
            has_pending_rows: true,
            waiter_live: false,
            agent_disconnected: true,
            delivery_intent: false,
        };
        assert_eq!(classify_bundle(&f).0, BundleState::ActiveDetached);
    }
}
