//! `Remembered`: a bounded map of ids the store must not forget too soon (deleted message ids,
//! removed tasks and their sessions). It keeps every id of the last `capacity` insertions (and at
//! most twice that many ids) and forgets the oldest first; docs/convergence.md states what
//! forgetting one costs.

use super::hash::HashMap;
use crate::rules::model::Revision;

/// Ids with a value each, bounded as the module docs say. One value type serves every use, so
/// the wasm holds one copy of the code.
#[derive(Clone, Debug)]
pub(crate) struct Remembered {
    entries: HashMap<Box<str>, (u64, Option<Revision>)>,
    inserted: u64,
    capacity: usize,
}

type V = Option<Revision>;

impl Remembered {
    pub fn new(capacity: usize) -> Self {
        Remembered {
            entries: HashMap::default(),
            inserted: 0,
            capacity,
        }
    }

    pub fn get(&self, id: &str) -> Option<&V> {
        if self.entries.is_empty() {
            return None;
        }
        self.entries.get(id).map(|(_, v)| v)
    }

    pub fn contains(&self, id: &str) -> bool {
        self.get(id).is_some()
    }

    /// Remembers `id` with `value` (replacing what it held, and counting as the newest). Every id
    /// inserted by the last `capacity` insertions stays remembered: a map that reached twice that
    /// forgets the older ones in one pass (so once per `capacity` insertions at most).
    pub fn insert(&mut self, id: &str, value: V) {
        if self.entries.len() >= self.capacity.saturating_mul(2) {
            let keep_after = self.inserted.saturating_sub(self.capacity as u64);
            self.entries.retain(|_, (at, _)| *at > keep_after);
        }
        self.inserted = self.inserted.wrapping_add(1);
        self.entries.insert(Box::from(id), (self.inserted, value));
    }

    pub fn remove(&mut self, id: &str) -> Option<V> {
        if self.entries.is_empty() {
            return None;
        }
        self.entries.remove(id).map(|(_, v)| v)
    }

    /// The ids and their values (tests, digests; in no particular order).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> + '_ {
        self.entries.iter().map(|(id, (_, v))| (&**id, v))
    }

    /// The ids and their values, oldest insertion first (snapshots: the order decides which
    /// are forgotten first).
    pub fn ordered(&self) -> impl Iterator<Item = (&str, &V)> + '_ {
        let mut entries: Vec<_> = self.entries.iter().collect();
        crate::sort::stable_sort_by(&mut entries, |a, b| a.1 .0.cmp(&b.1 .0));
        entries.into_iter().map(|(id, (_, v))| (&**id, v))
    }

    /// Approximate heap bytes (for the memory figures).
    pub fn heap_bytes(&self) -> usize {
        self.entries
            .keys()
            .map(|id| {
                id.len()
                    .saturating_add(16)
                    .saturating_add(std::mem::size_of::<V>())
            })
            .fold(0, usize::saturating_add)
    }
}
