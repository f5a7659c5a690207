//! A small stable sort for the lists the rules order (turn histories, candidate rows).
//!
//! `slice::sort_by` is avoided on purpose: every instantiation of the standard library's
//! driftsort/quicksort adds several KB of wasm. Short lists (the common case: a handful of
//! candidate rows) take binary insertion. Longer ones take one bottom-up merge sort of
//! [`Keyed`] records (two integer keys, then the caller's comparison on a position): runs of
//! [`RUN`] by binary insertion, then merges that skip a pair of runs already in order; a list of
//! items is sorted as the records of its positions, after which the items move into place along
//! the permutation's cycles. O(n log n) comparisons, O(n) on input already in order, O(n) moves
//! of the items, and one copy of the merge sort in the wasm whatever the callers (comparators go
//! through `dyn`). Any comparator is safe: an inconsistent one yields some order, never a panic.

use std::cmp::Ordering;

/// Lists up to this long are sorted by binary insertion alone.
const SHORT: usize = 32;

/// The length of the runs the merge sort starts from.
const RUN: usize = 16;

/// What the merge sort orders: two keys, compared first, then the caller's comparison of the
/// third field (a position).
pub type Keyed = (u64, u64, usize);

/// Sorts `items` stably by `compare`.
pub fn stable_sort_by<T>(items: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
    sort_by_dyn(items, &mut compare);
}

/// [`stable_sort_by`] through a `dyn` comparator: one copy in the wasm per item type, not per
/// caller.
fn sort_by_dyn<T>(items: &mut [T], compare: &mut dyn FnMut(&T, &T) -> Ordering) {
    if items.len() <= SHORT {
        insertion_sort(items, compare);
        return;
    }
    let mut order: Vec<Keyed> = (0..items.len()).map(|i| (0, 0, i)).collect();
    {
        let items = &*items;
        sort_keyed_dyn(&mut order, &mut |a, b| match (items.get(a), items.get(b)) {
            (Some(a), Some(b)) => compare(a, b),
            _ => Ordering::Equal,
        });
    }
    let mut order: Vec<usize> = order.into_iter().map(|(_, _, i)| i).collect();
    permute(items, &mut order);
}

/// Sorts `records` stably by their two keys, then by `tie` on their positions: for a long list
/// whose order is mostly two numbers (the comparisons then read the records side by side, not
/// the items they stand for).
pub fn stable_sort_keyed(records: &mut [Keyed], mut tie: impl FnMut(usize, usize) -> Ordering) {
    sort_keyed_dyn(records, &mut tie);
}

/// The one copy of the merge sort in the wasm, for every caller.
fn sort_keyed_dyn(records: &mut [Keyed], tie: &mut dyn FnMut(usize, usize) -> Ordering) {
    let compare = |a: &Keyed, b: &Keyed| {
        a.0.cmp(&b.0)
            .then(a.1.cmp(&b.1))
            .then_with(|| tie(a.2, b.2))
    };
    merge_sort(records, compare);
}

/// Binary insertion: O(n log n) comparisons, O(n²) moves (for short lists).
fn insertion_sort<T, F: FnMut(&T, &T) -> Ordering + ?Sized>(items: &mut [T], compare: &mut F) {
    for end in 1..items.len() {
        let Some((sorted, rest)) = items.split_at_mut_checked(end) else {
            return;
        };
        let Some(next) = rest.first() else {
            return;
        };
        // Insert after every element that does not compare greater (stability).
        let at = sorted.partition_point(|probe| compare(probe, next) != Ordering::Greater);
        if let Some(window) = items.get_mut(at..=end) {
            window.rotate_right(1);
        }
    }
}

/// A stable bottom-up merge sort of copyable items.
fn merge_sort<T: Copy>(items: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
    for run in items.chunks_mut(RUN) {
        insertion_sort(run, &mut compare);
    }
    let len = items.len();
    let mut left: Vec<T> = Vec::with_capacity(len.div_ceil(2));
    let mut width = RUN;
    while width < len {
        let mut lo = 0;
        while lo < len {
            let mid = lo.saturating_add(width).min(len);
            let hi = mid.saturating_add(width).min(len);
            if let Some(run) = items.get_mut(lo..hi) {
                merge(run, mid.saturating_sub(lo), &mut left, &mut compare);
            }
            lo = hi;
        }
        width = width.saturating_mul(2);
    }
}

