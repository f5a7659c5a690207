//! The user's actions (SPEC §13): answering or skipping a clarification bundle. When a respond
//! may start, what its reply says, whether a reply still counts, how long a settled answer
//! holds against the server's other inputs, and what the user may do in a session now.
//!
//! A respond is two inputs: its **start** (the user answered or skipped the live bundle) and its
//! **reply** (the server's answer to the request, or its failure). The store holds one attempt
//! per bundle; these rules decide every step of it.

use std::cmp::Ordering;

use super::model::{RequestStatus, Revision, RowFlags};
use super::revision::compare_revisions;

/// What the server's reply to a respond said (SPEC §13), from its HTTP status and body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// This request's response was taken.
    Won,
    /// Another response had already been taken (`claimed: false`): the bundle is settled by it.
    Lost,
    /// The bundle is no longer active (HTTP 409): expired, cancelled, superseded or taken.
    NoLongerActive,
    /// The request was refused as it stands (HTTP 400, 403, 404, 413, ...): retrying the same
    /// body cannot succeed, and the bundle stays answerable.
    Refused,
    /// The request may not have been handled: a 5xx, a network failure, a timeout, or a reply
    /// that cannot be read. Nothing is hidden; the bundle is answerable again.
    Failed(Failure),
}

/// Why a respond failed ([`Outcome::Failed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// HTTP 503 (or 429, 408): the server says try again (SPEC §8 `retryable_error`).
    Retryable,
    /// Another 5xx.
    Server,
    /// No HTTP reply at all.
    Network,
    /// The caller gave up waiting.
    Timeout,
    /// A reply whose status or body says nothing this rule can read.
    Unreadable,
}

impl Outcome {
    /// The wire spelling (`respondReply`'s `outcome`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Won => "won",
            Outcome::Lost => "lost",
            Outcome::NoLongerActive => "no_longer_active",
            Outcome::Refused => "refused",
            Outcome::Failed(_) => "failed",
        }
    }

    /// Won, lost or no longer active: the bundle no longer needs the user.
    pub const fn settles(self) -> bool {
        matches!(self, Outcome::Won | Outcome::Lost | Outcome::NoLongerActive)
    }
}

impl Failure {
    pub const fn as_str(self) -> &'static str {
        match self {
            Failure::Retryable => "retryable",
            Failure::Server => "server_error",
            Failure::Network => "network",
            Failure::Timeout => "timeout",
            Failure::Unreadable => "unreadable",
        }
    }
}

/// The reference server's SPEC §8 outcome (`outcome` in its reply).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerOutcome {
    Success,
    Conflict,
    RetryableError,
    NonRetryableError,
}

impl ServerOutcome {
    pub fn parse(text: &str) -> Option<ServerOutcome> {
        Some(match text {
            "success" => ServerOutcome::Success,
            "conflict" => ServerOutcome::Conflict,
            "retryable_error" => ServerOutcome::RetryableError,
            "non_retryable_error" => ServerOutcome::NonRetryableError,
            _ => return None,
        })
    }
}

/// What a reply body says, as far as the outcome goes: the reference client's envelope
/// (`success`, `claimed`) and the reference server's (`outcome`). `None` fields were absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplyBody {
    pub success: Option<bool>,
    pub claimed: Option<bool>,
    pub outcome: Option<ServerOutcome>,
    /// `error.code` says the request is no longer there to answer ([`gone`]).
    pub gone: bool,
}

/// The error codes that say a permission is no longer available to answer (the reference
/// client's `isStalePermissionResponse`): whatever the HTTP status, the request is settled as
/// [`Outcome::NoLongerActive`].
pub fn gone(code: &str) -> bool {
    matches!(
        code,
        "permission_not_found" | "permission_stale" | "permission_already_resolved"
    )
}

/// How a respond request ended, before classification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// An HTTP reply: its status and its body (`None`: not JSON, or not an object).
    Reply(u16, Option<ReplyBody>),
    Network,
    Timeout,
}

