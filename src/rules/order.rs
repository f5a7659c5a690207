//! The order of the store's inputs (SPEC §5, §6, §7): for every kind of row an input can carry,
//! whether it is older than what is held, and how two copies of one thing merge. The store calls
//! these and decides nothing itself; `docs/convergence.md` is the contract they implement:
//! the store's answers depend only on the set of inputs received, not on their order or
//! repetition, except where SPEC makes a later arrival win.
//!
//! Each rule is a total order or a merge that is commutative, associative and idempotent, so
//! delivering the same inputs in any order, any number of times, ends in the same state:
//!
//! | input | ordered by | rule |
//! |---|---|---|
//! | message row (event or page) against the held row | the row's `updated_at` | [`row_is_stale`] |
//! | session `state`, `is_primary` | the session's `updated_at`, not the pending revision | [`session_field_applies`] |
//! | turn row against the held row | `updated_at`, then how far along its life the turn is | [`turn_order`], [`turn_replaces`] |
//! | REST turn list against held turns | union by id, greatest row per id | [`merge_turns`] |
//! | REST session list against the held list | union, list order kept | [`merge_session_list`] |
//! | an add, update or page row of a deleted id | the delete's revision | [`revives`], [`stronger_tombstone`] |
//! | any input about a removed task | final | [`applies_after_removal`] |
//!
//! The pending projection itself is ordered by its revision ([`super::revision`]); status
//! summaries by their revision and the fetch-start capture ([`super::summary`]).

use std::cmp::Ordering;

use super::model::{Revision, Turn};
use super::revision::compare_revisions;
use super::time::Timestamp;
use crate::hash::IdIndex;

/// An input whose clock is older than the held one: the held row has `updated_at` and the
/// incoming has none or a smaller one (an absent clock ranks below every present one). Equal
/// clocks are not older: a re-delivery applies.
pub fn is_older(held: Option<&Timestamp>, incoming: Option<&Timestamp>) -> bool {
    held.is_some() && incoming < held
}

/// SPEC §5: a message row (from an `added`/`updated` event or a REST page) older than the held
/// row of the same id is ignored, and an event carrying it carries no projection. Equal
/// `updated_at` applies: rows apply in event order (SPEC: "Updates apply in event order"), so
/// two different rows with one `updated_at` are the one exception where the later arrival wins.
pub fn row_is_stale(held: Option<&Timestamp>, incoming: Option<&Timestamp>) -> bool {
    is_older(held, incoming)
}

/// SPEC §5: the session's own fields (`state`, `is_primary`) are ordered by the session's
/// `updated_at`, independently of the pending-action revision: an input older than the clock
/// held for that field leaves it; an equal or newer one replaces it. So a newer pending
/// revision never hides a state change, and an older snapshot never reverts one. Equal clocks
/// replace (SPEC: "an equal or newer one replaces them"). An input that does not carry the field
/// (`state` absent, `null` or `""`) leaves it whatever its clock.
pub fn session_field_applies(held: Option<&Timestamp>, incoming: Option<&Timestamp>) -> bool {
    !is_older(held, incoming)
}

/// The order of two rows of one turn (greater is newer): `updated_at` (absent lowest), then how
/// far along its life the turn is (completed over open, dispatch attempted over not), then every
/// remaining field. It is total over a turn's fields, so which of two rows wins never depends on
/// which arrived last: a turn never reopens because a late `turn.started` arrives after its
/// completion with the same clock.
pub fn turn_order(a: &Turn, b: &Turn) -> Ordering {
    a.updated_at
        .cmp(&b.updated_at)
        .then(a.completed.cmp(&b.completed))
        .then(
            a.flags
                .prompt_dispatch_attempted
                .cmp(&b.flags.prompt_dispatch_attempted),
        )
        .then_with(|| a.started_at.cmp(&b.started_at))
        .then_with(|| a.created_at.cmp(&b.created_at))
        .then(a.flags.lifecycle_only.cmp(&b.flags.lifecycle_only))
        .then(
            a.flags
                .prompt_dispatch_pending
                .cmp(&b.flags.prompt_dispatch_pending),
        )
}

