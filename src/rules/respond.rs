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
//! 6. What a respond reply reports: [`bundle_winner`] (the status the rows record) and
//!    [`respond_standing`] (this call claimed, lost to an earlier winner, found the bundle no
//!    longer active, or failed after its claim).
//! 7. The user's answer to a permission: [`permission_verdict`] (answerable, not found,
//!    expired, stale, already resolved) and [`permission_outcome`] (approved or rejected).
//!
//! Nothing here performs a write; the plans say which writes the service performs, in order.

use core::cmp::Ordering;

use super::model::{MessageKind, MessageRecord, RequestStatus, SessionState, TurnRecord};
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

// --- what a respond reply reports (the reference client's envelope) -----------------------------

/// The terminal status a winning response gave a bundle's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WinnerStatus {
    Answered,
    Rejected,
}

impl WinnerStatus {
    /// The wire spelling (`answered`, `rejected`): the rows' `metadata.status`.
    pub const fn as_str(self) -> &'static str {
        match self {
            WinnerStatus::Answered => "answered",
            WinnerStatus::Rejected => "rejected",
        }
    }

    /// The status a response of `kind` gives the rows it claims.
    pub const fn of(kind: Response) -> WinnerStatus {
        match kind {
            Response::Answer => WinnerStatus::Answered,
            Response::Reject => WinnerStatus::Rejected,
        }
    }
}

/// The winner a bundle's rows record: the status of the first row, in `bundle` order (indices
/// into `rows`, as [`BundleObservation::rows`]), that is `answered` or `rejected`; `None` when no
/// row records one (every row pending, expired or cancelled: nobody won).
pub fn bundle_winner<M: MessageRecord>(rows: &[M], bundle: &[usize]) -> Option<WinnerStatus> {
    bundle
        .iter()
        .filter_map(|&i| rows.get(i))
        .find_map(|row| match row.status() {
            RequestStatus::Answered => Some(WinnerStatus::Answered),
            RequestStatus::Rejected => Some(WinnerStatus::Rejected),
            _ => None,
        })
}

/// Where a respond call leaves its caller (the reference client's envelope: `success`, `claimed`,
/// `status`, `response`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RespondStanding {
    /// This call's response won the bundle and was handed off: the rows carry its status.
    Claimed(WinnerStatus),
    /// Another response had already won (the call wrote nothing): its status is reported, so the
    /// loser learns what the bundle was answered with.
    Lost(WinnerStatus),
    /// Nothing was written and no response won (superseded, expired, cancelled, orphaned): the
    /// bundle is no longer active.
    NoLongerActive,
    /// This call claimed the bundle, then the handoff failed ([`RespondReply::RetryableError`]:
    /// the bundle was restored; [`RespondReply::NonRetryableError`]: it stays terminal).
    Failed,
}

/// The standing of a respond call: its reply, the kind of its response, and the winner the
/// bundle's rows record after the call ([`bundle_winner`], read after it). A success is this
/// call's claim; a conflict is a loss when a winner is recorded (a `delivery_claimed` bundle's
/// rows carry the claiming response's status already), else the bundle is no longer active; an
/// error after a claim is a failure.
pub fn respond_standing(
    reply: RespondReply,
    kind: Response,
    winner: Option<WinnerStatus>,
) -> RespondStanding {
    match reply {
        RespondReply::Success => RespondStanding::Claimed(WinnerStatus::of(kind)),
        RespondReply::RetryableError | RespondReply::NonRetryableError => RespondStanding::Failed,
        RespondReply::Conflict => {
            winner.map_or(RespondStanding::NoLongerActive, RespondStanding::Lost)
        }
    }
}

// --- the user's answer to a permission request ----------------------------------------------

/// Whether a permission request may take the user's answer now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PermissionVerdict {
    /// The request (its index) is the session's live permission: it may be answered.
    Answerable(usize),
    /// No such request, or one that ended unanswered (`expired`, ...): `permission_not_found`.
    NotFound,
    /// The request (its index) is pending but has no `metadata.request_id`: no live request
    /// stands behind it. It is expired (the service records `expired`) and not answerable
    /// (`permission_not_found`).
    Expired(usize),
    /// The request is pending but not the one asked about (another `request_id`, a newer
    /// generation), or not the live one (not the latest permission of the session's current
    /// turn, or the session has no current turn): `permission_stale`.
    Stale,
    /// The request was approved or rejected already: `permission_already_resolved`.
    AlreadyResolved,
}

/// Why [`permission_verdict`] decided what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PermissionReason {
    LiveRequest,
    NoSuchRequest,
    EndedUnanswered,
    NoRequestIdentity,
    OtherGeneration,
    NotLatestOfCurrentTurn,
    Resolved,
}

