//! Authoritative pending action (SPEC §4), shared by the server projection and the client
//! fallback.

use std::cmp::Ordering;

use super::model::{
    MessageKind, MessageRecord, PendingAction, SessionRecord, SessionState, Task, TurnRecord,
};
use super::turn::{current_turn, TurnReason};

/// Why a session's pending action is what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionActionReason {
    TerminalSession,
    SessionNotInputCapable,
    TurnHistoryUnknown,
    NoCurrentTurn,
    PendingClarificationInCurrentTurn,
    LatestPermissionPending,
    NothingPendingInCurrentTurn,
}

/// The pending action of one session (SPEC §4): terminal → clean; otherwise within the current
/// turn (reservations excluded, session quarantine applied), a pending clarification row wins,
/// then the latest `permission_request` (by `created_at`, then position) if it is pending.
pub fn session_pending_action<T: TurnRecord, M: MessageRecord>(
    state: Option<SessionState>,
    turns: Option<&[T]>,
    messages: &[M],
) -> (Option<PendingAction>, SessionActionReason) {
    session_pending_action_with(
        state,
        turns,
        |turn_id| messages.iter().any(|m| m.turn_id() == Some(turn_id)),
        |turn_id| {
            messages
                .iter()
                .filter(move |m| m.turn_id() == Some(turn_id))
        },
    )
}

/// [`session_pending_action`] over an indexed transcript: `is_referenced` tells whether any known
/// message references a turn, `in_turn` yields a turn's messages in order. Only the
/// `clarification_request` and `permission_request` rows of the turn matter, so an index may
/// yield just those.
pub fn session_pending_action_with<'t, T, M, I>(
    state: Option<SessionState>,
    turns: Option<&'t [T]>,
    is_referenced: impl Fn(&str) -> bool,
    in_turn: impl FnOnce(&'t str) -> I,
) -> (Option<PendingAction>, SessionActionReason)
where
    T: TurnRecord,
    M: MessageRecord,
    I: Iterator<Item = M>,
{
    match session_pending_read(state, turns, is_referenced) {
        PendingRead::Decided(reason) => (None, reason),
        PendingRead::Turn(turn_id) => turn_pending_action(in_turn(turn_id)),
    }
}

/// What [`session_pending_action_with`] reads of the transcript once it knows the turns and which
/// of them messages reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PendingRead<'t> {
    /// Decided without reading any message: clean, for this reason.
    Decided(SessionActionReason),
    /// The answer is [`turn_pending_action`] over this turn's messages, in order (its
    /// `clarification_request` and `permission_request` rows are the ones that count).
    Turn(&'t str),
}

/// The first step of [`session_pending_action_with`] (SPEC §4): a terminal session is clean; else
/// the current turn ([`current_turn`]) is the one whose messages decide, and without one the
/// session is clean. A caller that reads messages on demand (the server) reads only that turn's
/// rows, then hands them to [`session_pending_action_with`], which takes this same step.
pub fn session_pending_read<'t, T: TurnRecord>(
    state: Option<SessionState>,
    turns: Option<&'t [T]>,
    is_referenced: impl Fn(&str) -> bool,
) -> PendingRead<'t> {
    if state.is_some_and(SessionState::is_terminal) {
        return PendingRead::Decided(SessionActionReason::TerminalSession);
    }
    let (current, reason) = current_turn(turns, state, is_referenced);
    let current_id = current
        .turn()
        .and_then(|index| turns.and_then(|t| t.get(index)))
        .map(TurnRecord::id);
    match current_id {
        Some(turn_id) => PendingRead::Turn(turn_id),
        None => PendingRead::Decided(match reason {
            TurnReason::HistoryNotLoaded => SessionActionReason::TurnHistoryUnknown,
            TurnReason::SessionNotInputCapable => SessionActionReason::SessionNotInputCapable,
            _ => SessionActionReason::NoCurrentTurn,
        }),
    }
}

/// The pending action among the messages of one (current) turn, in array order.
pub fn turn_pending_action<M: MessageRecord>(
    in_turn: impl Iterator<Item = M>,
) -> (Option<PendingAction>, SessionActionReason) {
    let mut latest_permission: Option<M> = None;
    for message in in_turn {
        match message.kind() {
            MessageKind::ClarificationRequest if message.status().is_pending() => {
                return (
                    Some(PendingAction::Clarification),
                    SessionActionReason::PendingClarificationInCurrentTurn,
                )
            }
            // Later positions win ties on `created_at`.
            MessageKind::PermissionRequest
                if latest_permission.as_ref().is_none_or(|held| {
                    message.created_at().cmp(held.created_at()) != Ordering::Less
                }) =>
            {
                latest_permission = Some(message);
            }
            _ => {}
        }
    }
    match latest_permission {
        Some(m) if m.status().is_pending() => (
            Some(PendingAction::Permission),
            SessionActionReason::LatestPermissionPending,
        ),
        _ => (None, SessionActionReason::NothingPendingInCurrentTurn),
    }
}