/// Merges the sorted halves `run[..mid]` and `run[mid..]` (stably: on a tie the left one first),
/// with `left` as room for a copy of the left half. Nothing to do when they are already in order.
fn merge<T: Copy>(
    run: &mut [T],
    mid: usize,
    left: &mut Vec<T>,
    compare: &mut impl FnMut(&T, &T) -> Ordering,
) {
    let in_order = match (mid.checked_sub(1).and_then(|i| run.get(i)), run.get(mid)) {
        (Some(last), Some(first)) => compare(last, first) != Ordering::Greater,
        _ => true,
    };
    if in_order {
        return;
    }
    left.clear();
    left.extend_from_slice(run.get(..mid).unwrap_or_default());
    // The write position never passes the read position of the right half: `out = i + (j - mid)`.
    let (mut i, mut j, mut out) = (0, mid, 0);
    while let (Some(l), Some(r)) = (left.get(i), run.get(j)) {
        let take_right = compare(r, l) == Ordering::Less;
        let next = if take_right { *r } else { *l };
        if take_right {
            j = j.saturating_add(1);
        } else {
            i = i.saturating_add(1);
        }
        if let Some(slot) = run.get_mut(out) {
            *slot = next;
        }
        out = out.saturating_add(1);
    }
    // What is left of the right half is in place already; the left half's rest goes before it.
    if let (Some(rest), Some(to)) = (left.get(i..), run.get_mut(out..j)) {
        for (slot, item) in to.iter_mut().zip(rest) {
            *slot = *item;
        }
    }
}

/// Moves `items[order[k]]` to position `k` for every `k`, following the permutation's cycles
/// (O(n) swaps); `order` is consumed (left as the identity).
fn permute<T>(items: &mut [T], order: &mut [usize]) {
    let len = items.len();
    for start in 0..order.len() {
        let mut to = start;
        while let Some(slot) = order.get_mut(to) {
            let from = std::mem::replace(slot, to);
            if from == start || from == to || from >= len || to >= len {
                break;
            }
            items.swap(to, from);
            to = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: what the sort must equal (std's stable sort).
    fn reference<T: Clone>(items: &[T], compare: impl FnMut(&T, &T) -> Ordering) -> Vec<T> {
        let mut v = items.to_vec();
        v.sort_by(compare);
        v
    }

    #[test]
    fn sorts_stably() {
        let mut v = vec![(3, 'a'), (1, 'b'), (3, 'c'), (2, 'd'), (1, 'e')];
        stable_sort_by(&mut v, |a, b| a.0.cmp(&b.0));
        assert_eq!(v, vec![(1, 'b'), (1, 'e'), (2, 'd'), (3, 'a'), (3, 'c')]);
        let mut empty: Vec<u8> = vec![];
        stable_sort_by(&mut empty, u8::cmp);
        let mut many: Vec<u32> = (0..500).rev().collect();
        stable_sort_by(&mut many, u32::cmp);
        assert!(many.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn equals_std_stable_sort_on_random_inputs() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..400 {
            let len = match round % 4 {
                0 => (next() % 40) as usize,
                1 => (next() % 300) as usize,
                2 => (next() % 3000) as usize,
                _ => (next() % 70) as usize + 30,
            };
            let keys = 1 + next() % (len as u64 + 1);
            // (key, original position): a stable sort keeps equal keys in position order.
            let mut v: Vec<(u64, usize, String)> = (0..len)
                .map(|i| (next() % keys, i, format!("item-{i}")))
                .collect();
            match round % 5 {
                0 => v.sort_by_key(|x| x.0),
                1 => v.sort_by_key(|x| std::cmp::Reverse(x.0)),
                _ => {}
            }
            let by_key = |a: &(u64, usize, String), b: &(u64, usize, String)| a.0.cmp(&b.0);
            let expected = reference(&v, by_key);
            stable_sort_by(&mut v, by_key);
            assert_eq!(v, expected, "round {round}, len {len}");
        }
    }

    #[test]
    fn sorted_input_costs_linear_comparisons() {
        let mut v: Vec<u32> = (0..100_000).collect();
        let mut calls = 0u64;
        stable_sort_by(&mut v, |a, b| {
            calls += 1;
            a.cmp(b)
        });
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        // Runs of RUN by insertion (≤ log2(RUN) per element), then one comparison per merge.
        assert!(calls < 100_000 * 5, "{calls} comparisons");
    }

    #[test]
    fn an_inconsistent_comparator_only_permutes() {
        let mut v: Vec<u32> = (0..1000).collect();
        let mut flip = 0u32;
        stable_sort_by(&mut v, |_, _| {
            flip = flip.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            match flip >> 30 {
                0 => Ordering::Less,
                1 => Ordering::Greater,
                _ => Ordering::Equal,
            }
        });
        v.sort_unstable();
        assert_eq!(v, (0..1000).collect::<Vec<_>>());
    }
}
