//! The paths that change the message index: upserting a row (with the staleness and
//! no-change checks), inserting it into the slab, the hash table, creation order and the
//! per-turn lists, removing it again, and the tombstones of deleted ids.

use crate::rules::model::{MessageKind, Revision};
use crate::rules::order::{row_is_stale, stronger_tombstone};

use super::slots::{hash_id, RequestInfo, Row, FREE_ROW};
use super::{Index, MessageParts, Upsert, NONE};
use crate::store::packed::ABSENT;

impl Index {
    /// Clarification and permission requests: the rows the index lists per turn.
    pub fn is_request(kind: MessageKind) -> bool {
        matches!(
            kind,
            MessageKind::ClarificationRequest | MessageKind::PermissionRequest
        )
    }

    /// Inserts or replaces a message. A stale update (older `updated_at`) is ignored.
    pub fn upsert(&mut self, message: &MessageParts<'_>) -> Upsert {
        let turn = message.turn_id.map_or(NONE, |t| self.turns.intern(t));
        let info = Self::is_request(message.kind).then(|| RequestInfo {
            pending: message
                .pending_id
                .map_or(NONE, |p| self.pending_ids.intern(p)),
            question_total: message.question_total,
            flags: message.flags,
        });
        let mut id = None;
        let mut result = Upsert::Inserted;
        if let Some(slot) = self.slot_of(message.id) {
            let Some(stored) = self.row(slot).copied() else {
                return Upsert::Unchanged;
            };
            if row_is_stale(self.times.get(stored.updated).as_ref(), message.updated_at) {
                return Upsert::Stale;
            }
            if self.times.same(stored.created, Some(message.created_at))
                && self.times.same(stored.updated, message.updated_at)
                && stored.turn == turn
                && stored.kind == message.kind
                && stored.status == message.status
                && self.requests_info.get(&slot).copied() == info
            {
                return Upsert::Unchanged;
            }
            // The stored id is the same text: keep its place in the arena.
            id = self.remove_slot(slot, true).map(|row| row.id_place());
            result = Upsert::Updated;
        }
        let place = match id {
            Some(place) => place,
            None => match self.push_id(message.id) {
                Some(place) => place,
                None => return Upsert::Unchanged,
            },
        };
        let row = Row {
            id_at: place.at,
            id_len: place.len,
            id_chunk: place.chunk,
            created: self.times.store(message.created_at),
            updated: message.updated_at.map_or(ABSENT, |u| self.times.store(u)),
            turn,
            kind: message.kind,
            status: message.status,
        };
        self.insert(row, info);
        result
    }

    fn insert(&mut self, row: Row, info: Option<RequestInfo>) {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => match u32::try_from(self.slots.len()) {
                Ok(slot) if slot != NONE => {
                    self.slots.push(FREE_ROW);
                    slot
                }
                _ => return,
            },
        };
        let at = self.place(&row);
        self.order.insert(at, slot);
        let stat = self.per_turn.entry(row.turn).or_default();
        stat.count = stat.count.saturating_add(1);
        let is_request = Self::is_request(row.kind);
        let hash = hash_id(&self.hasher, self.id_of(&row));
        if let Some(info) = info {
            self.requests_info.insert(slot, info);
            // Bundles are clarifications only (SPEC §3).
            if info.pending != NONE && row.kind == MessageKind::ClarificationRequest {
                self.per_pending.entry(info.pending).or_default().push(slot);
            }
        }
        let turn = row.turn;
        if let Some(place) = self
            .slots
            .get_mut(usize::try_from(slot).unwrap_or(usize::MAX))
        {
            *place = row;
        }
        let slots = &self.slots;
        let ids = &self.ids;
        let hasher = &self.hasher;
        self.table.insert_unique(hash, slot, |&s| {
            let id = usize::try_from(s)
                .ok()
                .and_then(|s| slots.get(s))
                .map_or("", |r| ids.get(r.id_place()));
            hash_id(hasher, id)
        });
        if is_request {
            let at = match (self.per_turn.get(&turn), self.row(slot)) {
                (Some(stat), Some(row)) => self.position(&stat.requests, row),
                _ => 0,
            };
            if let Some(stat) = self.per_turn.get_mut(&turn) {
                stat.requests.insert(at.min(stat.requests.len()), slot);
            }
        }
    }

    /// Remembers that a WebSocket event with revision `revision` deleted `id` (whether or not it
    /// was stored); two deletes of one id keep the stronger tombstone (SPEC §5).
    pub fn bury(&mut self, id: &str, revision: Option<&Revision>) {
        let kept = match self.tombstones.get(id) {
            Some(held) => stronger_tombstone(held.as_ref(), revision),
            None => revision.cloned(),
        };
        self.tombstones.insert(id, kept);
    }

    /// An event newer than the delete brought `id` back: pages may carry it again.
    pub fn unbury(&mut self, id: &str) {
        self.tombstones.remove(id);
    }

    /// The tombstone of `id`: `Some(revision of the delete)` when a WebSocket event deleted it
    /// and nothing brought it back since.
    pub fn tombstone(&self, id: &str) -> Option<Option<&Revision>> {
        self.tombstones.get(id).map(Option::as_ref)
    }

    /// The deleted ids remembered (digests).
    pub fn tombstones(&self) -> impl Iterator<Item = (&str, Option<&Revision>)> + '_ {
        self.tombstones.iter().map(|(id, r)| (id, r.as_ref()))
    }

    /// Removes a message; `false` when it was not stored.
    pub fn remove(&mut self, id: &str) -> bool {
        match self.slot_of(id) {
            Some(slot) => {
                self.remove_slot(slot, false);
                true
            }
            None => false,
        }
    }

    /// Takes a row out; its id stays in the arena when `keep_id` (an update re-inserts it).
    fn remove_slot(&mut self, slot: u32, keep_id: bool) -> Option<Row> {
        let row = *self.row(slot)?;
        let hash = hash_id(&self.hasher, self.id_of(&row));
        if let Ok(entry) = self.table.find_entry(hash, |&s| s == slot) {
            entry.remove();
        }
        // Binary search (the slot still holds the row, so it sorts as not-less: its own place),
        // with a scan as the fallback should the order ever disagree.
        let at = self.place(&row);
        let at = if self.order.get(at) == Some(slot) {
            Some(at)
        } else {
            self.order.rposition(slot)
        };
        if let Some(at) = at {
            self.order.remove(at);
        }
        if let Some(place) = self
            .slots
            .get_mut(usize::try_from(slot).unwrap_or(usize::MAX))
        {
            *place = FREE_ROW;
        }
        self.times.release(row.created);
        self.times.release(row.updated);
        if !keep_id {
            self.ids.release(row.id_place());
        }
        if let Some(stat) = self.per_turn.get_mut(&row.turn) {
            stat.count = stat.count.saturating_sub(1);
            stat.requests.retain(|&s| s != slot);
            if stat.count == 0 {
                self.per_turn.remove(&row.turn);
            }
        }
        if let Some(info) = self.requests_info.remove(&slot) {
            if let Some(slots) = self.per_pending.get_mut(&info.pending) {
                slots.retain(|&s| s != slot);
                if slots.is_empty() {
                    self.per_pending.remove(&info.pending);
                }
            }
        }
        self.free.push(slot);
        Some(row)
    }
}
