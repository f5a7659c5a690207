//! The per-session message index of the store: what the rules need of each message (never its
//! content), kept in persisted creation order so a WebSocket event costs O(log n) and a query
//! reads only the few rows the rules can look at.
//!
//! Rows live in a slab; `order` lists the slots by (`created_at`, `id`); a hash table maps a
//! message id to its slot while storing the id only once (in the row). Per turn, the index keeps
//! the message count (for the reservation rule) and the `clarification_request` /
//! `permission_request` slots in order: the only rows the discovery, permission and pending-action
//! rules can return or decide on.

use std::cmp::Ordering;
use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::hash::{FxBuildHasher, HashMap};

use crate::rules::model::{Message, MessageKind, MessageRecord, RequestStatus};
use crate::rules::time::Timestamp;

/// A message's rule fields, borrowed: what [`MessageIndex::upsert`] reads (the wasm fast path
/// builds it from interned and scratch-buffer text without allocating).
#[derive(Clone, Copy, Debug)]
pub struct MessageParts<'a> {
    pub id: &'a str,
    pub turn_id: Option<&'a str>,
    pub kind: MessageKind,
    pub status: RequestStatus,
    pub pending_id: Option<&'a str>,
    pub question_total: Option<f64>,
    pub created_at: &'a Timestamp,
    pub updated_at: Option<&'a Timestamp>,
}

impl<'a> From<&'a Message> for MessageParts<'a> {
    fn from(message: &'a Message) -> Self {
        MessageParts {
            id: &message.id,
            turn_id: message.turn_id.as_deref(),
            kind: message.kind,
            status: message.status,
            pending_id: message.pending_id.as_deref(),
            question_total: message.question_total,
            created_at: &message.created_at,
            updated_at: message.updated_at.as_ref(),
        }
    }
}

/// The interned id of "no turn" / "no pending id".
pub(crate) const NONE: u32 = u32::MAX;

/// One message as the store keeps it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Row {
    pub id: Box<str>,
    pub created: Timestamp,
    pub updated: Option<Timestamp>,
    /// Interned turn id, or [`NONE`].
    pub turn: u32,
    pub kind: MessageKind,
    pub status: RequestStatus,
}

/// What only clarification rows carry.
#[derive(Clone, Copy, Debug, PartialEq)]
struct ClarificationInfo {
    pending: u32,
    question_total: Option<f64>,
}

/// Interned strings of one session (turn ids, pending ids).
#[derive(Clone, Debug, Default)]
pub(crate) struct Names {
    names: Vec<Box<str>>,
    lookup: HashMap<Box<str>, u32>,
}

impl Names {
    pub fn get(&self, name: &str) -> Option<u32> {
        self.lookup.get(name).copied()
    }

    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(id) = self.get(name) {
            return id;
        }
        let id = u32::try_from(self.names.len()).unwrap_or(NONE);
        if id == NONE {
            return NONE;
        }
        self.names.push(Box::from(name));
        self.lookup.insert(Box::from(name), id);
        id
    }

    pub fn name(&self, id: u32) -> Option<&str> {
        self.names.get(usize::try_from(id).ok()?).map(|n| &**n)
    }

    fn bytes(&self) -> usize {
        self.names
            .iter()
            .map(|n| n.len())
            .sum::<usize>()
            .saturating_mul(2)
    }
}

/// Per-turn bookkeeping.
#[derive(Clone, Debug, Default)]
struct TurnStat {
    count: u32,
    /// Clarification and permission slots of the turn, in creation order.
    requests: Vec<u32>,
}

/// What an upsert did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Upsert {
    Inserted,
    Updated,
    /// Same fields as stored: nothing changed.
    Unchanged,
    /// Older than the stored row (stored has `updated_at`, the incoming has none or a smaller
    /// one): ignored.
    Stale,
}

/// The message index of one session.
#[derive(Clone, Debug, Default)]
pub(crate) struct MessageIndex {
    slots: Vec<Option<Row>>,
    free: Vec<u32>,
    table: HashTable<u32>,
    hasher: FxBuildHasher,
    order: Vec<u32>,
    pub turns: Names,
    pending_ids: Names,
    per_turn: HashMap<u32, TurnStat>,
    clarifications: HashMap<u32, ClarificationInfo>,
}

fn hash_id(hasher: &FxBuildHasher, id: &str) -> u64 {
    hasher.hash_one(id)
}

impl MessageIndex {
    pub fn len(&self) -> usize {
        self.order.len()
    }

    fn row(&self, slot: u32) -> Option<&Row> {
        self.slots.get(usize::try_from(slot).ok()?)?.as_ref()
    }

    fn slot_of(&self, id: &str) -> Option<u32> {
        let hash = hash_id(&self.hasher, id);
        self.table
            .find(hash, |&slot| self.row(slot).is_some_and(|r| &*r.id == id))
            .copied()
    }