/// The outcome of a respond (SPEC §13) from how its request ended.
///
/// - A 2xx is read from its body: `claimed: false` is [`Outcome::Lost`] (another caller won;
///   the reference client's backend answers so), `claimed: true` is [`Outcome::Won`]; without
///   `claimed`, the reference server's `outcome` decides (`success` won, `conflict` lost), then
///   `success: true` (won). A 2xx that says none of these is [`Failure::Unreadable`]: whether
///   the answer was taken is not known, so nothing is hidden (a retry then learns it).
/// - 409 is [`Outcome::NoLongerActive`], and so is any 4xx whose `error.code` is [`gone`]; 408,
///   429 and 503 are [`Failure::Retryable`]; any
///   other 4xx is [`Outcome::Refused`]; any other 5xx is [`Failure::Server`]; anything else
///   (1xx, 3xx, a status beyond 599) is [`Failure::Unreadable`].
pub fn classify(transport: Transport) -> Outcome {
    let (status, body) = match transport {
        Transport::Network => return Outcome::Failed(Failure::Network),
        Transport::Timeout => return Outcome::Failed(Failure::Timeout),
        Transport::Reply(status, body) => (status, body),
    };
    match status {
        200..=299 => {
            let body = body.unwrap_or_default();
            match (body.claimed, body.outcome, body.success) {
                (Some(false), ..) => Outcome::Lost,
                (Some(true), ..) => Outcome::Won,
                (None, Some(ServerOutcome::Success), _) => Outcome::Won,
                (None, Some(ServerOutcome::Conflict), _) => Outcome::Lost,
                (None, None, Some(true)) => Outcome::Won,
                _ => Outcome::Failed(Failure::Unreadable),
            }
        }
        409 => Outcome::NoLongerActive,
        400..=499 if body.is_some_and(|b| b.gone) => Outcome::NoLongerActive,
        408 | 429 | 503 => Outcome::Failed(Failure::Retryable),
        400..=499 => Outcome::Refused,
        500..=599 => Outcome::Failed(Failure::Server),
        _ => Outcome::Failed(Failure::Unreadable),
    }
}

/// Where an attempt stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Started; no reply yet.
    InFlight,
    /// Won, lost or no longer active, at the server's position when the reply says it
    /// (the session's projection revision after handling).
    Settled {
        outcome: Outcome,
        position: Option<Revision>,
    },
    /// Refused or failed: the bundle is answerable again.
    Open(Outcome),
}

/// What a start of a respond may do (SPEC §13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// A new attempt: the app sends the request.
    New,
    /// The bundle's attempt is already in flight: the start returns that attempt and no second
    /// request is sent.
    InFlight,
}

/// Why a respond may not start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The session's live question is not known yet (SPEC §11): the engine does not know
    /// enough to answer.
    Unknown,
    /// The bundle is not the session's live question (none is, or another one is); for a
    /// permission, not the one the session is blocked on.
    NotLive,
    /// The permission the session is blocked on has no request identity: it cannot be answered
    /// ([`permission_answerable`]).
    Expired,
}

impl Refusal {
    pub const fn as_str(self) -> &'static str {
        match self {
            Refusal::Unknown => "live_question_unknown",
            Refusal::NotLive => "bundle_not_live",
            Refusal::Expired => "permission_expired",
        }
    }
}

/// Whether the user can answer the permission a session is blocked on (SPEC §13): only one that
/// carries its request identity (`metadata.request_id`: the server answers a permission by it).
/// One without is shown as expired and offers nothing (the reference client's
/// `parsePermission`), while the session still counts as blocked (SPEC §3).
pub fn permission_answerable(flags: RowFlags) -> bool {
    flags.identified()
}

/// A blocked permission's status as the user sees it: `expired` when it cannot be answered
/// ([`permission_answerable`]), else its own.
pub fn permission_shown(status: RequestStatus, flags: RowFlags) -> RequestStatus {
    if status.is_pending() && !permission_answerable(flags) {
        RequestStatus::Expired
    } else {
        status
    }
}

/// What a permission respond may target: the permission the session is blocked on (SPEC §3)
/// as `live` for [`may_start`] — its `pending_id` when it can be answered; `Err(Expired)` when it
/// cannot; `Ok(None)` when none blocks the session.
/// (`blocked`: its `pending_id` and whether it is [`permission_answerable`]).
pub fn permission_target(blocked: Option<(Option<&str>, bool)>) -> Result<Option<&str>, Refusal> {
    match blocked {
        None => Ok(None),
        Some((pending_id, true)) => Ok(pending_id),
        Some((_, false)) => Err(Refusal::Expired),
    }
}

