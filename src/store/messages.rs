//! The per-session message index of the store: what the rules need of each message (never its
//! content), kept in persisted creation order so a WebSocket event costs O(log n) and a query
//! reads only the few rows the rules can look at.
//!
//! Rows live in a slab of 32-byte rows; `order` lists the slots by (`created_at`, `id`) in
//! blocks (an insertion or removal anywhere costs O(log n) plus one block's move); a hash
//! table maps a message id to its slot; the ids themselves sit end to end in one arena string
//! (no allocation, and no allocator overhead, per id), and timestamps are packed into 8 bytes
//! ([`super::packed`]). Per turn, the index keeps
//! the message count (for the reservation rule) and the `clarification_request` /
//! `permission_request` slots in order: the only rows the discovery, permission and pending-action
//! rules can return or decide on.

use std::cmp::Ordering;
use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::hash::{FxBuildHasher, HashMap};

use crate::rules::model::{Message, MessageKind, MessageRecord, RequestStatus, Revision};
use crate::rules::order::{row_is_stale, stronger_tombstone};
use crate::rules::time::Timestamp;

use super::arena::{BlockList, Chunked, IdPlace, Ids, Place};
use super::packed::{Times, ABSENT};
use super::remembered::Remembered;

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

/// One message as the store keeps it (32 bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Row {
    /// The id: `id_len` bytes at `id_at` in chunk `id_chunk` of the index's id arena;
    /// `id_len` [`VACANT`]: a free slot.
    id_at: u32,
    id_len: u32,
    id_chunk: u16,
    /// Packed timestamps ([`Times`]); `updated` may be [`ABSENT`].
    created: u64,
    updated: u64,
    /// Interned turn id, or [`NONE`].
    pub turn: u32,
    pub kind: MessageKind,
    pub status: RequestStatus,
}

/// `Row::id_len` of a free slot.
const VACANT: u32 = u32::MAX;

const FREE_ROW: Row = Row {
    id_at: 0,
    id_len: VACANT,
    id_chunk: 0,
    created: ABSENT,
    updated: ABSENT,
    turn: NONE,
    kind: MessageKind::Other,
    status: RequestStatus::Pending,
};

impl Row {
    fn id_place(&self) -> IdPlace {
        IdPlace {
            chunk: self.id_chunk,
            at: self.id_at,
            len: self.id_len,
        }
    }
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
    /// The id was deleted by an input newer than this row: ignored.
    Buried,
}

/// The message index of one session, allocated with its first row or tombstone: a session known
/// only from its task's session list (most of a task list of many sessions) holds a pointer
/// instead of the index's ~460 bytes. Reads of a session without one answer as an empty index.
#[derive(Clone, Debug, Default)]
pub(crate) struct MessageIndex(Option<Box<Index>>);

impl MessageIndex {
    fn index(&mut self) -> &mut Index {
        self.0.get_or_insert_with(Box::default)
    }

    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |i| i.len())
    }

    /// Clarification and permission requests: the rows the index lists per turn.
    pub fn is_request(kind: MessageKind) -> bool {
        Index::is_request(kind)
    }

    /// Inserts or replaces a message. A stale update (older `updated_at`) is ignored.
    pub fn upsert(&mut self, message: &MessageParts<'_>) -> Upsert {
        self.index().upsert(message)
    }

    /// See [`Index::bury`].
    pub fn bury(&mut self, id: &str, revision: Option<&Revision>) {
        self.index().bury(id, revision);
    }

    /// An event newer than the delete brought `id` back: pages may carry it again.
    pub fn unbury(&mut self, id: &str) {
        if let Some(index) = self.0.as_mut() {
            index.unbury(id);
        }
    }

    /// See [`Index::tombstone`].
    pub fn tombstone(&self, id: &str) -> Option<Option<&Revision>> {
        self.0.as_ref()?.tombstone(id)
    }

    /// The deleted ids remembered (digests).
    pub fn tombstones(&self) -> impl Iterator<Item = (&str, Option<&Revision>)> + '_ {
        self.0.iter().flat_map(|i| i.tombstones())
    }

    /// The deleted ids remembered, oldest delete first (snapshots).
    pub fn tombstones_ordered(&self) -> impl Iterator<Item = (&str, Option<&Revision>)> + '_ {
        self.0
            .iter()
            .flat_map(|i| i.tombstones.ordered().map(|(id, r)| (id, r.as_ref())))
    }

    /// The stored kind of a message.
    pub fn kind_of(&self, id: &str) -> Option<MessageKind> {
        self.0.as_ref()?.kind_of(id)
    }

    /// Removes a message; `false` when it was not stored.
    pub fn remove(&mut self, id: &str) -> bool {
        self.0.as_mut().is_some_and(|i| i.remove(id))
    }

    /// Does any stored message reference this turn?
    pub fn references(&self, turn_id: &str) -> bool {
        self.0.as_ref().is_some_and(|i| i.references(turn_id))
    }

    /// See [`Index::turn_requests`].
    pub fn turn_requests(&self, turn_id: &str) -> Vec<RowView<'_>> {
        self.0
            .as_ref()
            .map(|i| i.turn_requests(turn_id))
            .unwrap_or_default()
    }

    /// See [`Index::discovery_candidates`].
    pub fn discovery_candidates(&self) -> Vec<RowView<'_>> {
        self.0
            .as_ref()
            .map(|i| i.discovery_candidates())
            .unwrap_or_default()
    }

    /// See [`Index::permission_candidates`].
    pub fn permission_candidates(&self) -> Vec<RowView<'_>> {
        self.0
            .as_ref()
            .map(|i| i.permission_candidates())
            .unwrap_or_default()
    }

    /// Every row in creation order (tests, digests).
    pub fn rows(&self) -> impl Iterator<Item = RowView<'_>> + '_ {
        self.0.iter().flat_map(|i| i.rows())
    }

    /// Heap bytes held (for the memory benchmark): capacities, so unused room counts too.
    pub fn heap_bytes(&self) -> usize {
        self.0.as_ref().map_or(0, |i| {
            std::mem::size_of::<Index>().saturating_add(i.heap_bytes())
        })
    }
}

