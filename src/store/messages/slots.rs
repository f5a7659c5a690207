//! Row storage and lookup of the message index: the 32-byte [`Row`] in its slab (with the
//! [`RequestInfo`] only request rows carry), the id text in the arena, the hash table
//! from an id to its slot, the creation order the rows sort by, and the interned turn and pending
//! ids ([`Names`]).

use std::cmp::Ordering;
use std::hash::BuildHasher;

use crate::store::hash::{FxBuildHasher, HashMap};

use crate::rules::model::{MessageKind, RequestStatus, RowFlags};

use super::{Index, NONE};
use crate::store::arena::{IdPlace, Ids, Place};
use crate::store::packed::ABSENT;

/// One message as the store keeps it (32 bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Row {
    /// The id: `id_len` bytes at `id_at` in chunk `id_chunk` of the index's id arena;
    /// `id_len` [`VACANT`]: a free slot.
    pub(super) id_at: u32,
    pub(super) id_len: u32,
    pub(super) id_chunk: u16,
    /// Packed timestamps ([`Times`](crate::store::packed::Times)); `updated` may be [`ABSENT`].
    pub(super) created: u64,
    pub(super) updated: u64,
    /// Interned turn id, or [`NONE`].
    pub turn: u32,
    pub kind: MessageKind,
    pub status: RequestStatus,
}

/// `Row::id_len` of a free slot.
const VACANT: u32 = u32::MAX;

pub(super) const FREE_ROW: Row = Row {
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
    pub(super) fn id_place(&self) -> IdPlace {
        IdPlace {
            chunk: self.id_chunk,
            at: self.id_at,
            len: self.id_len,
        }
    }
}

/// What only request rows (clarifications and permissions) carry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct RequestInfo {
    pub(super) pending: u32,
    pub(super) question_total: Option<f64>,
    pub(super) flags: RowFlags,
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

    pub(super) fn bytes(&self) -> usize {
        self.names
            .iter()
            .map(|n| n.len())
            .sum::<usize>()
            .saturating_mul(2)
    }
}

pub(super) fn hash_id(hasher: &FxBuildHasher, id: &str) -> u64 {
    hasher.hash_one(id)
}

impl Index {
    pub(super) fn row(&self, slot: u32) -> Option<&Row> {
        self.slots
            .get(usize::try_from(slot).ok()?)
            .filter(|r| r.id_len != VACANT)
    }

    pub(super) fn id_of(&self, row: &Row) -> &str {
        self.ids.get(row.id_place())
    }

    pub(super) fn slot_of(&self, id: &str) -> Option<u32> {
        let hash = hash_id(&self.hasher, id);
        self.table
            .find(hash, |&slot| {
                self.row(slot).is_some_and(|r| self.id_of(r) == id)
            })
            .copied()
    }

    pub(super) fn order_of(&self, a: &Row, b: &Row) -> Ordering {
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
    pub(super) fn place(&self, row: &Row) -> Place {
        match self.order.last() {
            Some(newest) if !self.before(newest, row) => {
                self.order.partition_point(|slot| self.before(slot, row))
            }
            _ => self.order.end(),
        }
    }

    /// Position in `list` (slots in creation order) where `row` belongs (one comparison when it
    /// sorts last, as in [`Self::place`]).
    pub(super) fn position(&self, list: &[u32], row: &Row) -> usize {
        match list.last() {
            Some(&newest) if !self.before(newest, row) => {
                list.partition_point(|&slot| self.before(slot, row))
            }
            _ => list.len(),
        }
    }

    /// Appends an id to the arena (rebuilding it first when mostly holes).
    pub(super) fn push_id(&mut self, id: &str) -> Option<IdPlace> {
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

    /// The stored kind of a message.
    pub fn kind_of(&self, id: &str) -> Option<MessageKind> {
        self.slot_of(id)
            .and_then(|slot| self.row(slot))
            .map(|r| r.kind)
    }
}
