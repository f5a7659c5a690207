//! Current-turn clarification discovery (SPEC §3): scope, pending request, bundle, transcript
//! visibility, and the permission rule.

use std::cmp::Ordering;

use super::model::{MessageKind, MessageRecord, PendingAction};
use super::turn::CurrentTurn;

/// What the caller knows when it asks for the pending clarification (SPEC §3 table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scope<'a> {
    /// The session's current turn: an id, none, or unknown.
    pub current_turn: CurrentTurn<&'a str>,
    /// The session's authoritative projection: `None` unknown, `Some(None)` clean.
    pub pending_action: Option<Option<PendingAction>>,
}

impl Scope<'_> {
    /// The explicit empty scope `{}`: authority unknown, discovery disabled.
    pub const EMPTY: Scope<'static> = Scope {
        current_turn: CurrentTurn::Unknown,
        pending_action: None,
    };
}

/// Which messages a scope lets discovery consider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Considered<'a> {
    All,
    Nothing,
    Turn(&'a str),
}

impl Considered<'_> {
    pub fn admits<M: MessageRecord>(self, message: &M) -> bool {
        match self {
            Considered::All => true,
            Considered::Nothing => false,
            Considered::Turn(turn) => message.turn_id() == Some(turn),
        }
    }
}

/// The SPEC §3 scope table. `None` is "no scope given at all" (the legacy scan).
pub fn considered<'a>(scope: Option<&Scope<'a>>) -> Considered<'a> {
    let Some(scope) = scope else {
        return Considered::All;
    };
    match (scope.pending_action, scope.current_turn) {
        (Some(action), _) if action != Some(PendingAction::Clarification) => Considered::Nothing,
        (_, CurrentTurn::None) => Considered::Nothing,
        (Some(_), CurrentTurn::Unknown) => Considered::All,
        (None, CurrentTurn::Unknown) => Considered::Nothing,
        (_, CurrentTurn::Turn(turn)) => Considered::Turn(turn),
    }
}

fn is_pending_clarification<M: MessageRecord>(message: &M) -> bool {
    message.kind() == MessageKind::ClarificationRequest && message.status().is_pending()
}

/// Persisted creation order: `created_at` (timestamp order), then `id`.
fn creation_order<M: MessageRecord>(a: &M, b: &M) -> Ordering {
    a.created_at()
        .cmp(b.created_at())
        .then_with(|| a.id().cmp(b.id()))
}

/// The latest turn among the considered messages: the `turn_id` of the considered message with a
/// turn that is greatest in persisted creation order. `None` when no considered message has a
/// turn (legacy data).
pub fn latest_turn<'m, M: MessageRecord>(
    messages: &'m [M],
    considered: Considered<'_>,
) -> Option<&'m str> {
    let mut latest: Option<&M> = None;
    for message in messages.iter().filter(|m| considered.admits(*m)) {
        if message.turn_id().is_none() {
            continue;
        }
        if latest.is_none_or(|held| creation_order(message, held) == Ordering::Greater) {
            latest = Some(message);
        }
    }
    latest.and_then(|m| m.turn_id())
}

/// The pending request (SPEC §3): index of the pending `clarification_request` discovery finds.
pub fn pending_request<M: MessageRecord>(
    messages: &[M],
    scope: Option<&Scope<'_>>,
) -> Option<usize> {
    let considered = considered(scope);
    if considered == Considered::Nothing {
        return None;
    }
    // Scoped to one turn, the latest turn is that turn: no pass over the messages is needed.
    let latest = match considered {
        Considered::Turn(turn) => Some(turn),
        _ => latest_turn(messages, considered),
    };
    messages
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, m)| considered.admits(*m))
        // With a latest turn, skip other turns and turnless rows; legacy data has no turns.
        .filter(|(_, m)| latest.is_none() || m.turn_id() == latest)
        .find(|(_, m)| is_pending_clarification(*m))
        .map(|(index, _)| index)
}

/// The active bundle (SPEC §3): indices of its pending members, in array order; empty when there
/// is no request or the bundle has not fully arrived (`question_total` gate).
pub fn pending_bundle<M: MessageRecord>(messages: &[M], scope: Option<&Scope<'_>>) -> Vec<usize> {
    let Some(request_index) = pending_request(messages, scope) else {
        return Vec::new();
    };
    let Some(request) = messages.get(request_index) else {
        return Vec::new();
    };
    let considered = considered(scope);
    let members: Vec<usize> = match request.pending_id() {
        None => vec![request_index],
        Some(pending_id) => messages
            .iter()
            .enumerate()
            .filter(|(_, m)| {
                considered.admits(*m)
                    && m.kind() == MessageKind::ClarificationRequest
                    && m.pending_id() == Some(pending_id)
            })
            .map(|(index, _)| index)
            .collect(),
    };
    if !bundle_complete(request.question_total(), members.len()) {
        return Vec::new();
    }
    members
        .into_iter()
        .filter(|&i| messages.get(i).is_some_and(|m| m.status().is_pending()))
        .collect()
}

/// The `question_total` gate: a bundle whose request announces `total > 0` questions is
/// actionable only once that many members have arrived (terminal siblings count).
pub fn bundle_complete(question_total: Option<f64>, arrived: usize) -> bool {
    match question_total {
        Some(total) if total > 0.0 => {
            // usize → f64 is exact far beyond any transcript length.
            #[allow(clippy::cast_precision_loss)]
            let arrived = arrived as f64;
            arrived >= total
        }
        _ => true,
    }
}

/// Transcript visibility (SPEC §3): indices of the messages to show, i.e. all but the active
/// bundle's pending rows (the overlay renders those).
pub fn visible_transcript<M: MessageRecord>(
    messages: &[M],
    scope: Option<&Scope<'_>>,
) -> Vec<usize> {
    let hidden = pending_bundle(messages, scope);
    (0..messages.len())
        .filter(|i| !hidden.contains(i))
        .collect()
}

/// Permission (SPEC §3): scanning back from the newest (last) message within its turn (the whole
/// array when it has no turn), the first `permission_request` found is pending.
pub fn has_pending_permission<M: MessageRecord>(messages: &[M]) -> bool {
    let Some(newest) = messages.last() else {
        return false;
    };
    let boundary = newest.turn_id();
    messages
        .iter()
        .rev()
        .filter(|m| boundary.is_none() || m.turn_id() == boundary)
        .find(|m| m.kind() == MessageKind::PermissionRequest)
        .is_some_and(|m| m.status().is_pending())
}
