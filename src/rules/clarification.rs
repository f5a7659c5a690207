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

/// Where one pending clarification request stands in discovery (what `explain` reports per
/// request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestStanding {
    /// A member of the active bundle: the overlay shows it.
    InBundle,
    /// The scope considers no message (the projection is not a clarification, there is no
    /// current turn, or the authority is unknown).
    DiscoveryClosed,
    /// Its turn is not the current (or latest) turn: superseded, never shown again.
    NotCurrentTurn,
    /// It belongs to the chosen request's bundle, which has not fully arrived.
    BundleIncomplete,
    /// A newer request of the same turn was chosen.
    NewerRequestChosen,
}

/// Where `request` (a pending clarification request) stands, given the scope's [`considered`],
/// the request [`pending_request`] chose, and whether `request` is in the active bundle.
pub fn request_standing<M: MessageRecord>(
    request: &M,
    considered: Considered<'_>,
    chosen: Option<&M>,
    in_bundle: bool,
) -> RequestStanding {
    if in_bundle {
        return RequestStanding::InBundle;
    }
    match considered {
        Considered::Nothing => return RequestStanding::DiscoveryClosed,
        Considered::Turn(_) if !considered.admits(request) => {
            return RequestStanding::NotCurrentTurn;
        }
        _ => {}
    }
    match chosen {
        Some(chosen) if chosen.turn_id() != request.turn_id() => RequestStanding::NotCurrentTurn,
        Some(chosen)
            if chosen.pending_id().is_some() && chosen.pending_id() == request.pending_id() =>
        {
            RequestStanding::BundleIncomplete
        }
        Some(chosen) if chosen.id() == request.id() => RequestStanding::BundleIncomplete,
        Some(_) => RequestStanding::NewerRequestChosen,
        // Considered, pending and not chosen: discovery only looked at a later turn.
        None => RequestStanding::NotCurrentTurn,
    }
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

/// The number of members the `question_total` gate waits for, as an integer: `None` when it does
/// not gate (no total, not above 0, NaN), else the smallest count that completes the bundle
/// (`ceil(total)`, at most 2^53, which no bundle reaches). `bundle_complete(total, n)` equals
/// `bundle_complete(gate(total), n)` for every `n`: a snapshot writes the gate so.
pub fn gate(question_total: Option<f64>) -> Option<u64> {
    const CAP: f64 = 9_007_199_254_740_992.0; // 2^53
    match question_total {
        Some(total) if total > 0.0 => {
            // In 1..=2^53 after the ceiling and the cap: converts exactly.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let count = total.min(CAP).ceil() as u64;
            Some(count)
        }
        _ => None,
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
    pending_permission(messages).is_some()
}

/// The `permission_request` a session is blocked on (SPEC §3), as [`has_pending_permission`]
/// finds it: the row the permission answer and its respond are about (SPEC §13).
pub fn pending_permission<M: MessageRecord>(messages: &[M]) -> Option<&M> {
    let boundary = messages.last()?.turn_id();
    messages
        .iter()
        .rev()
        .filter(|m| boundary.is_none() || m.turn_id() == boundary)
        .find(|m| m.kind() == MessageKind::PermissionRequest)
        .filter(|m| m.status().is_pending())
}

#[cfg(test)]
mod gate_tests {
    use super::{bundle_complete, gate};

    #[test]
    fn the_gate_as_an_integer_completes_bundles_as_the_total_does() {
        let totals = [
            None,
            Some(f64::NAN),
            Some(-1.0),
            Some(0.0),
            Some(0.2),
            Some(1.0),
            Some(2.5),
            Some(3.0),
            Some(1e300),
            Some(f64::INFINITY),
            Some(f64::NEG_INFINITY),
        ];
        for total in totals {
            #[allow(clippy::cast_precision_loss)]
            let integral = gate(total).map(|n| n as f64);
            for arrived in [0, 1, 2, 3, 4, 1000] {
                assert_eq!(
                    bundle_complete(integral, arrived),
                    bundle_complete(total, arrived),
                    "{total:?} {arrived}"
                );
            }
        }
        assert_eq!(gate(Some(2.5)), Some(3));
        assert_eq!(gate(Some(f64::INFINITY)), Some(1 << 53));
        assert_eq!(gate(Some(0.0)), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::model::{Message, RequestStatus};
    use crate::rules::time::Timestamp;

    fn request(id: &str, turn: &str, pending: &str, total: Option<f64>, at: &str) -> Message {
        Message {
            id: id.into(),
            turn_id: Some(turn.into()),
            kind: MessageKind::ClarificationRequest,
            status: RequestStatus::Pending,
            pending_id: Some(pending.into()),
            question_total: total,
            flags: Default::default(),
            created_at: Timestamp::parse(at),
            updated_at: None,
        }
    }

    /// Each request's standing, computed as the store's `explain` computes it.
    fn standings(messages: &[Message], scope: &Scope<'_>) -> Vec<RequestStanding> {
        let considered = considered(Some(scope));
        let chosen = pending_request(messages, Some(scope)).and_then(|i| messages.get(i));
        let bundle = pending_bundle(messages, Some(scope));
        (0..messages.len())
            .filter_map(|i| {
                let m = messages.get(i)?;
                Some(request_standing(m, considered, chosen, bundle.contains(&i)))
            })
            .collect()
    }

    #[test]
    fn standings_follow_discovery() {
        let messages = [
            request("old", "t1", "p0", None, "2026-11-29T12:00:00Z"),
            request("q1", "t2", "p1", Some(2.0), "2026-11-29T12:00:01Z"),
            request("q2", "t2", "p1", Some(2.0), "2026-11-29T12:00:02Z"),
            request("lone", "t2", "p2", None, "2026-11-29T12:00:03Z"),
        ];
        let scope = |turn| Scope {
            current_turn: CurrentTurn::Turn(turn),
            pending_action: Some(Some(PendingAction::Clarification)),
        };
        use RequestStanding::*;
        // The newest request of the current turn wins; the bundle of another pending id and the
        // older turn's request stand aside.
        assert_eq!(
            standings(&messages, &scope("t2")),
            [
                NotCurrentTurn,
                NewerRequestChosen,
                NewerRequestChosen,
                InBundle
            ]
        );
        assert_eq!(
            standings(&messages, &scope("t1")),
            [InBundle, NotCurrentTurn, NotCurrentTurn, NotCurrentTurn]
        );
        // A bundle that has not fully arrived shows nothing, and says so.
        let partial = [messages[0].clone(), messages[1].clone()];
        assert_eq!(
            standings(&partial, &scope("t2")),
            [NotCurrentTurn, BundleIncomplete]
        );
        // A projection that is not a clarification closes discovery.
        let permission = Scope {
            current_turn: CurrentTurn::Turn("t2"),
            pending_action: Some(Some(PendingAction::Permission)),
        };
        assert!(standings(&messages, &permission)
            .iter()
            .all(|s| *s == DiscoveryClosed));
        // Without a current turn but with a projection, discovery reads the latest turn.
        let latest = Scope {
            current_turn: CurrentTurn::Unknown,
            pending_action: Some(Some(PendingAction::Clarification)),
        };
        assert_eq!(
            standings(&messages, &latest),
            [
                NotCurrentTurn,
                NewerRequestChosen,
                NewerRequestChosen,
                InBundle
            ]
        );
    }
}
