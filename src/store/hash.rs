//! The store's hash function: FxHash (rustc's), one 64-bit multiply per 8 bytes, with murmur3's
//! finalizer. The default
//! (foldhash) folds through a 128-bit multiply, which wasm32 has no instruction for, and hashing
//! ids was the store's largest single cost per event in wasm. Keys are ids the app's own backend
//! sent; the store does not need protection against chosen-collision inputs.

use std::hash::{BuildHasherDefault, Hasher};

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
pub type HashSet<K> = hashbrown::HashSet<K, FxBuildHasher>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

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
}