    fn order_of(a: &Row, b: &Row) -> Ordering {
        a.created.cmp(&b.created).then_with(|| a.id.cmp(&b.id))
    }

    /// Position in `list` (slots in creation order) where `row` belongs.
    fn position(&self, list: &[u32], row: &Row) -> usize {
        list.partition_point(|&slot| {
            self.row(slot)
                .is_some_and(|r| Self::order_of(r, row) == Ordering::Less)
        })
    }

    fn is_request(kind: MessageKind) -> bool {
        matches!(
            kind,
            MessageKind::ClarificationRequest | MessageKind::PermissionRequest
        )
    }

    /// Inserts or replaces a message. A stale update (older `updated_at`) is ignored.
    pub fn upsert(&mut self, message: &MessageParts<'_>) -> Upsert {
        let turn = message.turn_id.map_or(NONE, |t| self.turns.intern(t));
        let info = (message.kind == MessageKind::ClarificationRequest).then(|| ClarificationInfo {
            pending: message
                .pending_id
                .map_or(NONE, |p| self.pending_ids.intern(p)),
            question_total: message.question_total,
        });
        let mut id = None;
        let mut result = Upsert::Inserted;
        if let Some(slot) = self.slot_of(message.id) {
            let Some(stored) = self.row(slot) else {
                return Upsert::Unchanged;
            };
            if let Some(stored_updated) = &stored.updated {
                if message.updated_at.is_none_or(|u| u < stored_updated) {
                    return Upsert::Stale;
                }
            }
            if stored.created == *message.created_at
                && stored.updated.as_ref() == message.updated_at
                && stored.turn == turn
                && stored.kind == message.kind
                && stored.status == message.status
                && self.clarifications.get(&slot).copied() == info
            {
                return Upsert::Unchanged;
            }
            // The stored id is the same text: keep its allocation.
            id = self.remove_slot(slot).map(|row| row.id);
            result = Upsert::Updated;
        }
        let row = Row {
            id: id.unwrap_or_else(|| Box::from(message.id)),
            created: message.created_at.clone(),
            updated: message.updated_at.cloned(),
            turn,
            kind: message.kind,
            status: message.status,
        };
        self.insert(row, info);
        result
    }

    fn insert(&mut self, row: Row, info: Option<ClarificationInfo>) {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => match u32::try_from(self.slots.len()) {
                Ok(slot) if slot != NONE => {
                    self.slots.push(None);
                    slot
                }
                _ => return,
            },
        };
        let at = self.position(&self.order, &row);
        self.order.insert(at, slot);
        let stat = self.per_turn.entry(row.turn).or_default();
        stat.count = stat.count.saturating_add(1);
        let is_request = Self::is_request(row.kind);
        let hash = hash_id(&self.hasher, &row.id);
        if let Some(info) = info {
            self.clarifications.insert(slot, info);
        }
        let turn = row.turn;
        if let Some(place) = self
            .slots
            .get_mut(usize::try_from(slot).unwrap_or(usize::MAX))
        {
            *place = Some(row);
        }
        let slots = &self.slots;
        let hasher = &self.hasher;
        self.table.insert_unique(hash, slot, |&s| {
            let id = usize::try_from(s)
                .ok()
                .and_then(|s| slots.get(s))
                .and_then(Option::as_ref)
                .map_or("", |r| &r.id);
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

    /// Removes a message; `false` when it was not stored.
    pub fn remove(&mut self, id: &str) -> bool {
        match self.slot_of(id) {
            Some(slot) => {
                self.remove_slot(slot);
                true
            }
            None => false,
        }
    }

    fn remove_slot(&mut self, slot: u32) -> Option<Row> {
        let row = self
            .slots
            .get_mut(usize::try_from(slot).unwrap_or(usize::MAX))
            .and_then(Option::take)?;
        let hash = hash_id(&self.hasher, &row.id);
        if let Ok(entry) = self.table.find_entry(hash, |&s| s == slot) {
            entry.remove();
        }
        // Binary search (the slot's row is out, so it sorts as not-less: its own place), with a
        // scan as the fallback should the order ever disagree.
        let at = self.position(&self.order, &row);
        let at = if self.order.get(at) == Some(&slot) {
            Some(at)
        } else {
            self.order.iter().rposition(|&s| s == slot)
        };
        if let Some(at) = at {
            self.order.remove(at);
        }
        if let Some(stat) = self.per_turn.get_mut(&row.turn) {
            stat.count = stat.count.saturating_sub(1);
            stat.requests.retain(|&s| s != slot);
            if stat.count == 0 {
                self.per_turn.remove(&row.turn);
            }
        }
        self.clarifications.remove(&slot);
        self.free.push(slot);
        Some(row)
    }

    /// Does any stored message reference this turn?
    pub fn references(&self, turn_id: &str) -> bool {
        self.turns
            .get(turn_id)
            .and_then(|t| self.per_turn.get(&t))
            .is_some_and(|s| s.count > 0)
    }

    fn view(&self, slot: u32) -> Option<RowView<'_>> {
        Some(RowView {
            index: self,
            slot,
            row: self.row(slot)?,
        })
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
        self.order.last().copied()
    }

    /// The newest message that has a turn.
    fn newest_with_turn(&self) -> Option<u32> {
        self.order
            .iter()
            .rev()
            .copied()
            .find(|&slot| self.row(slot).is_some_and(|r| r.turn != NONE))
    }

    /// Every clarification row plus the newest row that has a turn, in creation order: discovery
    /// over all messages gives the same answer on this subset as on the whole transcript (other
    /// rows only matter through the latest turn, which the newest row with a turn decides).
    pub fn discovery_candidates(&self) -> Vec<RowView<'_>> {
        let mut slots: Vec<u32> = self
            .per_turn
            .values()
            .flat_map(|s| s.requests.iter().copied())
            .filter(|&s| {
                self.row(s)
                    .is_some_and(|r| r.kind == MessageKind::ClarificationRequest)
            })
            .collect();
        slots.extend(self.newest_with_turn());
        let mut views: Vec<RowView<'_>> = slots.into_iter().filter_map(|s| self.view(s)).collect();
        crate::sort::stable_sort_by(&mut views, |a, b| Self::order_of(a.row, b.row));
        views.dedup_by_key(|v| v.slot);
        views
    }

