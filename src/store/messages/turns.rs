//! The per-turn and per-pending-id bookkeeping of the message index: each turn's message count
//! and request slots, the clarification slots of each pending id, and the queries that read
//! them (the reservation rule's turn references, a turn's requests, and the few rows
//! discovery and the permission rule look at).

use std::cmp::Ordering;

use crate::rules::model::MessageKind;

use super::{Index, RowView, NONE};

/// Per-turn bookkeeping.
#[derive(Clone, Debug, Default)]
pub(super) struct TurnStat {
    pub(super) count: u32,
    /// Clarification and permission slots of the turn, in creation order.
    pub(super) requests: Vec<u32>,
}

impl Index {
    /// Does any stored message reference this turn?
    pub fn references(&self, turn_id: &str) -> bool {
        self.turns
            .get(turn_id)
            .and_then(|t| self.per_turn.get(&t))
            .is_some_and(|s| s.count > 0)
    }

    /// The request rows (clarification and permission) of one turn, in creation order.
    pub fn turn_requests(&self, turn_id: &str) -> Vec<RowView<'_>> {
        self.turns
            .get(turn_id)
            .and_then(|t| self.per_turn.get(&t))
            .map(|s| {
                s.requests
                    .iter()
                    .filter_map(|&slot| self.view(slot))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The newest message (creation order).
    fn newest(&self) -> Option<u32> {
        self.order.last()
    }

    /// The newest message that has a turn.
    fn newest_with_turn(&self) -> Option<u32> {
        self.order
            .iter()
            .rev()
            .find(|&slot| self.row(slot).is_some_and(|r| r.turn != NONE))
    }

    /// The rows discovery over the whole transcript reads, in creation order (for a scope that
    /// considers every message): the newest row that has a turn (it decides the latest turn),
    /// the clarification rows of that turn (the pending request is among them; every row when
    /// no row has a turn), and every clarification row sharing a pending id with one of those
    /// (the request's bundle may span turns). The rules answer on this subset as on the whole
    /// transcript (`tests/store_properties.rs` checks it), and it stays small however long the
    /// session is.
    pub fn discovery_candidates(&self) -> Vec<RowView<'_>> {
        let newest = self.newest_with_turn();
        let latest = newest.and_then(|s| self.row(s)).map_or(NONE, |r| r.turn);
        let mut slots: Vec<u32> = self
            .per_turn
            .get(&latest)
            .map(|s| {
                s.requests
                    .iter()
                    .copied()
                    .filter(|&s| {
                        self.row(s)
                            .is_some_and(|r| r.kind == MessageKind::ClarificationRequest)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut pending: Vec<u32> = slots
            .iter()
            .filter_map(|s| self.requests_info.get(s))
            .map(|info| info.pending)
            .filter(|&p| p != NONE)
            .collect();
        crate::sort::stable_sort_by(&mut pending, u32::cmp);
        pending.dedup();
        for p in pending {
            if let Some(members) = self.per_pending.get(&p) {
                slots.extend(members.iter().copied());
            }
        }
        slots.extend(newest);
        self.views_in_order(slots)
    }

    /// The rows the permission rule reads, in creation order: the newest message and the newest
    /// permission row of its turn (scanning back within the turn, the rule stops at that one);
    /// when the newest message has no turn, the newest permission row of each turn (the rule
    /// scans the whole transcript, and the newest of those is the one it finds). One turn's
    /// rows are looked up, not every turn's: the query does not grow with the turns.
    pub fn permission_candidates(&self) -> Vec<RowView<'_>> {
        let Some(newest) = self.newest() else {
            return Vec::new();
        };
        let boundary = self.row(newest).map_or(NONE, |r| r.turn);
        // A turn's requests are in creation order: its newest permission row is the last one.
        let newest_permission = |stat: &TurnStat| {
            stat.requests.iter().rev().copied().find(|&s| {
                self.row(s)
                    .is_some_and(|r| r.kind == MessageKind::PermissionRequest)
            })
        };
        if boundary != NONE {
            // The usual case: at most two rows, already in creation order (the turn's newest
            // permission row, then the newest row of all), so no sort.
            return self
                .per_turn
                .get(&boundary)
                .and_then(newest_permission)
                .filter(|&slot| slot != newest)
                .into_iter()
                .chain([newest])
                .filter_map(|slot| self.view(slot))
                .collect();
        }
        let mut slots: Vec<u32> = self
            .per_turn
            .values()
            .filter_map(newest_permission)
            .collect();
        slots.push(newest);
        self.views_in_order(slots)
    }

    /// The rows of `slots` in creation order, once each.
    fn views_in_order(&self, mut slots: Vec<u32>) -> Vec<RowView<'_>> {
        slots.retain(|&slot| self.row(slot).is_some());
        crate::sort::stable_sort_by(&mut slots, |&a, &b| match (self.row(a), self.row(b)) {
            (Some(a), Some(b)) => self.order_of(a, b),
            _ => Ordering::Equal,
        });
        slots.dedup();
        slots
            .into_iter()
            .filter_map(|slot| self.view(slot))
            .collect()
    }
}
