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
//!
//! The index is split by concern: [`slots`] stores the rows and finds them (the slab, the id
//! arena, the hash table, creation order), [`turns`] keeps the per-turn and per-pending-id
//! bookkeeping the discovery and permission queries read, [`update`] holds the paths that change
//! the index (upsert, removal, tombstones) and [`view`] the rows as the rules see them.

mod slots;
mod turns;
mod update;
mod view;

use hashbrown::HashTable;

use super::hash::{FxBuildHasher, HashMap};

use crate::rules::model::{Message, MessageKind, RequestStatus, Revision, RowFlags};
use crate::rules::time::Timestamp;

use super::arena::{BlockList, Chunked, Ids};
use super::packed::Times;
use super::remembered::Remembered;

use self::slots::{Names, RequestInfo, Row};
use self::turns::TurnStat;
pub(crate) use self::view::RowView;

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
    pub flags: RowFlags,
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
            flags: message.flags,
        }
    }
}

/// The interned id of "no turn" / "no pending id".
pub(crate) const NONE: u32 = u32::MAX;

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
    requests_info: HashMap<u32, RequestInfo>,
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
            requests_info: HashMap::default(),
            per_pending: HashMap::default(),
            tombstones: Remembered::new(TOMBSTONES),
        }
    }
}

impl Index {
    pub fn len(&self) -> usize {
        self.order.len()
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
            self.requests_info
                .capacity()
                .saturating_mul(std::mem::size_of::<(u32, RequestInfo)>().saturating_add(1)),
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