/// The index itself (see [`MessageIndex`]).
#[derive(Clone, Debug)]
struct Index {
    slots: Chunked<Row>,
    free: Vec<u32>,
    ids: Ids,
    times: Times,
    table: HashTable<u32>,
    hasher: FxBuildHasher,
    order: BlockList<u32>,
    pub turns: Names,
    pending_ids: Names,
    per_turn: HashMap<u32, TurnStat>,
    clarifications: HashMap<u32, ClarificationInfo>,
    /// The clarification slots of each pending id (interned; rows without one are not listed).
    per_pending: HashMap<u32, Vec<u32>>,
    /// Ids deleted by a WebSocket event, with the delete's revision: the newest [`TOMBSTONES`]
    /// (SPEC §5; [`crate::rules::order::revives`] decides what may bring one back).
    tombstones: Remembered,
}

/// Deleted ids remembered per session (docs/convergence.md: what forgetting one costs).
pub(crate) const TOMBSTONES: usize = 1024;

impl Default for Index {
    fn default() -> Self {
        Index {
            slots: Chunked::default(),
            free: Vec::new(),
            ids: Ids::default(),
            times: Times::default(),
            table: HashTable::new(),
            hasher: FxBuildHasher::default(),
            order: BlockList::default(),
            turns: Names::default(),
            pending_ids: Names::default(),
            per_turn: HashMap::default(),
            clarifications: HashMap::default(),
            per_pending: HashMap::default(),
            tombstones: Remembered::new(TOMBSTONES),
        }
    }
}

fn hash_id(hasher: &FxBuildHasher, id: &str) -> u64 {
    hasher.hash_one(id)
}

impl Index {
    pub fn len(&self) -> usize {
        self.order.len()
    }

    fn row(&self, slot: u32) -> Option<&Row> {
        self.slots
            .get(usize::try_from(slot).ok()?)
            .filter(|r| r.id_len != VACANT)
    }

    fn id_of(&self, row: &Row) -> &str {
        self.ids.get(row.id_place())
    }

    fn slot_of(&self, id: &str) -> Option<u32> {
        let hash = hash_id(&self.hasher, id);
        self.table
            .find(hash, |&slot| {
                self.row(slot).is_some_and(|r| self.id_of(r) == id)
            })
            .copied()
    }

    fn order_of(&self, a: &Row, b: &Row) -> Ordering {
        self.times
            .cmp(a.created, b.created)
            .then_with(|| self.id_of(a).cmp(self.id_of(b)))
    }

    /// Whether the row in `slot` comes before `row` in creation order.
    fn before(&self, slot: u32, row: &Row) -> bool {
        self.row(slot)
            .is_some_and(|r| self.order_of(r, row) == Ordering::Less)
    }

    /// The place in `order` where `row` belongs. Rows mostly arrive in creation order: one
    /// comparison when the row sorts after the newest, a binary search otherwise.
    fn place(&self, row: &Row) -> Place {
        match self.order.last() {
            Some(newest) if !self.before(newest, row) => {
                self.order.partition_point(|slot| self.before(slot, row))
            }
            _ => self.order.end(),
        }
    }