/// The pending action of a task from its sessions' projections (SPEC §4): input-capable sessions
/// only; permission on any session wins, then clarification, else clean.
pub fn task_pending_action<S: SessionRecord>(
    sessions: impl IntoIterator<Item = S>,
) -> Option<PendingAction> {
    let mut clarification = false;
    for session in sessions {
        if !session.state().is_some_and(SessionState::is_input_capable) {
            continue;
        }
        match session.action() {
            Some(PendingAction::Permission) => return Some(PendingAction::Permission),
            Some(PendingAction::Clarification) => clarification = true,
            None => {}
        }
    }
    clarification.then_some(PendingAction::Clarification)
}

/// The client's effective task action (SPEC §4): the status summary's `pending_action` when the
/// task has a summary object (omitted = clean), else the legacy `task_pending_action`.
pub fn effective_task_pending_action(task: &Task) -> Option<PendingAction> {
    match &task.status_summary {
        Some(summary) => summary.pending_action,
        None => task.task_pending_action,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::model::{Message, RequestStatus, Turn, TurnFlags};
    use crate::rules::time::Timestamp;

    const T0: &str = "2026-11-29T12:00:00Z";
    const T1: &str = "2026-11-29T12:00:01Z";

    fn turn(id: &str, started: &str, completed: bool, flags: TurnFlags) -> Turn {
        Turn {
            id: id.into(),
            completed,
            started_at: Timestamp::parse(started),
            created_at: Timestamp::parse(started),
            updated_at: None,
            flags,
        }
    }

    fn request(id: &str, turn_id: &str, kind: MessageKind, status: RequestStatus) -> Message {
        Message {
            id: id.into(),
            turn_id: Some(turn_id.into()),
            kind,
            status,
            pending_id: None,
            question_total: None,
            flags: Default::default(),
            created_at: Timestamp::parse(T0),
            updated_at: None,
        }
    }

    fn none(_: &str) -> bool {
        false
    }

    const RESERVATION: TurnFlags = TurnFlags {
        lifecycle_only: false,
        prompt_dispatch_pending: true,
        prompt_dispatch_attempted: false,
    };
    const LIFECYCLE: TurnFlags = TurnFlags {
        lifecycle_only: true,
        prompt_dispatch_pending: false,
        prompt_dispatch_attempted: false,
    };

    #[test]
    fn the_read_step_names_the_current_turn_or_decides_without_messages() {
        let turns = [
            turn("done", T1, true, TurnFlags::default()),
            turn("open", T0, false, TurnFlags::default()),
            turn("life", T1, false, LIFECYCLE),
            turn("held", T1, false, RESERVATION),
        ];
        let live = Some(SessionState::Running);
        assert_eq!(
            session_pending_read(live, Some(&turns[..]), none),
            PendingRead::Turn("open")
        );
        // A referenced reservation is published and outranks the older open turn.
        assert_eq!(
            session_pending_read(live, Some(&turns[..]), |id| id == "held"),
            PendingRead::Turn("held")
        );
        assert_eq!(
            session_pending_read(Some(SessionState::Completed), Some(&turns[..]), none),
            PendingRead::Decided(SessionActionReason::TerminalSession)
        );
        assert_eq!(
            session_pending_read(Some(SessionState::Failed), None::<&[Turn]>, none),
            PendingRead::Decided(SessionActionReason::TerminalSession)
        );
        assert_eq!(
            session_pending_read(Some(SessionState::Idle), Some(&turns[..]), none),
            PendingRead::Decided(SessionActionReason::SessionNotInputCapable)
        );
        assert_eq!(
            session_pending_read(live, None::<&[Turn]>, none),
            PendingRead::Decided(SessionActionReason::TurnHistoryUnknown)
        );
        assert_eq!(
            session_pending_read(live, Some(&turns[2..]), none),
            PendingRead::Decided(SessionActionReason::NoCurrentTurn)
        );
    }

    #[test]
    fn the_action_reads_only_the_turn_the_read_step_names() {
        let turns = [
            turn("old", T0, true, TurnFlags::default()),
            turn("new", T1, false, TurnFlags::default()),
        ];
        let messages = [
            request(
                "a",
                "old",
                MessageKind::PermissionRequest,
                RequestStatus::Pending,
            ),
            request(
                "b",
                "new",
                MessageKind::ClarificationRequest,
                RequestStatus::Answered,
            ),
            request(
                "c",
                "new",
                MessageKind::PermissionRequest,
                RequestStatus::Pending,
            ),
        ];
        let live = Some(SessionState::Running);
        let PendingRead::Turn(read) = session_pending_read(live, Some(&turns[..]), none) else {
            panic!("a live session with an open turn reads it");
        };
        let asked = std::cell::Cell::new(None);
        let narrow = session_pending_action_with(live, Some(&turns[..]), none, |turn_id| {
            asked.set(Some(turn_id));
            messages
                .iter()
                .filter(move |m| m.turn_id.as_deref() == Some(turn_id))
        });
        assert_eq!(asked.get(), Some(read));
        assert_eq!(
            narrow,
            session_pending_action(live, Some(&turns[..]), &messages)
        );
        assert_eq!(
            narrow,
            (
                Some(PendingAction::Permission),
                SessionActionReason::LatestPermissionPending
            )
        );
    }
}