/// Whether an incoming row of a turn replaces the held row of the same id ([`turn_order`]).
pub fn turn_replaces(held: &Turn, incoming: &Turn) -> bool {
    turn_order(incoming, held) == Ordering::Greater
}

/// Puts one turn row into a turn set (one row per id, the greatest by [`turn_order`]); `true`
/// when the set changed.
pub fn upsert_turn(turns: &mut Vec<Turn>, turn: Turn) -> bool {
    match turns.iter_mut().find(|t| t.id == turn.id) {
        Some(held) if turn_replaces(held, &turn) => {
            *held = turn;
            true
        }
        Some(_) => false,
        None => {
            turns.push(turn);
            true
        }
    }
}

/// A REST turn list against the turns already held (from an earlier list, or turn events that
/// arrived before any list): the union by id, each id keeping its greatest row
/// ([`turn_order`]). Turns are never deleted, so a held turn the list lacks was started after
/// the list was read (a concurrent or late load must not drop it); a list row older than the
/// held row is ignored. The result starts with the list's rows in list order, then the held
/// turns it lacked; the current-turn rule breaks every tie by id, so this order decides
/// nothing.
// Not inlined: in its caller the wasm would hold a larger copy.
#[inline(never)]
pub fn merge_turns(held: impl IntoIterator<Item = Turn>, list: Vec<Turn>) -> Vec<Turn> {
    // `upsert_turn` row by row, with the ids indexed: O(1) per row instead of a scan.
    let mut rows = list;
    rows.extend(held);
    let mut index = IdIndex::with_capacity(rows.len());
    let mut merged: Vec<Turn> = Vec::with_capacity(rows.len());
    for turn in rows {
        let at = index.get_or_insert(&turn.id, merged.len(), &|i| {
            merged.get(i).map(|t| t.id.as_str())
        });
        match at.and_then(|i| merged.get_mut(i)) {
            Some(held) => {
                if turn_replaces(held, &turn) {
                    *held = turn;
                }
            }
            None => merged.push(turn),
        }
    }
    merged
}

