//! The delivery model (docs/convergence.md): how the network may deliver a trace's inputs
//! ([`Arrival`]), a delivery as steps ([`Step`]) in recorded order ([`in_order`]) or a random one
//! with duplicates ([`shuffled`], seeded by [`order_seed`] and [`duplicates`]), and the shrinker
//! of a failing delivery ([`shrink`]). `tests/store_convergence.rs` proves the contract with it.

use std::collections::BTreeSet;

/// How the network may deliver an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// 1–3 times, anywhere.
    Any,
    /// A REST snapshot, 1–3 times: each copy begun (`beginTaskFetch`) at a random earlier point
    /// than it is applied (`applyTaskSnapshot`).
    Fetched,
    /// Once, in its recorded order relative to the other pinned inputs.
    Pinned,
    /// Pinned, and a `beginTaskFetch` (it opens a fetch).
    PinnedBegin,
    /// Pinned, and an `applyTaskSnapshot` (it closes the fetch its pinned begin opened).
    PinnedApply,
}

impl Arrival {
    pub(super) fn pinned(self) -> bool {
        matches!(
            self,
            Arrival::Pinned | Arrival::PinnedBegin | Arrival::PinnedApply
        )
    }
}

/// One delivered step: an input, or the `beginTaskFetch` of a copy of a snapshot (`begin`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The input's index.
    pub input: usize,
    /// For a [`Arrival::Fetched`] input: which copy (its begin and its apply share it).
    pub copy: Option<usize>,
    /// The `beginTaskFetch` half of a fetched copy.
    pub begin: bool,
}

impl Step {
    fn one(input: usize) -> Step {
        Step {
            input,
            copy: None,
            begin: false,
        }
    }

    /// The recorded order of steps: by input, a copy's begin before its apply.
    fn key(&self) -> (usize, bool) {
        (self.input, !self.begin)
    }
}

/// The store keeps this many begun fetches (`store::MAX_FETCHES`); a delivery never has more in
/// flight, so no token is forgotten.
const FETCHES: usize = 32;

/// The copy id of copy `c` of input `i` (`in_order` uses copy 0).
fn copy_id(i: usize, c: usize) -> usize {
    i.saturating_mul(4).saturating_add(c)
}

/// In-order delivery: every input once, a fetched snapshot begun right before it applies.
pub fn in_order(arrivals: &[Arrival]) -> Vec<Step> {
    let mut steps = Vec::with_capacity(arrivals.len());
    for (i, arrival) in arrivals.iter().enumerate() {
        if *arrival == Arrival::Fetched {
            let copy = Some(copy_id(i, 0));
            steps.push(Step {
                input: i,
                copy,
                begin: true,
            });
            steps.push(Step {
                input: i,
                copy,
                begin: false,
            });
        } else {
            steps.push(Step::one(i));
        }
    }
    steps
}

/// The pseudo-random numbers of a delivery: a 64-bit LCG (Knuth's MMIX constants), upper bits.
#[derive(Clone, Debug)]
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed | 1)
    }

    /// A number below `bound` (0 when `bound` is 0).
    pub fn below(&mut self, bound: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(self.0 >> 33)
            .unwrap_or(0)
            .checked_rem(bound.max(1))
            .unwrap_or(0)
    }
}