/// Decides whether the user may answer permission request `pending_id` / `request_id` of a
/// session (SPEC §4's live permission; the codes of the reference client's backend). `messages`
/// are the session's messages in insertion order, `turns` its turn history, `state` its state;
/// `request_id_of` reads a row's `metadata.request_id`.
///
/// The row asked about is the `permission_request` of `pending_id` whose request id is
/// `request_id`, else the newest row of `pending_id`. In order: none → not found; approved or
/// rejected → already resolved; any other non-pending status → not found; pending without a
/// request id → expired; another request id → stale; not the latest `permission_request` of the
/// current turn (by `created_at`, then insertion order; SPEC §2 current turn, quarantine
/// included) → stale; otherwise answerable.
pub fn permission_verdict<T: TurnRecord, M: MessageRecord>(
    state: Option<SessionState>,
    turns: &[T],
    messages: &[M],
    pending_id: &str,
    request_id: &str,
    request_id_of: impl Fn(&M) -> Option<&str>,
) -> (PermissionVerdict, PermissionReason) {
    let of_pending = || {
        messages.iter().enumerate().filter(|(_, m)| {
            m.kind() == MessageKind::PermissionRequest && m.pending_id() == Some(pending_id)
        })
    };
    let target = of_pending()
        .find(|&(_, m)| request_id_of(m) == Some(request_id))
        .or_else(|| of_pending().last());
    let Some((index, row)) = target else {
        return (PermissionVerdict::NotFound, PermissionReason::NoSuchRequest);
    };
    match row.status() {
        RequestStatus::Pending => {}
        RequestStatus::Approved | RequestStatus::Rejected => {
            return (
                PermissionVerdict::AlreadyResolved,
                PermissionReason::Resolved,
            )
        }
        _ => {
            return (
                PermissionVerdict::NotFound,
                PermissionReason::EndedUnanswered,
            )
        }
    }
    match request_id_of(row) {
        None | Some("") => {
            return (
                PermissionVerdict::Expired(index),
                PermissionReason::NoRequestIdentity,
            )
        }
        Some(id) if id != request_id => {
            return (PermissionVerdict::Stale, PermissionReason::OtherGeneration)
        }
        Some(_) => {}
    }
    let referenced = |id: &str| messages.iter().any(|m| m.turn_id() == Some(id));
    let current = current_turn(Some(turns), state, referenced)
        .0
        .turn()
        .and_then(|i| turns.get(i))
        .map(TurnRecord::id);
    let latest = current.and_then(|turn_id| {
        let mut latest: Option<usize> = None;
        for (i, m) in messages.iter().enumerate() {
            let later = latest
                .and_then(|held| messages.get(held))
                .is_none_or(|held| m.created_at().cmp(held.created_at()) != Ordering::Less);
            if m.kind() == MessageKind::PermissionRequest && m.turn_id() == Some(turn_id) && later {
                latest = Some(i);
            }
        }
        latest
    });
    if latest == Some(index) {
        (
            PermissionVerdict::Answerable(index),
            PermissionReason::LiveRequest,
        )
    } else {
        (
            PermissionVerdict::Stale,
            PermissionReason::NotLatestOfCurrentTurn,
        )
    }
}

/// What the user's answer makes of a permission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PermissionOutcome {
    Approved,
    Rejected,
}

impl PermissionOutcome {
    /// The wire spelling (`approved`, `rejected`): the row's `metadata.status`.
    pub const fn as_str(self) -> &'static str {
        match self {
            PermissionOutcome::Approved => "approved",
            PermissionOutcome::Rejected => "rejected",
        }
    }
}