/// A REST session list (newest first) against the task's held list. Sessions leave a task only
/// with the task ([`applies_after_removal`]), so a held session the list lacks was created
/// after the list was read: the result is the union. The list's sessions keep the list's order;
/// a held session the list lacks goes right before the first session that followed it in the
/// held list (at the end when none did). Lists read at different times of one history are all
/// in the backend's order (newest first), so any arrival order of them ends in the same list.
///
/// Generic over the id type so the store merges its shared ids (`Arc<str>`) without a copy of
/// each; `&str` works too.
pub fn merge_session_list<T: AsRef<str> + Clone>(held: &[T], list: &[T]) -> Vec<T> {
    // The result is a linked list (node 0 the sentinel before the first and after the last), so
    // each insertion is O(1), and every id is hashed once. A held session goes before the first
    // later held session already in the result: one the list has, or a repetition of a held one
    // placed before it (the store's held lists never repeat an id, but the rule is total).
    const NONE: usize = usize::MAX;
    let get = |v: &[usize], i: usize| v.get(i).copied().unwrap_or(NONE);
    let set = |v: &mut [usize], i: usize, value: usize| {
        if let Some(slot) = v.get_mut(i) {
            *slot = value;
        }
    };
    let total = list.len().saturating_add(held.len());
    let mut nodes = Links::with_capacity(total);
    // Each distinct id gets a number; per number: its node (once in the result) and its first
    // held position.
    let mut numbers = IdIndex::with_capacity(total);
    let mut ids: Vec<&str> = Vec::with_capacity(total);
    let mut node_of: Vec<usize> = Vec::with_capacity(total);
    let mut first_of: Vec<usize> = Vec::with_capacity(total);
    for id in list {
        let text = id.as_ref();
        if numbers
            .get_or_insert(text, ids.len(), &|n| ids.get(n).copied())
            .is_none()
        {
            ids.push(text);
            node_of.push(nodes.push_back(id));
            first_of.push(NONE);
        }
    }
    // Per held position: its id's number, and the next later position the list has.
    let mut number_at = vec![NONE; held.len()];
    let mut next_listed = vec![NONE; held.len()];
    let mut next = NONE;
    for (j, id) in held.iter().enumerate().rev() {
        set(&mut next_listed, j, next);
        let text = id.as_ref();
        let n = match numbers.get_or_insert(text, ids.len(), &|n| ids.get(n).copied()) {
            Some(n) => n,
            None => {
                ids.push(text);
                node_of.push(NONE);
                first_of.push(NONE);
                ids.len().saturating_sub(1)
            }
        };
        set(&mut number_at, j, n);
        set(&mut first_of, n, j);
        if get(&node_of, n) != NONE {
            next = j;
        }
    }
    let first_at = |j: usize| get(&first_of, get(&number_at, j));
    // Per held position i: the next later repetition of an id first held before i. Going down
    // from the end, the candidates form a stack (the nearest on top), and one that stops being a
    // candidate (its first position reached) never becomes one again.
    let mut next_repeat = vec![NONE; held.len()];
    let mut stack: Vec<usize> = Vec::new();
    for i in (0..held.len()).rev() {
        let j = i.saturating_add(1);
        if j < held.len() && first_at(j) < j {
            stack.push(j);
        }
        while stack.last().is_some_and(|&top| first_at(top) >= i) {
            stack.pop();
        }
        set(&mut next_repeat, i, stack.last().copied().unwrap_or(NONE));
    }
    for (i, id) in held.iter().enumerate() {
        let n = get(&number_at, i);
        if get(&node_of, n) != NONE || get(&first_of, n) < i {
            continue;
        }
        let later = get(&next_listed, i).min(get(&next_repeat, i));
        let anchor = match get(&node_of, get(&number_at, later)) {
            NONE => Links::<T>::SENTINEL,
            node => node,
        };
        let node = nodes.insert_before(id, anchor);
        set(&mut node_of, n, node);
    }
    nodes.into_vec()
}

/// [`merge_session_list`] for lists that repeat no id (the store's lists never do, and it checks
/// each incoming list as it applies it), the list taken by value; `None` when the result is the
/// held list. The common deliveries need no index: a first list is the result; a list the held
/// list ends with (a re-delivery, or an older page of the same history) leaves the held list;
/// a list that ends with the held list (newer sessions first) is the result, as is. Any other
/// pair is merged by [`merge_session_list`].
pub fn merge_distinct_session_list<T: AsRef<str> + Clone + PartialEq>(
    held: &[T],
    list: Vec<T>,
) -> Option<Vec<T>> {
    if held.ends_with(&list) {
        return None;
    }
    if list.ends_with(held) {
        return Some(list);
    }
    let merged = merge_session_list(held, &list);
    (merged != held).then_some(merged)
}

/// A doubly linked list of ids in a vector, node 0 the sentinel ([`merge_session_list`]).
struct Links<'a, T> {
    ids: Vec<Option<&'a T>>,
    next: Vec<usize>,
    prev: Vec<usize>,
}

impl<'a, T: Clone> Links<'a, T> {
    const SENTINEL: usize = 0;

    fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.saturating_add(1);
        let mut links = Links {
            ids: Vec::with_capacity(capacity),
            next: Vec::with_capacity(capacity),
            prev: Vec::with_capacity(capacity),
        };
        links.ids.push(None);
        links.next.push(Self::SENTINEL);
        links.prev.push(Self::SENTINEL);
        links
    }

    fn push_back(&mut self, id: &'a T) -> usize {
        self.insert_before(id, Self::SENTINEL)
    }

    /// Adds `id` right before node `anchor`; returns its node.
    fn insert_before(&mut self, id: &'a T, anchor: usize) -> usize {
        let node = self.ids.len();
        let before = self.prev.get(anchor).copied().unwrap_or(Self::SENTINEL);
        self.ids.push(Some(id));
        self.next.push(anchor);
        self.prev.push(before);
        if let Some(link) = self.next.get_mut(before) {
            *link = node;
        }
        if let Some(link) = self.prev.get_mut(anchor) {
            *link = node;
        }
        node
    }

    fn into_vec(self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.ids.len().saturating_sub(1));
        let mut node = self.next.get(Self::SENTINEL).copied();
        while let Some(at) = node.filter(|&n| n != Self::SENTINEL && out.len() < self.ids.len()) {
            out.extend(self.ids.get(at).copied().flatten().cloned());
            node = self.next.get(at).copied();
        }
        out
    }
}

/// What tries to bring back a message id that a WebSocket event deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Revival<'a> {
    /// A `session.message.added` / `updated` event, with its pending-action revision (`None`
    /// when its projection keys were omitted).
    Event(Option<&'a Revision>),
    /// A row of a REST message page.
    PageRow,
}

/// SPEC §5: a message deleted by a WebSocket event stays deleted for every input older than the
/// delete. `deleted_at` is the delete's revision (`None`: it had none, or two deletes could not
/// be ordered). An add or update event brings the id back only when its revision is strictly
/// newer than the delete's (both present, both epochs well formed); anything that cannot be
/// shown newer stays deleted (fail closed: a deleted question must not resurface). A REST page
/// row never brings it back: a page that lists a deleted id was read before the delete.
pub fn revives(deleted_at: Option<&Revision>, input: Revival<'_>) -> bool {
    match (deleted_at, input) {
        (Some(deleted), Revival::Event(Some(incoming))) => {
            compare_revisions(deleted, incoming) == Ok(Ordering::Less)
        }
        _ => false,
    }
}

/// Two deletes of one id (a re-delivery, or a delete of a revived id): the tombstone keeps the
/// stronger, the one fewer inputs can revive: the newer revision, and `None` (nothing revives
/// it) when either has no revision or they cannot be compared. Commutative and idempotent.
pub fn stronger_tombstone(
    held: Option<&Revision>,
    incoming: Option<&Revision>,
) -> Option<Revision> {
    let (held, incoming) = (held?, incoming?);
    match compare_revisions(held, incoming) {
        Ok(Ordering::Less) => Some(incoming.clone()),
        Ok(_) => Some(held.clone()),
        Err(_) => None,
    }
}

