//! A small stable sort for the short lists the rules order (turn histories, candidate rows).
//!
//! `slice::sort_by` is avoided on purpose: every instantiation of the standard library's
//! driftsort/quicksort adds several KB of wasm, and the lists sorted here are short. Binary
//! insertion: O(n log n) comparisons and O(n²) element moves (a `memmove` per insertion), which
//! is cheap for the few hundred elements these lists hold. Any comparator is safe: an
//! inconsistent one yields some order, never a panic.

use std::cmp::Ordering;

/// Sorts `items` stably by `compare`.
pub fn stable_sort_by<T>(items: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