/// May the user answer or skip bundle `pending_id` now (or answer permission `pending_id`)?
/// `live` is the session's live bundle (`None`: none; `Err(Unknown)`: not known), as discovery
/// finds it with this store's settled bundles hidden, or the [`permission_target`]; `held` the phase of the bundle's attempt, if any. An attempt in flight is
/// returned instead of a second one; a settled bundle is never live, so it cannot start again;
/// a refused or failed one can (the retry).
pub fn may_start(
    live: Result<Option<&str>, Refusal>,
    pending_id: &str,
    held: Option<&Phase>,
) -> Result<Start, Refusal> {
    if matches!(held, Some(Phase::InFlight)) {
        return Ok(Start::InFlight);
    }
    match live? {
        Some(live) if live == pending_id => Ok(Start::New),
        _ => Err(Refusal::NotLive),
    }
}

/// Why a reply changed nothing (`respondReply`'s `reason`, and `explain`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stale {
    /// No attempt with this number is held (never started here, or forgotten).
    UnknownAttempt,
    /// A newer attempt for the same bundle started after this one.
    Superseded,
    /// The attempt already has its reply (a duplicate or late second reply).
    AlreadyReplied,
}

impl Stale {
    pub const fn as_str(self) -> &'static str {
        match self {
            Stale::UnknownAttempt => "unknown_attempt",
            Stale::Superseded => "attempt_superseded",
            Stale::AlreadyReplied => "already_replied",
        }
    }
}

/// Does the reply to attempt `attempt` count? `held` is the bundle's current attempt (its
/// number and phase), `None` when no attempt with that number was ever held here. Only the
/// first reply to the current attempt counts.
pub fn reply_counts(attempt: u64, held: Option<(u64, &Phase)>) -> Result<(), Stale> {
    match held {
        None => Err(Stale::UnknownAttempt),
        Some((current, _)) if current != attempt => Err(Stale::Superseded),
        Some((_, Phase::InFlight)) => Ok(()),
        Some(_) => Err(Stale::AlreadyReplied),
    }
}

/// Is a reply worth settling? Only while a row of its bundle (or its permission) is still pending
/// in the data, wherever discovery stands now: a reply that arrives after the rows all turned
/// terminal changes nothing (the data already says it), and one for rows an older projection
/// hides for a while still settles them, so they cannot show again when a newer one arrives.
pub fn settles_now(outcome: Outcome, still_pending: bool) -> bool {
    outcome.settles() && still_pending
}

/// Does a row of a settled bundle lift the settlement, so the row's own status shows again?
/// Only a pending row carried by an event whose projection revision is strictly newer than the
/// settlement's position: the server restored the bundle after handling the answer. An input
/// produced before the server handled it (an older or equal revision, a REST page, which carries
/// none, a replayed frame) never does; nor does anything when the reply gave no position (the
/// reference client's envelope): the settlement then holds until the rows themselves turn
/// terminal.
pub fn lifts(
    position: Option<&Revision>,
    row_pending: bool,
    row_revision: Option<&Revision>,
) -> bool {
    row_pending && after(position, row_revision)
}

/// Whether `revision` is strictly newer than the settlement's `position`: both present and
/// comparable (a malformed epoch orders nothing), and `revision` after it.
fn after(position: Option<&Revision>, revision: Option<&Revision>) -> bool {
    match (position, revision) {
        (Some(position), Some(revision)) => {
            matches!(compare_revisions(position, revision), Ok(Ordering::Less))
        }
        _ => false,
    }
}

/// A clarification row's status as every rule reads it while its bundle is settled (SPEC §13):
/// a pending row counts as answered; any other status is the row's own.
pub fn settled_status(status: RequestStatus, settled: bool) -> RequestStatus {
    if settled && status.is_pending() {
        RequestStatus::Answered
    } else {
        status
    }
}

/// Whether a settlement is done with: its bundle's rows turned terminal in the data (they now say
/// what the settlement said), or the settlement was lifted.
pub fn retires(rows_pending: bool, lifted: bool) -> bool {
    !rows_pending || lifted
}

/// Whether a task's held status summary is no newer than a settlement of one of its sessions
/// (SPEC §13): the summary the store held when the reply settled the bundle (`mark`), or an
/// older one. Such a summary says what the server knew before it handled the answer, so the
/// per-task rule over the task's sessions decides instead (their settled rows counted as
/// answered) until a newer summary arrives. Without a mark (no summary was held then) every
/// summary is newer.
pub fn summary_predates(held: Option<u64>, mark: Option<u64>) -> bool {
    matches!((held, mark), (Some(held), Some(mark)) if held <= mark)
}