/// SplitMix64: the seed of the `n`-th order of a run seeded `seed`.
pub fn order_seed(seed: u64, n: u64) -> u64 {
    let mut z = seed.wrapping_add(n.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn opens(arrivals: &[Arrival], step: &Step) -> bool {
    step.begin || arrivals.get(step.input) == Some(&Arrival::PinnedBegin)
}

fn closes(arrivals: &[Arrival], step: &Step) -> bool {
    match arrivals.get(step.input) {
        Some(Arrival::Fetched) => !step.begin,
        Some(Arrival::PinnedApply) => true,
        _ => false,
    }
}

/// The earliest point a new fetch may begin at so that, with it, no more than [`FETCHES`] are
/// in flight anywhere up to the end of `steps`.
fn earliest_begin(arrivals: &[Arrival], steps: &[Step]) -> usize {
    // in_flight[k]: fetches open after the first k steps.
    let mut in_flight = Vec::with_capacity(steps.len().saturating_add(1));
    let mut open = 0usize;
    in_flight.push(open);
    for step in steps {
        if opens(arrivals, step) {
            open = open.saturating_add(1);
        }
        if closes(arrivals, step) {
            open = open.saturating_sub(1);
        }
        in_flight.push(open);
    }
    // Begun at `at`, it is in flight after steps at+1..=len: each must have room for one more.
    let mut at = steps.len();
    while at > 0 && in_flight.get(at).copied().unwrap_or(0) < FETCHES {
        at = at.saturating_sub(1);
    }
    at
}

/// A random delivery: every input `1 + dups[i] % 3` times (a pinned one once) in a shuffled
/// order, the pinned inputs then put back in their recorded relative order; each copy of a
/// fetched snapshot begun at a random earlier point (no earlier than keeps the fetches in flight
/// within what the store remembers).
pub fn shuffled(arrivals: &[Arrival], seed: u64, dups: &[u8]) -> Vec<Step> {
    let mut rng = Lcg::new(seed);
    let mut atoms: Vec<(usize, usize)> = Vec::new();
    for (i, arrival) in arrivals.iter().enumerate() {
        let copies = if arrival.pinned() {
            1
        } else {
            1 + usize::from(dups.get(i).copied().unwrap_or(0) % 3)
        };
        for c in 0..copies {
            atoms.push((i, copy_id(i, c)));
        }
    }
    for i in (1..atoms.len()).rev() {
        let j = rng.below(i.saturating_add(1));
        atoms.swap(i, j);
    }
    // The pinned inputs, in the slots the shuffle gave them, in recorded order.
    let slots: Vec<usize> = (0..atoms.len())
        .filter(|&k| {
            atoms
                .get(k)
                .and_then(|(i, _)| arrivals.get(*i))
                .is_some_and(|a| a.pinned())
        })
        .collect();
    let mut pinned: Vec<(usize, usize)> = slots
        .iter()
        .filter_map(|&k| atoms.get(k).copied())
        .collect();
    pinned.sort_unstable();
    for (&k, atom) in slots.iter().zip(pinned) {
        if let Some(slot) = atoms.get_mut(k) {
            *slot = atom;
        }
    }
    let mut steps: Vec<Step> = Vec::with_capacity(atoms.len().saturating_mul(2));
    for (input, copy) in atoms {
        if arrivals.get(input) == Some(&Arrival::Fetched) {
            let lo = earliest_begin(arrivals, &steps);
            let room = steps.len().saturating_add(1).saturating_sub(lo);
            let at = lo.saturating_add(rng.below(room)).min(steps.len());
            steps.insert(
                at,
                Step {
                    input,
                    copy: Some(copy),
                    begin: true,
                },
            );
            steps.push(Step {
                input,
                copy: Some(copy),
                begin: false,
            });
        } else {
            steps.push(Step::one(input));
        }
    }
    steps
}

/// `dups` for [`shuffled`] from a seed (one byte per input).
pub fn duplicates(seed: u64, inputs: usize) -> Vec<u8> {
    let mut rng = Lcg::new(seed.rotate_left(17) ^ 0x5bd1_e995);
    (0..inputs)
        .map(|_| u8::try_from(rng.below(256)).unwrap_or(0))
        .collect()
}

/// Shrinks a failing delivery. `fails(kept, steps)` tells whether delivering `steps` (which
/// only name kept inputs) still fails with the inputs not `kept` left out of the history too (the
/// in-order reference is then the kept inputs in order), and how. First whole inputs are left
/// out (halves, quarters, ... single inputs), then duplicate copies, then steps are moved back
/// toward recorded order (adjacent swaps of two steps out of order) while the failure persists.
/// `None` when the delivery does not fail.
pub fn shrink<F>(
    arrivals: &[Arrival],
    steps: &[Step],
    mut fails: impl FnMut(&[bool], &[Step]) -> Option<F>,
) -> Option<(Vec<bool>, Vec<Step>, F)> {
    let mut kept = vec![true; arrivals.len()];
    let mut steps = steps.to_vec();
    let mut found = fails(&kept, &steps)?;
    // 1. Whole inputs, by chunks of halving size.
    let mut size = (arrivals.len() / 2).max(1);
    loop {
        let mut start = 0usize;
        loop {
            let alive: Vec<usize> = (0..kept.len())
                .filter(|&i| kept.get(i) == Some(&true))
                .collect();
            let Some(chunk) = alive.get(start..start.saturating_add(size).min(alive.len())) else {
                break;
            };
            if chunk.is_empty() {
                break;
            }
            let mut fewer = kept.clone();
            for &i in chunk {
                if let Some(k) = fewer.get_mut(i) {
                    *k = false;
                }
            }
            let fewer_steps: Vec<Step> = steps
                .iter()
                .filter(|s| fewer.get(s.input) == Some(&true))
                .cloned()
                .collect();
            match fails(&fewer, &fewer_steps) {
                Some(f) => {
                    kept = fewer;
                    steps = fewer_steps;
                    found = f;
                }
                None => start = start.saturating_add(size),
            }
        }
        if size == 1 {
            break;
        }
        size /= 2;
    }
    // 2. Duplicates: a delivered copy of an input delivered more than once.
    let mut i = 0;
    while let Some(step) = steps.get(i).cloned() {
        let copies: BTreeSet<Option<usize>> = steps
            .iter()
            .filter(|s| s.input == step.input)
            .map(|s| s.copy)
            .collect();
        let several = if step.copy.is_none() {
            steps.iter().filter(|s| s.input == step.input).count() > 1
        } else {
            !step.begin && copies.len() > 1
        };
        if several {
            let mut fewer = steps.clone();
            if step.copy.is_none() {
                fewer.remove(i);
            } else {
                fewer.retain(|s| s.input != step.input || s.copy != step.copy);
            }
            if let Some(f) = fails(&kept, &fewer) {
                steps = fewer;
                found = f;
                i = 0;
                continue;
            }
        }
        i = i.saturating_add(1);
    }
    // 3. Toward recorded order: swap two adjacent steps out of order while it still fails.
    let mut moved = true;
    let mut rounds = 0usize;
    while moved && rounds < 64 {
        moved = false;
        rounds = rounds.saturating_add(1);
        for k in 1..steps.len() {
            let (Some(a), Some(b)) = (steps.get(k.saturating_sub(1)), steps.get(k)) else {
                continue;
            };
            if a.key() <= b.key() {
                continue;
            }
            let mut swapped = steps.clone();
            swapped.swap(k.saturating_sub(1), k);
            if let Some(f) = fails(&kept, &swapped) {
                steps = swapped;
                found = f;
                moved = true;
            }
        }
    }
    Some((kept, steps, found))
}
