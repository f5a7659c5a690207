//! Timestamps as the message index stores them: 8 bytes instead of a 16-byte [`Timestamp`].
//!
//! A value-form timestamp whose fields are a calendar instant of the years 1970–2225 (every
//! timestamp a backend sends today) packs into one `u64` whose integer order is the
//! [`Timestamp`] order: the fields in mixed radix (year, month, day, hour, minute, second with a
//! leap second) take 33 bits, the nanoseconds the low 30. Anything else (raw text, other years,
//! out-of-range fields) is kept as a [`Timestamp`] in the index's side table and the packed
//! word holds its index with the top bit set; comparisons involving such a word unpack both
//! sides and compare as [`Timestamp`]s, so the order stays exactly SPEC §2's.

use std::cmp::Ordering;

use crate::rules::time::Timestamp;

/// The top bit: the word indexes the side table.
const SIDE: u64 = 1 << 63;
/// "No timestamp" (an absent `updated_at`).
pub(crate) const ABSENT: u64 = u64::MAX;

use crate::rules::time::{PACKED_FIRST_YEAR as FIRST_YEAR, PACKED_NANO_BITS as NANO_BITS};

/// Packs a value-form timestamp of the covered range; `None` otherwise
/// ([`Timestamp::packed`]: the rules sort long turn histories by the same words).
pub(crate) fn pack(time: &Timestamp) -> Option<u64> {
    time.packed()
}

/// The timestamp of a packed (not side-table) word.
// Bounded arithmetic: the inverse of `pack`, on a word below 2^63; divisors are non-zero.
#[allow(clippy::arithmetic_side_effects)]
fn unpack_instant(word: u64) -> Timestamp {
    let nanos = u32::try_from(word & ((1 << NANO_BITS) - 1)).unwrap_or(0);
    let mut rank = word >> NANO_BITS;
    let second = rank % 61;
    rank /= 61;
    let minute = rank % 60;
    rank /= 60;
    let hour = rank % 24;
    rank /= 24;
    let day = rank % 31 + 1;
    rank /= 31;
    let month = rank % 12 + 1;
    let year = rank / 12 + FIRST_YEAR;
    let secs = ((((year * 100 + month) * 100 + day) * 100 + hour) * 100 + minute) * 100 + second;
    Timestamp::Instant { secs, nanos }
}

/// Packed timestamps plus the side table for the ones that do not pack.
#[derive(Clone, Debug, Default)]
pub(crate) struct Times {
    side: Vec<Option<Timestamp>>,
    free: Vec<u32>,
}

impl Times {
    /// The word for `time` (a side-table entry when it does not pack).
    pub fn store(&mut self, time: &Timestamp) -> u64 {
        if let Some(word) = pack(time) {
            return word;
        }
        let index = match self.free.pop() {
            Some(index) => {
                if let Some(slot) = self.side.get_mut(index as usize) {
                    *slot = Some(time.clone());
                }
                index
            }
            None => {
                self.side.push(Some(time.clone()));
                u32::try_from(self.side.len().saturating_sub(1)).unwrap_or(u32::MAX)
            }
        };
        SIDE | u64::from(index)
    }

    /// Frees the side-table entry of a word (no-op for a packed word or [`ABSENT`]).
    pub fn release(&mut self, word: u64) {
        if word != ABSENT && word & SIDE != 0 {
            let index = u32::try_from(word & !SIDE).unwrap_or(u32::MAX);
            if let Some(slot) = self.side.get_mut(index as usize) {
                *slot = None;
                self.free.push(index);
            }
        }
    }

    /// The timestamp of a word ([`ABSENT`] gives `None`).
    pub fn get(&self, word: u64) -> Option<Timestamp> {
        if word == ABSENT {
            return None;
        }
        if word & SIDE == 0 {
            return Some(unpack_instant(word));
        }
        let index = usize::try_from(word & !SIDE).ok()?;
        self.side.get(index).cloned().flatten()
    }

    /// Orders two stored words as their timestamps order ([`ABSENT`] first).
    pub fn cmp(&self, a: u64, b: u64) -> Ordering {
        if a & SIDE == 0 && b & SIDE == 0 {
            return a.cmp(&b);
        }
        self.get(a).cmp(&self.get(b))
    }

    /// Whether a stored word and a timestamp are the same timestamp.
    pub fn same(&self, word: u64, time: Option<&Timestamp>) -> bool {
        match (pack_opt(time), word & SIDE == 0) {
            (Some(packed), true) => packed == word,
            _ => self.get(word).as_ref() == time,
        }
    }

    /// Heap bytes of the side table.
    pub fn heap_bytes(&self) -> usize {
        let side = self
            .side
            .capacity()
            .saturating_mul(std::mem::size_of::<Option<Timestamp>>());
        side.saturating_add(self.free.capacity().saturating_mul(4))
    }
}

fn pack_opt(time: Option<&Timestamp>) -> Option<u64> {
    time.and_then(pack)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        Timestamp::parse(s)
    }

    #[test]
    fn packing_round_trips_and_keeps_the_order() {
        let samples = [
            "1970-01-01T00:00:00Z",
            "2026-11-29T12:00:00Z",
            "2026-11-29T12:00:00.000000001Z",
            "2026-11-29T12:00:00.1Z",
            "2026-11-29T12:00:59.999999999Z",
            "2026-11-29T12:00:60Z",
            "2026-11-29T12:01:00Z",
            "2026-12-31T23:59:59Z",
            "2027-01-01T00:00:00Z",
            "2225-12-31T23:59:60.999999999Z",
        ];
        let mut times = Times::default();
        let words: Vec<u64> = samples.iter().map(|s| times.store(&t(s))).collect();
        for (w, s) in words.iter().zip(samples) {
            assert_eq!(w & SIDE, 0, "{s} packs");
            assert_eq!(times.get(*w), Some(t(s)), "{s} round-trips");
        }
        for pair in words.windows(2) {
            assert!(pair[0] < pair[1]);
        }
        assert!(times.side.is_empty());
    }

    #[test]
    fn what_does_not_pack_goes_to_the_side_table_and_still_orders_exactly() {
        let samples = [
            "",
            "1969-12-31T23:59:59Z",
            "2026-13-01T00:00:00Z",
            "2026-02-32T00:00:00Z",
            "2026-11-29T24:00:00Z",
            "2226-01-01T00:00:00Z",
            "yesterday",
            "2026-11-29T12:00:00Z",
            "2026-11-29T12:00:00.5Z",
            "2026-11-29T12:00:00.500000000Z",
            "2026-11-29T12:00:00+01:00",
        ];
        let mut times = Times::default();
        let words: Vec<u64> = samples.iter().map(|s| times.store(&t(s))).collect();
        for (i, a) in samples.iter().enumerate() {
            assert_eq!(times.get(words[i]), Some(t(a)));
            assert!(times.same(words[i], Some(&t(a))));
            for (j, b) in samples.iter().enumerate() {
                assert_eq!(
                    times.cmp(words[i], words[j]),
                    t(a).cmp(&t(b)),
                    "{a:?} vs {b:?}"
                );
            }
        }
        assert_eq!(times.cmp(ABSENT, words[0]), Ordering::Less);
        assert!(times.same(ABSENT, None));
        // A freed entry is reused.
        let side = words[1];
        times.release(side);
        let again = times.store(&t("1900-01-01T00:00:00Z"));
        assert_eq!(again, side);
        assert_eq!(times.get(again), Some(t("1900-01-01T00:00:00Z")));
    }
}