/// Whose word decides a session's pending action while one of its bundles is settled: the rows
/// with the settled bundle counted as answered (SPEC §4) while the bundle is in the session's
/// current turn and the held projection is not strictly newer than the settlement's position
/// (without a position it never is); else the held projection. A settled bundle outside the
/// current turn (the server moved on to a newer turn, the session ended) cannot be what the held
/// projection says is pending, so it says nothing of the session's action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionSource {
    Projection,
    Rows,
}

pub fn session_action_source(
    position: Option<&Revision>,
    projection: Option<&Revision>,
    in_current_turn: bool,
) -> ActionSource {
    if !in_current_turn || after(position, projection) {
        ActionSource::Projection
    } else {
        ActionSource::Rows
    }
}

/// What the user may do in a session now (SPEC §13): one derived answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offered {
    /// Answer or skip the live bundle (one is live, and its respond is not in flight).
    pub respond: bool,
    /// Stop the agent: while it works, and while a question waits on a connected agent; not
    /// while the question is detached (`agent_disconnected`: there is no agent to stop).
    pub cancel: bool,
    /// Send a new message: only when no question is live and the agent is not working.
    pub send: bool,
}

/// [`Offered`] from what the store knows of the session: whether its agent is working (state
/// `RUNNING`), its live bundle (`Some(detached)` when one is live), whether that bundle's respond
/// is in flight, and whether the session can take input at all (not terminal).
pub fn offered(working: bool, live: Option<bool>, in_flight: bool, open: bool) -> Offered {
    if !open {
        return Offered::default();
    }
    match live {
        Some(detached) => Offered {
            respond: !in_flight,
            cancel: !detached,
            send: false,
        },
        None => Offered {
            respond: false,
            cancel: working,
            send: !working,
        },
    }
}