/// SPEC §6 ("the task projection disappeared"): a task removal is final. The backend never
/// re-creates a task id, so every input about a removed task, or about one of its sessions,
/// that arrives after the removal is older than it and is dropped, whatever it carries.
pub const fn applies_after_removal() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::model::TurnFlags;

    fn ts(s: &str) -> Timestamp {
        Timestamp::parse(s)
    }

    const T0: &str = "2026-11-29T12:00:00Z";
    const T1: &str = "2026-11-29T12:00:00.000000001Z";

    fn turn(id: &str, updated: Option<&str>, completed: bool) -> Turn {
        Turn {
            id: id.into(),
            completed,
            started_at: ts(T0),
            created_at: ts(T0),
            updated_at: updated.map(ts),
            flags: TurnFlags::default(),
        }
    }

    fn rev(epoch: &str, sequence: u64) -> Revision {
        Revision {
            epoch: epoch.into(),
            sequence,
        }
    }

    #[test]
    fn absent_clock_ranks_lowest() {
        let (t0, t1) = (ts(T0), ts(T1));
        assert!(row_is_stale(Some(&t1), Some(&t0)));
        assert!(row_is_stale(Some(&t0), None));
        assert!(
            !row_is_stale(Some(&t0), Some(&t0)),
            "equal re-delivery applies"
        );
        assert!(!row_is_stale(Some(&t0), Some(&t1)));
        assert!(!row_is_stale(None, None));
        assert!(!row_is_stale(None, Some(&t0)));
    }

    #[test]
    fn session_fields_follow_their_own_clock() {
        let (t0, t1) = (ts(T0), ts(T1));
        assert!(session_field_applies(None, None));
        assert!(session_field_applies(None, Some(&t0)));
        assert!(session_field_applies(Some(&t0), Some(&t0)));
        assert!(session_field_applies(Some(&t0), Some(&t1)));
        assert!(!session_field_applies(Some(&t1), Some(&t0)));
        assert!(!session_field_applies(Some(&t0), None));
    }

    #[test]
    fn turn_order_is_total_and_prefers_the_later_life() {
        let open = turn("t", Some(T0), false);
        let done = turn("t", Some(T0), true);
        assert!(turn_replaces(&open, &done));
        assert!(
            !turn_replaces(&done, &open),
            "a turn never reopens at an equal clock"
        );
        let newer_open = turn("t", Some(T1), false);
        assert!(turn_replaces(&done, &newer_open), "a newer clock wins");
        assert!(!turn_replaces(&newer_open, &done));
        assert!(!turn_replaces(&done, &turn("t", None, true)));
        assert!(
            !turn_replaces(&done, &done.clone()),
            "a re-delivery changes nothing"
        );
        let mut attempted = open.clone();
        attempted.flags.prompt_dispatch_pending = true;
        attempted.flags.prompt_dispatch_attempted = true;
        let mut reserved = open.clone();
        reserved.flags.prompt_dispatch_pending = true;
        assert!(turn_replaces(&reserved, &attempted));
        assert!(!turn_replaces(&attempted, &reserved));
    }

    #[test]
    fn turn_merge_is_a_union_in_any_order() {
        let a = turn("a", Some(T0), false);
        let a_done = turn("a", Some(T1), true);
        let b = turn("b", Some(T0), false);
        let one = merge_turns(vec![a_done.clone()], vec![a.clone(), b.clone()]);
        let two = merge_turns(vec![a.clone(), b.clone()], vec![a_done.clone()]);
        let key = |v: &[Turn]| {
            let mut v: Vec<_> = v.iter().map(|t| (t.id.clone(), t.completed)).collect();
            v.sort();
            v
        };
        assert_eq!(key(&one), vec![("a".into(), true), ("b".into(), false)]);
        assert_eq!(key(&one), key(&two));
        // Duplicate ids inside one list keep the greatest row.
        let dup = merge_turns(Vec::new(), vec![a_done.clone(), a.clone()]);
        assert_eq!(dup, vec![a_done]);
    }

    #[test]
    fn session_list_merge_keeps_sessions_the_list_lacks_in_place() {
        // An older list (without the newest session s3) after a newer one.
        assert_eq!(
            merge_session_list(&["s3", "s2", "s1"], &["s2", "s1"]),
            vec!["s3", "s2", "s1"]
        );
        assert_eq!(
            merge_session_list(&["s2", "s1"], &["s3", "s2", "s1"]),
            vec!["s3", "s2", "s1"]
        );
        // A held session older than every listed one goes last.
        assert_eq!(merge_session_list(&["s2", "s0"], &["s2"]), vec!["s2", "s0"]);
        assert_eq!(merge_session_list(&[], &["b", "a"]), vec!["b", "a"]);
        assert_eq!(merge_session_list(&["b", "a"], &[]), vec!["b", "a"]);
        // Disagreeing orders: the list's order wins for the sessions it has.
        assert_eq!(merge_session_list(&["a", "b"], &["b", "a"]), vec!["b", "a"]);
        // Interleaved.
        assert_eq!(
            merge_session_list(&["s5", "s4", "s2", "s1"], &["s4", "s3", "s1"]),
            vec!["s5", "s4", "s3", "s2", "s1"]
        );
    }

    /// The session-list merge as first written (O(n²)): what the indexed one must equal.
    fn merge_session_list_reference<'a>(held: &[&'a str], list: &[&'a str]) -> Vec<&'a str> {
        let mut merged: Vec<&'a str> = Vec::new();
        for &id in list {
            if !merged.contains(&id) {
                merged.push(id);
            }
        }
        for (i, &id) in held.iter().enumerate() {
            if merged.contains(&id) {
                continue;
            }
            let at = held[i + 1..]
                .iter()
                .find_map(|next| merged.iter().position(|m| m == next))
                .unwrap_or(merged.len());
            merged.insert(at, id);
        }
        merged
    }

    /// The turn-list merge as first written: one `upsert_turn` per row.
    fn merge_turns_reference(held: Vec<Turn>, list: Vec<Turn>) -> Vec<Turn> {
        let mut merged = Vec::new();
        for turn in list.into_iter().chain(held) {
            upsert_turn(&mut merged, turn);
        }
        merged
    }

    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n.max(1) as u64) as usize
        }
    }

    const IDS: [&str; 12] = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"];

    #[test]
    fn session_list_merge_equals_the_reference_on_random_lists() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for round in 0..20_000 {
            let alphabet = 1 + rng.below(IDS.len());
            // Mostly repetition-free lists (as the backend and the store hold them), some not.
            let pick = |rng: &mut Rng, len: usize, unique: bool| {
                let mut v: Vec<&str> = Vec::new();
                while v.len() < len {
                    let id = IDS[rng.below(alphabet)];
                    if unique && v.contains(&id) {
                        if v.len() >= alphabet {
                            break;
                        }
                        continue;
                    }
                    v.push(id);
                }
                v
            };
            let unique = round % 3 != 0;
            let (held_len, list_len) = (rng.below(10), rng.below(10));
            let held = pick(&mut rng, held_len, unique);
            let list = pick(&mut rng, list_len, unique || round % 2 == 0);
            assert_eq!(
                merge_session_list(&held, &list),
                merge_session_list_reference(&held, &list),
                "held {held:?}, list {list:?}"
            );
        }
    }

    /// The merge of repetition-free lists, shortcuts included, equals the general merge.
    #[test]
    fn distinct_session_list_merge_equals_the_general_merge() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let distinct = |rng: &mut Rng, len: usize| {
            let mut v: Vec<&str> = Vec::new();
            for _ in 0..len {
                let id = IDS[rng.below(IDS.len())];
                if !v.contains(&id) {
                    v.push(id);
                }
            }
            v
        };
        let mut shortcuts = 0;
        for round in 0..20_000 {
            let len = rng.below(10);
            let held = distinct(&mut rng, len);
            // Every shape of pair: unrelated lists, and the ones the shortcuts take (a suffix
            // of the held list, or the held list behind newer sessions).
            let list = match round % 4 {
                0 => {
                    let len = rng.below(10);
                    distinct(&mut rng, len)
                }
                1 => held[rng.below(held.len() + 1)..].to_vec(),
                2 => {
                    let newer: Vec<&str> = IDS
                        .iter()
                        .copied()
                        .filter(|id| !held.contains(id))
                        .take(rng.below(4))
                        .collect();
                    newer.into_iter().chain(held.iter().copied()).collect()
                }
                _ => held.clone(),
            };
            let general = merge_session_list(&held, &list);
            let distinct = merge_distinct_session_list(&held, list.clone());
            shortcuts += usize::from(held.ends_with(&list) || list.ends_with(&held));
            assert_eq!(
                distinct.unwrap_or_else(|| held.clone()),
                general,
                "held {held:?}, list {list:?}"
            );
        }
        assert!(shortcuts > 10_000, "{shortcuts}");
        assert_eq!(merge_distinct_session_list(&["a"], vec!["a"]), None);
        assert_eq!(merge_distinct_session_list::<&str>(&[], vec![]), None);
        assert_eq!(merge_distinct_session_list(&[], vec!["a"]), Some(vec!["a"]));
        assert_eq!(
            merge_distinct_session_list(&["b", "a"], vec!["c", "a"]),
            Some(vec!["c", "b", "a"])
        );
    }

    #[test]
    fn session_list_merge_of_long_lists() {
        let ids: Vec<String> = (0..20_000).map(|i| format!("s{i:05}")).collect();
        let all: Vec<&str> = ids.iter().rev().map(String::as_str).collect();
        let even: Vec<&str> = all.iter().copied().step_by(2).collect();
        let odd: Vec<&str> = all.iter().copied().skip(1).step_by(2).collect();
        // Lists of one history in any order end in the whole list.
        assert_eq!(merge_session_list(&all, &even), all);
        assert_eq!(merge_session_list(&even, &all), all);
        assert_eq!(merge_session_list(&[], &all), all);
        assert_eq!(merge_session_list(&all, &[]), all);
        assert_eq!(merge_session_list(&all, &all), all);
        // Disjoint lists, and partial ones, as the reference (O(n³) at worst) merges them.
        let (short, shorter) = (&all[..300], &all[100..250]);
        for (held, list) in [
            (&even[..150], &odd[..150]),
            (&odd[..150], &even[..150]),
            (short, shorter),
            (shorter, short),
        ] {
            assert_eq!(
                merge_session_list(held, list),
                merge_session_list_reference(held, list)
            );
        }
    }

    #[test]
    fn turn_merge_equals_the_reference_on_random_lists() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let clocks = [None, Some(T0), Some(T1)];
        for _ in 0..5_000 {
            let turns = |rng: &mut Rng| -> Vec<Turn> {
                (0..rng.below(12))
                    .map(|_| {
                        let mut t =
                            turn(IDS[rng.below(6)], clocks[rng.below(3)], rng.below(2) == 0);
                        t.flags.prompt_dispatch_pending = rng.below(2) == 0;
                        t.flags.prompt_dispatch_attempted = rng.below(3) == 0;
                        t.flags.lifecycle_only = rng.below(4) == 0;
                        if rng.below(2) == 0 {
                            t.started_at = ts(T1);
                        }
                        t
                    })
                    .collect()
            };
            let (held, list) = (turns(&mut rng), turns(&mut rng));
            assert_eq!(
                merge_turns(held.clone(), list.clone()),
                merge_turns_reference(held, list)
            );
        }
    }

    #[test]
    fn only_a_strictly_newer_event_revives_a_deleted_id() {
        let d = rev("7", 5);
        assert!(!revives(Some(&d), Revival::Event(Some(&rev("7", 4)))));
        assert!(!revives(Some(&d), Revival::Event(Some(&rev("7", 5)))));
        assert!(revives(Some(&d), Revival::Event(Some(&rev("7", 6)))));
        assert!(revives(Some(&d), Revival::Event(Some(&rev("8", 1)))));
        assert!(!revives(Some(&d), Revival::Event(None)));
        assert!(!revives(Some(&d), Revival::Event(Some(&rev("x", 9)))));
        assert!(!revives(
            Some(&rev("x", 1)),
            Revival::Event(Some(&rev("9", 9)))
        ));
        assert!(!revives(None, Revival::Event(Some(&rev("9", 9)))));
        assert!(!revives(Some(&d), Revival::PageRow));
    }

    #[test]
    fn tombstones_merge_commutatively() {
        let (a, b) = (rev("7", 5), rev("8", 1));
        assert_eq!(stronger_tombstone(Some(&a), Some(&b)), Some(b.clone()));
        assert_eq!(stronger_tombstone(Some(&b), Some(&a)), Some(b.clone()));
        assert_eq!(stronger_tombstone(Some(&a), Some(&a)), Some(a.clone()));
        assert_eq!(stronger_tombstone(None, Some(&a)), None);
        assert_eq!(stronger_tombstone(Some(&a), None), None);
        assert_eq!(stronger_tombstone(Some(&rev("x", 1)), Some(&a)), None);
        assert!(!applies_after_removal());
    }
}