    /// Position in `list` (slots in creation order) where `row` belongs (one comparison when it
    /// sorts last, as in [`Self::place`]).
    fn position(&self, list: &[u32], row: &Row) -> usize {
        match list.last() {
            Some(&newest) if !self.before(newest, row) => {
                list.partition_point(|&slot| self.before(slot, row))
            }
            _ => list.len(),
        }
    }

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
        let info = (message.kind == MessageKind::ClarificationRequest).then(|| ClarificationInfo {
            pending: message
                .pending_id
                .map_or(NONE, |p| self.pending_ids.intern(p)),
            question_total: message.question_total,
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
                && self.clarifications.get(&slot).copied() == info
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

    /// Appends an id to the arena (rebuilding it first when mostly holes).
    fn push_id(&mut self, id: &str) -> Option<IdPlace> {
        if u32::try_from(id.len()).ok()? == VACANT {
            return None;
        }
        if self.ids.should_compact() {
            let mut ids = Ids::default();
            for row in self.slots.iter_mut().filter(|r| r.id_len != VACANT) {
                let Some(place) = ids.push(self.ids.get(row.id_place())) else {
                    continue;
                };
                row.id_at = place.at;
                row.id_chunk = place.chunk;
            }
            self.ids = ids;
        }
        self.ids.push(id)
    }

    fn insert(&mut self, row: Row, info: Option<ClarificationInfo>) {
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
            self.clarifications.insert(slot, info);
            if info.pending != NONE {
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

    /// The stored kind of a message.
    pub fn kind_of(&self, id: &str) -> Option<MessageKind> {
        self.slot_of(id)
            .and_then(|slot| self.row(slot))
            .map(|r| r.kind)
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
        if let Some(info) = self.clarifications.remove(&slot) {
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

    /// Does any stored message reference this turn?
    pub fn references(&self, turn_id: &str) -> bool {
        self.turns
            .get(turn_id)
            .and_then(|t| self.per_turn.get(&t))
            .is_some_and(|s| s.count > 0)
    }

    fn view(&self, slot: u32) -> Option<RowView<'_>> {
        let row = self.row(slot)?;
        Some(RowView {
            index: self,
            slot,
            row,
            created: self.times.get(row.created).unwrap_or_default(),
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
            .filter_map(|s| self.clarifications.get(s))
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

    /// Every row in creation order (tests, digests).
    pub fn rows(&self) -> impl Iterator<Item = RowView<'_>> + '_ {
        self.order.iter().filter_map(|slot| self.view(slot))
    }

    /// Heap bytes held (for the memory benchmark): capacities, so unused room counts too.
    pub fn heap_bytes(&self) -> usize {
        [
            self.slots.heap_bytes(),
            self.free.capacity().saturating_mul(4),
            self.ids.heap_bytes(),
            self.order.heap_bytes(),
            // A bucket: the slot (4 bytes) and its control byte.
            self.table.capacity().saturating_mul(5),
            self.turns.bytes(),
            self.pending_ids.bytes(),
            // Key, value and control byte per bucket.
            self.clarifications
                .capacity()
                .saturating_mul(std::mem::size_of::<(u32, ClarificationInfo)>().saturating_add(1)),
            self.times.heap_bytes(),
            // Bundle lists: a slot per clarification row with a pending id, plus the map.
            self.per_pending
                .values()
                .map(|v| v.capacity().saturating_mul(4).saturating_add(32))
                .sum(),
            // The deleted ids remembered (see `bury`).
            self.tombstones.heap_bytes(),
        ]
        .iter()
        .fold(0, |a, &b| a.saturating_add(b))
    }
}

/// A stored row seen through [`MessageRecord`], so the rules run on the index directly.
#[derive(Clone, Debug)]
pub(crate) struct RowView<'a> {
    index: &'a Index,
    slot: u32,
    pub row: &'a Row,
    /// The unpacked `created_at` (the rules read it by reference).
    created: Timestamp,
}

impl<'a> RowView<'a> {
    fn info(&self) -> Option<&'a ClarificationInfo> {
        self.index.clarifications.get(&self.slot)
    }

    pub fn id_str(&self) -> &'a str {
        self.index.id_of(self.row)
    }

    pub fn created(&self) -> &Timestamp {
        &self.created
    }

    pub fn updated(&self) -> Option<Timestamp> {
        self.index.times.get(self.row.updated)
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
        self.id_str()
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
        &self.created
    }
}