/// Which session to open after the user deleted one (SPEC §13): deleting a session that is not
/// the open one changes nothing; deleting the open one opens the newest remaining session of the
/// task (the first of `remaining`, newest first, whose id is not empty), else none; with none
/// open, none opens.
pub fn open_after_delete<'a>(
    open: Option<&'a str>,
    deleted: &str,
    mut remaining: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    match open {
        Some(open) if open != deleted => Some(open),
        Some(_) => remaining.find(|id| !id.is_empty() && *id != deleted),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(epoch: &str, sequence: u64) -> Revision {
        Revision {
            epoch: epoch.into(),
            sequence,
        }
    }

    fn body(
        success: Option<bool>,
        claimed: Option<bool>,
        outcome: Option<&str>,
    ) -> Option<ReplyBody> {
        Some(ReplyBody {
            success,
            claimed,
            outcome: outcome.and_then(ServerOutcome::parse),
            gone: false,
        })
    }

    #[test]
    fn a_permission_gone_by_its_error_code_is_no_longer_active_whatever_the_4xx() {
        let gone_body = |code: &str| {
            Some(ReplyBody {
                success: Some(false),
                gone: gone(code),
                ..ReplyBody::default()
            })
        };
        for code in [
            "permission_not_found",
            "permission_stale",
            "permission_already_resolved",
        ] {
            assert_eq!(
                classify(Transport::Reply(404, gone_body(code))),
                Outcome::NoLongerActive
            );
            // A 5xx is still a failure: the request may not have been handled.
            assert_eq!(
                classify(Transport::Reply(500, gone_body(code))),
                Outcome::Failed(Failure::Server)
            );
        }
        // Another code is refused as before; an option not offered stays answerable.
        assert_eq!(
            classify(Transport::Reply(404, gone_body("not_found"))),
            Outcome::Refused
        );
        assert_eq!(
            classify(Transport::Reply(
                400,
                gone_body("permission_option_not_offered")
            )),
            Outcome::Refused
        );
    }

    #[test]
    fn a_summary_no_newer_than_the_settlement_gives_way_to_the_sessions() {
        assert!(summary_predates(Some(3), Some(3)));
        assert!(summary_predates(Some(2), Some(3)));
        // A newer summary is the server's word after the answer.
        assert!(!summary_predates(Some(4), Some(3)));
        // No summary held at the settlement: any summary that came since is newer.
        assert!(!summary_predates(Some(1), None));
        assert!(!summary_predates(None, Some(3)));
    }

    #[test]
    fn only_a_permission_with_its_request_identity_can_be_answered() {
        let identified = RowFlags::of(Some("req-1"), false);
        let anonymous = RowFlags::of(None, false);
        assert!(permission_answerable(identified));
        assert!(!permission_answerable(anonymous));
        assert!(!permission_answerable(RowFlags::of(Some(""), true)));
        // Shown as expired while it blocks the session; a resolved one keeps its status.
        assert_eq!(
            permission_shown(RequestStatus::Pending, anonymous),
            RequestStatus::Expired
        );
        assert_eq!(
            permission_shown(RequestStatus::Pending, identified),
            RequestStatus::Pending
        );
        assert_eq!(
            permission_shown(RequestStatus::Approved, anonymous),
            RequestStatus::Approved
        );
        assert_eq!(permission_target(None), Ok(None));
        assert_eq!(permission_target(Some((Some("p1"), true))), Ok(Some("p1")));
        assert_eq!(
            permission_target(Some((Some("p1"), false))),
            Err(Refusal::Expired)
        );
        assert_eq!(
            may_start(permission_target(Some((Some("p1"), false))), "p1", None),
            Err(Refusal::Expired)
        );
        assert_eq!(
            may_start(permission_target(Some((Some("p1"), true))), "p1", None),
            Ok(Start::New)
        );
        assert_eq!(
            may_start(permission_target(Some((Some("p2"), true))), "p1", None),
            Err(Refusal::NotLive)
        );
    }

    #[test]
    fn the_reference_clients_envelope_tells_a_win_from_a_loss_by_claimed_alone() {
        assert_eq!(
            classify(Transport::Reply(200, body(Some(true), Some(true), None))),
            Outcome::Won
        );
        assert_eq!(
            classify(Transport::Reply(200, body(Some(true), Some(false), None))),
            Outcome::Lost
        );
        // claimed beats outcome and success.
        assert_eq!(
            classify(Transport::Reply(
                200,
                body(Some(true), Some(false), Some("success"))
            )),
            Outcome::Lost
        );
    }

    #[test]
    fn the_reference_servers_outcome_decides_without_claimed() {
        assert_eq!(
            classify(Transport::Reply(200, body(None, None, Some("success")))),
            Outcome::Won
        );
        assert_eq!(
            classify(Transport::Reply(200, body(None, None, Some("conflict")))),
            Outcome::Lost
        );
        assert_eq!(
            classify(Transport::Reply(200, body(Some(true), None, None))),
            Outcome::Won
        );
        assert_eq!(
            classify(Transport::Reply(409, body(None, None, Some("conflict")))),
            Outcome::NoLongerActive
        );
        assert_eq!(
            classify(Transport::Reply(
                503,
                body(None, None, Some("retryable_error"))
            )),
            Outcome::Failed(Failure::Retryable)
        );
        assert_eq!(
            classify(Transport::Reply(
                500,
                body(None, None, Some("non_retryable_error"))
            )),
            Outcome::Failed(Failure::Server)
        );
    }

    #[test]
    fn a_2xx_that_says_nothing_readable_hides_nothing() {
        for b in [
            None,
            body(None, None, None),
            body(Some(false), None, None),
            body(None, None, Some("retryable_error")),
        ] {
            assert_eq!(
                classify(Transport::Reply(200, b)),
                Outcome::Failed(Failure::Unreadable),
                "{b:?}"
            );
            assert!(!classify(Transport::Reply(204, b)).settles());
        }
    }

    #[test]
    fn statuses_map_to_outcomes() {
        let cases = [
            (400, Outcome::Refused),
            (403, Outcome::Refused),
            (404, Outcome::Refused),
            (413, Outcome::Refused),
            (408, Outcome::Failed(Failure::Retryable)),
            (429, Outcome::Failed(Failure::Retryable)),
            (409, Outcome::NoLongerActive),
            (502, Outcome::Failed(Failure::Server)),
            (599, Outcome::Failed(Failure::Server)),
            (0, Outcome::Failed(Failure::Unreadable)),
            (302, Outcome::Failed(Failure::Unreadable)),
            (600, Outcome::Failed(Failure::Unreadable)),
        ];
        for (status, outcome) in cases {
            // A body never overrides a non-2xx status.
            assert_eq!(
                classify(Transport::Reply(
                    status,
                    body(Some(true), Some(true), Some("success"))
                )),
                outcome,
                "{status}"
            );
            assert_eq!(
                classify(Transport::Reply(status, None)),
                outcome,
                "{status}"
            );
        }
        assert_eq!(
            classify(Transport::Network),
            Outcome::Failed(Failure::Network)
        );
        assert_eq!(
            classify(Transport::Timeout),
            Outcome::Failed(Failure::Timeout)
        );
    }

    #[test]
    fn only_won_lost_and_no_longer_active_settle() {
        assert!(
            Outcome::Won.settles() && Outcome::Lost.settles() && Outcome::NoLongerActive.settles()
        );
        assert!(!Outcome::Refused.settles());
        for f in [
            Failure::Retryable,
            Failure::Server,
            Failure::Network,
            Failure::Timeout,
            Failure::Unreadable,
        ] {
            assert!(!Outcome::Failed(f).settles());
        }
    }

    #[test]
    fn a_start_needs_the_live_bundle_and_a_double_click_returns_the_same_attempt() {
        assert_eq!(may_start(Ok(Some("p1")), "p1", None), Ok(Start::New));
        assert_eq!(
            may_start(Ok(Some("p1")), "p1", Some(&Phase::InFlight)),
            Ok(Start::InFlight)
        );
        // Even when the live question is not known any more, an attempt in flight is returned.
        assert_eq!(
            may_start(Err(Refusal::Unknown), "p1", Some(&Phase::InFlight)),
            Ok(Start::InFlight)
        );
        assert_eq!(
            may_start(Err(Refusal::Unknown), "p1", None),
            Err(Refusal::Unknown)
        );
        assert_eq!(may_start(Ok(None), "p1", None), Err(Refusal::NotLive));
        assert_eq!(may_start(Ok(Some("p2")), "p1", None), Err(Refusal::NotLive));
        // A failed or refused attempt can be retried.
        let failed = Phase::Open(Outcome::Failed(Failure::Retryable));
        assert_eq!(
            may_start(Ok(Some("p1")), "p1", Some(&failed)),
            Ok(Start::New)
        );
        // A settled bundle is hidden from discovery, so it is not live: no second request.
        let settled = Phase::Settled {
            outcome: Outcome::Won,
            position: None,
        };
        assert_eq!(
            may_start(Ok(None), "p1", Some(&settled)),
            Err(Refusal::NotLive)
        );
    }

    #[test]
    fn only_the_first_reply_to_the_current_attempt_counts() {
        assert_eq!(reply_counts(3, Some((3, &Phase::InFlight))), Ok(()));
        assert_eq!(
            reply_counts(2, Some((3, &Phase::InFlight))),
            Err(Stale::Superseded)
        );
        assert_eq!(reply_counts(3, None), Err(Stale::UnknownAttempt));
        let settled = Phase::Settled {
            outcome: Outcome::Won,
            position: None,
        };
        assert_eq!(
            reply_counts(3, Some((3, &settled))),
            Err(Stale::AlreadyReplied)
        );
        let open = Phase::Open(Outcome::Refused);
        assert_eq!(
            reply_counts(3, Some((3, &open))),
            Err(Stale::AlreadyReplied)
        );
    }

    #[test]
    fn a_reply_for_a_bundle_the_data_already_ended_settles_nothing() {
        assert!(settles_now(Outcome::Won, true));
        assert!(!settles_now(Outcome::Won, false));
        assert!(!settles_now(Outcome::Failed(Failure::Network), true));
    }

    #[test]
    fn only_a_pending_row_newer_than_the_position_lifts_a_settlement() {
        let at = rev("2", 10);
        assert!(lifts(Some(&at), true, Some(&rev("2", 11))));
        assert!(lifts(Some(&at), true, Some(&rev("3", 0))));
        // Produced before (or at) the handling: never.
        assert!(!lifts(Some(&at), true, Some(&rev("2", 10))));
        assert!(!lifts(Some(&at), true, Some(&rev("2", 9))));
        assert!(!lifts(Some(&at), true, Some(&rev("1", 99))));
        // A REST row carries no revision; a terminal row says what the settlement says.
        assert!(!lifts(Some(&at), true, None));
        assert!(!lifts(Some(&at), false, Some(&rev("2", 11))));
        // No position (the reference client's envelope): nothing lifts it.
        assert!(!lifts(None, true, Some(&rev("9", 9))));
        // A malformed epoch on either side orders nothing: it does not lift.
        assert!(!lifts(Some(&at), true, Some(&rev("x", 11))));
        assert!(!lifts(Some(&rev("", 1)), true, Some(&rev("2", 11))));
    }

    #[test]
    fn a_settled_bundles_pending_rows_count_as_answered() {
        assert_eq!(
            settled_status(RequestStatus::Pending, true),
            RequestStatus::Answered
        );
        assert_eq!(
            settled_status(RequestStatus::Pending, false),
            RequestStatus::Pending
        );
        assert_eq!(
            settled_status(RequestStatus::Expired, true),
            RequestStatus::Expired
        );
        assert_eq!(
            settled_status(RequestStatus::Rejected, false),
            RequestStatus::Rejected
        );
    }

    #[test]
    fn a_settlement_retires_when_the_rows_agree_or_it_was_lifted() {
        assert!(retires(false, false));
        assert!(retires(true, true));
        assert!(!retires(true, false));
    }

    #[test]
    fn the_projection_decides_again_only_once_strictly_newer_than_the_position() {
        let at = rev("2", 10);
        fn source(position: Option<&Revision>, projection: Option<&Revision>) -> ActionSource {
            session_action_source(position, projection, true)
        }
        assert_eq!(
            source(Some(&at), Some(&rev("2", 11))),
            ActionSource::Projection
        );
        assert_eq!(source(Some(&at), Some(&rev("2", 10))), ActionSource::Rows);
        assert_eq!(source(Some(&at), Some(&rev("1", 50))), ActionSource::Rows);
        assert_eq!(source(Some(&at), None), ActionSource::Rows);
        assert_eq!(source(None, Some(&rev("9", 9))), ActionSource::Rows);
    }

    #[test]
    fn a_settled_bundle_outside_the_current_turn_leaves_the_projection_deciding() {
        // A 409 with no position settled a bundle of a turn the server had already left: the
        // projections it sends later decide, though the bundle's rows stay pending in the data.
        assert_eq!(
            session_action_source(None, Some(&rev("9", 9)), false),
            ActionSource::Projection
        );
        assert_eq!(
            session_action_source(Some(&rev("2", 10)), Some(&rev("2", 10)), false),
            ActionSource::Projection
        );
    }

    #[test]
    fn what_the_user_may_do_follows_the_barrier() {
        // A live question on a connected agent: answer, or cancel the agent; no new message.
        assert_eq!(
            offered(false, Some(false), false, true),
            Offered {
                respond: true,
                cancel: true,
                send: false
            }
        );
        assert_eq!(
            offered(true, Some(false), false, true),
            Offered {
                respond: true,
                cancel: true,
                send: false
            }
        );
        // Detached: nothing to cancel, whether the session says RUNNING or waits.
        assert_eq!(
            offered(true, Some(true), false, true),
            Offered {
                respond: true,
                cancel: false,
                send: false
            }
        );
        assert_eq!(
            offered(false, Some(true), false, true),
            Offered {
                respond: true,
                cancel: false,
                send: false
            }
        );
        // The answer is in flight: no second respond.
        assert!(!offered(false, Some(false), true, true).respond);
        // No question: cancel while working, send while not.
        assert_eq!(
            offered(true, None, false, true),
            Offered {
                respond: false,
                cancel: true,
                send: false
            }
        );
        assert_eq!(
            offered(false, None, false, true),
            Offered {
                respond: false,
                cancel: false,
                send: true
            }
        );
        // A terminal session offers nothing.
        assert_eq!(offered(true, Some(false), false, false), Offered::default());
    }

    #[test]
    fn deleting_the_open_session_opens_the_newest_remaining_one() {
        let list = ["s3", "s2", "s1"];
        assert_eq!(
            open_after_delete(Some("s3"), "s3", list.iter().copied()),
            Some("s2")
        );
        assert_eq!(
            open_after_delete(Some("s1"), "s3", list.iter().copied()),
            Some("s1")
        );
        assert_eq!(
            open_after_delete(Some("s1"), "s1", ["s1"].iter().copied()),
            None
        );
        assert_eq!(
            open_after_delete(Some("s2"), "s2", ["", "s2", "s1"].iter().copied()),
            Some("s1")
        );
        // Nothing open: deleting a session opens none.
        assert_eq!(open_after_delete(None, "s3", list.iter().copied()), None);
    }
}
