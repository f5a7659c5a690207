//! The crate's hash function (the store's id indexes, and the rules that group ids: the turn-list
//! and session-list merges): FxHash (rustc's), one 64-bit multiply per 8 bytes, with murmur3's
//! finalizer. The default
//! (foldhash) folds through a 128-bit multiply, which wasm32 has no instruction for, and hashing
//! ids was the store's largest single cost per event in wasm. Keys are ids the app's own backend
//! sent; the store does not need protection against chosen-collision inputs.

use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

const K: u64 = 0xf135_7aea_2e62_a9c5;

/// FxHash over 8-byte words (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // The length first: the zero-padded tail word would otherwise lose it.
        self.add(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            if let &[a, b, c, d, e, f, g, h] = chunk {
                self.add(u64::from_le_bytes([a, b, c, d, e, f, g, h]));
            }
        }
        let mut tail = 0u64;
        for &byte in chunks.remainder().iter().rev() {
            tail = tail << 8 | u64::from(byte);
        }
        if !chunks.remainder().is_empty() {
            self.add(tail);
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // A multiply carries a difference only upwards: mix the high bits back down (murmur3's
        // finalizer), since hashbrown takes its bucket from the low bits.
        let mut h = self.hash;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

pub type FxBuildHasher = BuildHasherDefault<FxHasher>;
pub type HashMap<K, V> = hashbrown::HashMap<K, V, FxBuildHasher>;

/// A [`HashMap`] keyed by ids (`Box<str>`, `Arc<str>`) whose lookups are not inlined:
/// the store's task and session tables are looked up at some forty places, and each inlined
/// probe loop is a copy. Everything else is the map's own ([`std::ops::Deref`]).
#[derive(Clone)]
pub struct IdMap<K, V>(HashMap<K, V>);

/// As the map's own (a store's `Debug` text is what it was before the newtype).
impl<K: std::fmt::Debug, V: std::fmt::Debug> std::fmt::Debug for IdMap<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<K, V> Default for IdMap<K, V> {
    fn default() -> Self {
        IdMap(HashMap::default())
    }
}

impl<K, V> std::ops::Deref for IdMap<K, V> {
    type Target = HashMap<K, V>;
    fn deref(&self) -> &HashMap<K, V> {
        &self.0
    }
}

impl<K, V> std::ops::DerefMut for IdMap<K, V> {
    fn deref_mut(&mut self) -> &mut HashMap<K, V> {
        &mut self.0
    }
}

impl<'a, K, V> IntoIterator for &'a IdMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = hashbrown::hash_map::Iter<'a, K, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a, K, V> IntoIterator for &'a mut IdMap<K, V> {
    type Item = (&'a K, &'a mut V);
    type IntoIter = hashbrown::hash_map::IterMut<'a, K, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

impl<K: std::hash::Hash + Eq, V> IdMap<K, V> {
    #[inline(never)]
    pub fn get<Q: ?Sized + std::hash::Hash + hashbrown::Equivalent<K>>(
        &self,
        id: &Q,
    ) -> Option<&V> {
        self.0.get(id)
    }

    #[inline(never)]
    pub fn get_mut<Q: ?Sized + std::hash::Hash + hashbrown::Equivalent<K>>(
        &mut self,
        id: &Q,
    ) -> Option<&mut V> {
        self.0.get_mut(id)
    }

    #[inline(never)]
    pub fn get_key_value<Q: ?Sized + std::hash::Hash + hashbrown::Equivalent<K>>(
        &self,
        id: &Q,
    ) -> Option<(&K, &V)> {
        self.0.get_key_value(id)
    }

    pub fn contains_key<Q: ?Sized + std::hash::Hash + hashbrown::Equivalent<K>>(
        &self,
        id: &Q,
    ) -> bool {
        self.get(id).is_some()
    }

    #[inline(never)]
    pub fn remove<Q: ?Sized + std::hash::Hash + hashbrown::Equivalent<K>>(
        &mut self,
        id: &Q,
    ) -> Option<V> {
        self.0.remove(id)
    }
}

/// The distinct ids of a list, each with a position the caller chose (its first row, its
/// number): what the rules that group ids use (the turn-list and session-list merges), and
/// snapshots (an id listed twice, a message's turn by its index, task ids shared). Open
/// addressing sized once for every id it can be given (so it never grows or fills), holding a
/// tag of the hash and the position; the caller reads the id at a position. Smaller in the wasm
/// than one more `HashMap` instantiation, and a third of its memory.
pub(crate) struct IdIndex {
    slots: Vec<(u32, usize)>,
}

const VACANT: usize = usize::MAX;

impl IdIndex {
    /// An index for up to `ids` distinct ids.
    pub fn with_capacity(ids: usize) -> Self {
        let len = ids
            .saturating_mul(2)
            .max(8)
            .checked_next_power_of_two()
            .unwrap_or(usize::MAX / 2 + 1);
        IdIndex {
            slots: vec![(0, VACANT); len],
        }
    }

    /// The position held for `id` (`id_at` reads the id at a held position); or, the first time,
    /// holds `position` for it and answers `None`.
    pub fn get_or_insert<'k>(
        &mut self,
        id: &str,
        position: usize,
        id_at: &dyn Fn(usize) -> Option<&'k str>,
    ) -> Option<usize> {
        let (tag, at) = self.find(id, id_at);
        let slot = self.slots.get_mut(at?)?;
        if slot.1 == VACANT {
            *slot = (tag, position);
            return None;
        }
        Some(slot.1)
    }

    /// The position held for `id`, if any (a lookup only: nothing is held for it).
    pub fn get<'k>(&self, id: &str, id_at: &dyn Fn(usize) -> Option<&'k str>) -> Option<usize> {
        let (_, at) = self.find(id, id_at);
        Some(self.slots.get(at?)?.1).filter(|p| *p != VACANT)
    }

    /// The tag of `id`'s hash and the slot that holds `id`, or else the vacant slot it goes in
    /// (`None` only if every slot is taken, which the sizing rules out).
    #[inline(never)]
    fn find<'k>(&self, id: &str, id_at: &dyn Fn(usize) -> Option<&'k str>) -> (u32, Option<usize>) {
        let hash = FxBuildHasher::default().hash_one(id);
        #[allow(clippy::cast_possible_truncation)]
        let (tag, start) = ((hash >> 32) as u32, hash as usize);
        let mask = self.slots.len().saturating_sub(1);
        let mut at = start & mask;
        for _ in 0..self.slots.len() {
            let Some(slot) = self.slots.get(at) else {
                break;
            };
            if slot.1 == VACANT || (slot.0 == tag && id_at(slot.1) == Some(id)) {
                return (tag, Some(at));
            }
            at = at.wrapping_add(1) & mask;
        }
        (tag, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_hash_equal_and_near_keys_spread() {
        let b = FxBuildHasher::default();
        assert_eq!(b.hash_one("session-1"), b.hash_one("session-1"));
        // Ids differing in one character, and strings differing only in trailing zero padding,
        // hash apart (the tail word is zero-padded, so the length must not be lost).
        let hashes: std::collections::HashSet<u64> = (0..1000)
            .map(|i| b.hash_one(format!("msg-{i:04}")))
            .collect();
        assert_eq!(hashes.len(), 1000);
        assert_ne!(b.hash_one("ab"), b.hash_one("ab\0"));
        // Both halves of the hash vary: hashbrown reads its control byte from the top 7 bits.
        let tops: std::collections::HashSet<u64> = (0..1000)
            .map(|i| b.hash_one(format!("msg-{i:04}")) >> 57)
            .collect();
        assert!(tops.len() > 100, "top bits poorly spread: {}", tops.len());
    }

    #[test]
    fn id_index_finds_each_distinct_id_once() {
        let ids: Vec<String> = (0..5000).map(|i| format!("id-{}", i % 1234)).collect();
        let mut index = IdIndex::with_capacity(ids.len());
        let mut first: Vec<usize> = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            match index.get_or_insert(id, first.len(), &|n| first.get(n).map(|&k| ids[k].as_str()))
            {
                Some(n) => assert_eq!(ids[first[n]], *id),
                None => first.push(i),
            }
        }
        assert_eq!(first, (0..1234).collect::<Vec<_>>());
        let id_at = |n: usize| first.get(n).map(|&k| ids[k].as_str());
        assert_eq!(index.get("id-7", &id_at), Some(7));
        assert_eq!(index.get("id-1234", &id_at), None);
        let mut empty = IdIndex::with_capacity(0);
        assert_eq!(empty.get_or_insert("x", 7, &|_| None), None);
        assert_eq!(
            empty.get_or_insert("x", 8, &|p| (p == 7).then_some("x")),
            Some(7)
        );
    }
}
