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
    if state.is_some_and(SessionState::is_terminal) {
        return (None, SessionActionReason::TerminalSession);
    }
    let (current, reason) = current_turn(turns, state, is_referenced);
    let current_id = current
        .turn()
        .and_then(|index| turns.and_then(|t| t.get(index)))
        .map(TurnRecord::id);
    let Some(turn_id) = current_id else {
        let reason = match reason {
            TurnReason::HistoryNotLoaded => SessionActionReason::TurnHistoryUnknown,
            TurnReason::SessionNotInputCapable => SessionActionReason::SessionNotInputCapable,
            _ => SessionActionReason::NoCurrentTurn,
        };
        return (None, reason);
    };
    turn_pending_action(in_turn(turn_id))
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