/// The outcome of the user's answer: a cancellation (the dialog dismissed) rejects; a chosen
/// option rejects when its kind is a rejection (`reject_once`, `reject_always`, any `reject_…`),
/// else approves. `offered_kind` is the kind of the chosen option among those the request
/// offers; `None` (not offered) → `None`: the answer is refused.
pub fn permission_outcome(
    cancelled: bool,
    offered_kind: Option<&str>,
) -> Option<PermissionOutcome> {
    if cancelled {
        return Some(PermissionOutcome::Rejected);
    }
    offered_kind.map(|kind| {
        if kind.starts_with("reject_") {
            PermissionOutcome::Rejected
        } else {
            PermissionOutcome::Approved
        }
    })
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
            flags: Default::default(),
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
            flags: Default::default(),
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

    // --- respond standing ------------------------------------------------------------------

    #[test]
    fn the_winner_is_the_first_row_that_records_one() {
        let rows = [
            clar("a", Some("t1"), "p1", Some("expired")),
            clar("b", Some("t1"), "p1", Some("rejected")),
            clar("c", Some("t1"), "p1", Some("answered")),
        ];
        assert_eq!(
            bundle_winner(&rows, &[0, 1, 2]),
            Some(WinnerStatus::Rejected)
        );
        assert_eq!(bundle_winner(&rows, &[2, 1]), Some(WinnerStatus::Answered));
        assert_eq!(bundle_winner(&rows, &[0]), None);
        assert_eq!(bundle_winner(&rows, &[]), None);
        assert_eq!(
            bundle_winner(&rows, &[7]),
            None,
            "an index outside is no row"
        );
        let pending = [clar("a", Some("t1"), "p1", None)];
        assert_eq!(bundle_winner(&pending, &[0]), None);
    }

    #[test]
    fn standing_of_each_reply() {
        use RespondReply::*;
        let answered = Some(WinnerStatus::Answered);
        assert_eq!(
            respond_standing(Success, Response::Reject, answered),
            RespondStanding::Claimed(WinnerStatus::Rejected),
            "a success reports this call's own response"
        );
        assert_eq!(
            respond_standing(Success, Response::Answer, None),
            RespondStanding::Claimed(WinnerStatus::Answered)
        );
        assert_eq!(
            respond_standing(Conflict, Response::Reject, answered),
            RespondStanding::Lost(WinnerStatus::Answered),
            "a loser reports the winner's status, not its own"
        );
        assert_eq!(
            respond_standing(Conflict, Response::Answer, None),
            RespondStanding::NoLongerActive
        );
        for failed in [RetryableError, NonRetryableError] {
            assert_eq!(
                respond_standing(failed, Response::Answer, answered),
                RespondStanding::Failed
            );
        }
        assert_eq!(WinnerStatus::of(Response::Answer).as_str(), "answered");
        assert_eq!(WinnerStatus::of(Response::Reject).as_str(), "rejected");
    }

    #[test]
    fn every_conflicting_state_is_lost_or_no_longer_active_by_its_rows() {
        // delivery_claimed and terminal bundles whose rows record a response are losses;
        // superseded (pending) rows and rows that ended unanswered are no longer active.
        let turns = [turn("t1", T0, true), turn("t2", T1, false)];
        for (status, in_turn, expected) in [
            (Some("answered"), "t2", Some(WinnerStatus::Answered)),
            (Some("rejected"), "t2", Some(WinnerStatus::Rejected)),
            (Some("expired"), "t2", None),
            (Some("cancelled"), "t2", None),
            (None, "t1", None),
        ] {
            let messages = [clar("a", Some(in_turn), "p1", status)];
            let seen = observe_bundle(RUNNING, &turns, &messages, "p1");
            let (state, _) = classify_bundle(&seen.facts(false, false, false));
            assert_eq!(
                respond_plan(state, Response::Answer).0,
                RespondPlan::Conflict
            );
            let winner = bundle_winner(&messages, &seen.rows);
            assert_eq!(winner, expected, "{status:?}");
            let standing = respond_standing(RespondReply::Conflict, Response::Answer, winner);
            assert_eq!(
                standing,
                expected.map_or(RespondStanding::NoLongerActive, RespondStanding::Lost)
            );
        }
    }

    // --- permissions -----------------------------------------------------------------------

    fn perm(id: &str, turn: &str, pending_id: &str, status: Option<&str>, at: &str) -> Message {
        Message {
            id: id.into(),
            turn_id: Some(turn.into()),
            kind: MessageKind::PermissionRequest,
            status: RequestStatus::parse(status),
            pending_id: Some(pending_id.into()),
            question_total: None,
            flags: Default::default(),
            created_at: Timestamp::parse(at),
            updated_at: None,
        }
    }

    /// The request id of rows `a`, `b`, `c`: `req-a`, ...; row `bare` has none.
    fn request_id(m: &Message) -> Option<&str> {
        match m.id.as_str() {
            "a" => Some("req-a"),
            "b" => Some("req-b"),
            "c" => Some("req-c"),
            "empty" => Some(""),
            _ => None,
        }
    }

    fn verdict(
        state: Option<SessionState>,
        turns: &[Turn],
        messages: &[Message],
        pending_id: &str,
        request: &str,
    ) -> PermissionVerdict {
        permission_verdict(state, turns, messages, pending_id, request, request_id).0
    }

    #[test]
    fn the_latest_pending_permission_of_the_current_turn_is_answerable() {
        let turns = [turn("t1", T0, false)];
        let messages = [ordinary("m", "t1"), perm("a", "t1", "p1", None, T1)];
        assert_eq!(
            permission_verdict(RUNNING, &turns, &messages, "p1", "req-a", request_id),
            (
                PermissionVerdict::Answerable(1),
                PermissionReason::LiveRequest
            )
        );
        let waiting = Some(SessionState::WaitingForInput);
        assert_eq!(
            verdict(waiting, &turns, &messages, "p1", "req-a"),
            PermissionVerdict::Answerable(1)
        );
    }

    #[test]
    fn unknown_and_ended_requests_are_not_found() {
        let turns = [turn("t1", T0, false)];
        let messages = [
            perm("a", "t1", "p1", Some("expired"), T1),
            perm("b", "t1", "p2", Some("cancelled"), T1),
            clar("c", Some("t1"), "p3", None),
        ];
        for (pending, request) in [
            ("p1", "req-a"),
            ("p2", "req-b"),
            ("p3", "req-c"),
            ("p9", "x"),
        ] {
            assert_eq!(
                verdict(RUNNING, &turns, &messages, pending, request),
                PermissionVerdict::NotFound,
                "{pending}"
            );
        }
    }

    #[test]
    fn resolved_requests_are_already_resolved() {
        let turns = [turn("t1", T0, false)];
        for status in ["approved", "rejected"] {
            let messages = [perm("a", "t1", "p1", Some(status), T1)];
            assert_eq!(
                verdict(RUNNING, &turns, &messages, "p1", "req-a"),
                PermissionVerdict::AlreadyResolved
            );
            // Whichever request id is asked about: the newest row of the pending id answers.
            assert_eq!(
                verdict(RUNNING, &turns, &messages, "p1", "other"),
                PermissionVerdict::AlreadyResolved
            );
        }
    }

    #[test]
    fn a_pending_row_without_a_request_id_is_expired() {
        let turns = [turn("t1", T0, false)];
        for id in ["bare", "empty"] {
            let messages = [perm(id, "t1", "p1", None, T1)];
            assert_eq!(
                permission_verdict(RUNNING, &turns, &messages, "p1", "req-a", request_id),
                (
                    PermissionVerdict::Expired(0),
                    PermissionReason::NoRequestIdentity
                ),
                "{id}"
            );
        }
    }

    #[test]
    fn another_generation_or_a_request_not_live_is_stale() {
        let turns = [turn("t1", T0, true), turn("t2", T1, false)];
        // Another request id for the same pending id.
        let messages = [perm("a", "t2", "p1", None, T1)];
        assert_eq!(
            permission_verdict(RUNNING, &turns, &messages, "p1", "req-b", request_id),
            (PermissionVerdict::Stale, PermissionReason::OtherGeneration)
        );
        // A request of a superseded turn.
        let messages = [perm("a", "t1", "p1", None, T0), ordinary("m", "t2")];
        assert_eq!(
            permission_verdict(RUNNING, &turns, &messages, "p1", "req-a", request_id),
            (
                PermissionVerdict::Stale,
                PermissionReason::NotLatestOfCurrentTurn
            )
        );
        // Not the latest permission of the current turn (by created_at, then position).
        let messages = [
            perm("a", "t2", "p1", None, T1),
            perm("b", "t2", "p2", None, T2),
            perm("c", "t2", "p3", None, T2),
        ];
        assert_eq!(
            verdict(RUNNING, &turns, &messages, "p1", "req-a"),
            PermissionVerdict::Stale
        );
        assert_eq!(
            verdict(RUNNING, &turns, &messages, "p2", "req-b"),
            PermissionVerdict::Stale,
            "a later position wins a created_at tie"
        );
        assert_eq!(
            verdict(RUNNING, &turns, &messages, "p3", "req-c"),
            PermissionVerdict::Answerable(2)
        );
        // A session that is not input-capable has no current turn.
        let messages = [perm("a", "t2", "p1", None, T1)];
        for state in [SessionState::Idle, SessionState::Completed] {
            assert_eq!(
                verdict(Some(state), &turns, &messages, "p1", "req-a"),
                PermissionVerdict::Stale
            );
        }
    }

    #[test]
    fn the_answer_approves_unless_it_rejects_or_cancels() {
        assert_eq!(
            permission_outcome(false, Some("allow_once")),
            Some(PermissionOutcome::Approved)
        );
        assert_eq!(
            permission_outcome(false, Some("allow_always")),
            Some(PermissionOutcome::Approved)
        );
        assert_eq!(
            permission_outcome(false, Some("reject_once")),
            Some(PermissionOutcome::Rejected)
        );
        assert_eq!(
            permission_outcome(false, Some("reject_always")),
            Some(PermissionOutcome::Rejected)
        );
        assert_eq!(permission_outcome(false, None), None, "not offered");
        assert_eq!(
            permission_outcome(true, None),
            Some(PermissionOutcome::Rejected),
            "a cancellation rejects"
        );
        assert_eq!(PermissionOutcome::Approved.as_str(), "approved");
        assert_eq!(PermissionOutcome::Rejected.as_str(), "rejected");
    }
}