    /// The rows the permission rule reads: the newest message and the permission rows of its
    /// turn (of every turn when it has none), in creation order.
    pub fn permission_candidates(&self) -> Vec<RowView<'_>> {
        let Some(newest) = self.newest() else {
            return Vec::new();
        };
        let boundary = self.row(newest).map_or(NONE, |r| r.turn);
        let mut slots: Vec<u32> = self
            .per_turn
            .iter()
            .filter(|(&turn, _)| boundary == NONE || turn == boundary)
            .flat_map(|(_, s)| s.requests.iter().copied())
            .filter(|&s| {
                self.row(s)
                    .is_some_and(|r| r.kind == MessageKind::PermissionRequest)
            })
            .collect();
        slots.push(newest);
        let mut views: Vec<RowView<'_>> = slots.into_iter().filter_map(|s| self.view(s)).collect();
        crate::sort::stable_sort_by(&mut views, |a, b| Self::order_of(a.row, b.row));
        views.dedup_by_key(|v| v.slot);
        views
    }

    /// Every row in creation order (tests, digests).
    pub fn rows(&self) -> impl Iterator<Item = RowView<'_>> + '_ {
        self.order.iter().filter_map(|&slot| self.view(slot))
    }

    /// Approximate heap bytes held (for the memory benchmark).
    pub fn heap_bytes(&self) -> usize {
        let row = std::mem::size_of::<Option<Row>>();
        let ids: usize = self.rows().map(|v| v.row.id.len()).sum();
        self.slots
            .capacity()
            .saturating_mul(row)
            .saturating_add(self.order.capacity().saturating_mul(4))
            .saturating_add(self.table.capacity().saturating_mul(5))
            .saturating_add(ids)
            .saturating_add(self.turns.bytes())
            .saturating_add(self.pending_ids.bytes())
            .saturating_add(self.clarifications.capacity().saturating_mul(24))
    }
}

/// A stored row seen through [`MessageRecord`], so the rules run on the index directly.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowView<'a> {
    index: &'a MessageIndex,
    slot: u32,
    pub row: &'a Row,
}

impl<'a> RowView<'a> {
    fn info(&self) -> Option<&'a ClarificationInfo> {
        self.index.clarifications.get(&self.slot)
    }

    pub fn id_str(&self) -> &'a str {
        &self.row.id
    }

    pub fn pending_id_str(&self) -> Option<&'a str> {
        self.index.pending_ids.name(self.info()?.pending)
    }

    pub fn turn_id_str(&self) -> Option<&'a str> {
        self.index.turns.name(self.row.turn)
    }
}

impl MessageRecord for RowView<'_> {
    fn id(&self) -> &str {
        &self.row.id
    }
    fn turn_id(&self) -> Option<&str> {
        self.turn_id_str()
    }
    fn kind(&self) -> MessageKind {
        self.row.kind
    }
    fn status(&self) -> RequestStatus {
        self.row.status
    }
    fn pending_id(&self) -> Option<&str> {
        self.pending_id_str()
    }
    fn question_total(&self) -> Option<f64> {
        self.info()?.question_total
    }
    fn created_at(&self) -> &Timestamp {
        &self.row.created
    }
}
