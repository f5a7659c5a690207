//! Current-turn authority (SPEC §2).

use std::cmp::Ordering;

use super::model::{SessionState, TurnRecord};

/// What is known of a session's current turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CurrentTurn<T> {
    /// Turn history not loaded.
    Unknown,
    /// No eligible turn (or the session is quarantined).
    None,
    /// The current turn.
    Turn(T),
}

impl<T> CurrentTurn<T> {
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> CurrentTurn<U> {
        match self {
            CurrentTurn::Unknown => CurrentTurn::Unknown,
            CurrentTurn::None => CurrentTurn::None,
            CurrentTurn::Turn(t) => CurrentTurn::Turn(f(t)),
        }
    }

    pub fn turn(self) -> Option<T> {
        match self {
            CurrentTurn::Turn(t) => Some(t),
            _ => None,
        }
    }
}

/// Why [`current_turn`] decided what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnReason {
    HistoryNotLoaded,
    SessionNotInputCapable,
    NoEligibleTurn,
    OpenTurnOutranksCompleted,
    NewestTurn,
}

/// A turn is eligible to be current: not a lifecycle record and not an unpublished reservation
/// (`prompt_dispatch_pending` set, `prompt_dispatch_attempted` not set, no known message
/// references it).
pub fn is_eligible<T: TurnRecord>(turn: &T, is_referenced: impl Fn(&str) -> bool) -> bool {
    let flags = turn.flags();
    if flags.lifecycle_only {
        return false;
    }
    let reservation = flags.prompt_dispatch_pending && !flags.prompt_dispatch_attempted;
    !reservation || is_referenced(turn.id())
}

/// The authority order of turns: open before completed, then `started_at`, `created_at`, `id`
/// (greater is more current).
pub fn authority_order<T: TurnRecord>(a: &T, b: &T) -> Ordering {
    a.is_open()
        .cmp(&b.is_open())
        .then_with(|| a.started_at().cmp(b.started_at()))
        .then_with(|| a.created_at().cmp(b.created_at()))
        .then_with(|| a.id().cmp(b.id()))
}

/// The current turn of a session (SPEC §2): `turns` is `None` when the history is not loaded;
/// `state` is `None` when the session state is unknown. Returns the index into `turns`.
pub fn current_turn<T: TurnRecord>(
    turns: Option<&[T]>,
    state: Option<SessionState>,
    is_referenced: impl Fn(&str) -> bool,
) -> (CurrentTurn<usize>, TurnReason) {
    // Quarantine first: a known state that is not input-capable has no current turn, whether
    // or not its history is loaded (fail closed).
    if let Some(state) = state {
        if !state.is_input_capable() {
            return (CurrentTurn::None, TurnReason::SessionNotInputCapable);
        }
    }
    let Some(turns) = turns else {
        return (CurrentTurn::Unknown, TurnReason::HistoryNotLoaded);
    };
    let mut best: Option<(usize, &T)> = None;
    let mut saw_completed = false;
    for (index, turn) in turns.iter().enumerate() {
        if !is_eligible(turn, &is_referenced) {
            continue;
        }
        saw_completed |= !turn.is_open();
        // A complete tie keeps the first.
        if best.is_none_or(|(_, held)| authority_order(turn, held) == Ordering::Greater) {
            best = Some((index, turn));
        }
    }
    match best {
        None => (CurrentTurn::None, TurnReason::NoEligibleTurn),
        Some((index, turn)) if turn.is_open() && saw_completed => (
            CurrentTurn::Turn(index),
            TurnReason::OpenTurnOutranksCompleted,
        ),
        Some((index, _)) => (CurrentTurn::Turn(index), TurnReason::NewestTurn),
    }
}

/// Whether [`current_turn`] over a *window* of a session's turns chooses the turn it would choose
/// over the whole history, so a reader of long histories (the server) need not read every turn.
/// The window holds **every open turn** and the `k` completed turns greatest by (`started_at`,
/// `created_at`) (ties at the boundary taken in any order); `exhausted`: the history has no other
/// completed turn (fewer than `k` were found).
///
/// The current turn is the eligible turn greatest in [`authority_order`]. An eligible open turn
/// outranks every completed one, and every open turn is in the window. Otherwise the answer is
/// the greatest eligible completed turn of the window, provided no completed turn outside the
/// window can rank with it: every turn outside ranks at most with the window's least completed
/// turn, so the window decides when its choice ranks strictly above that turn by timestamps (a
/// tie there is broken by `id`, and an outside turn could win it). Not deciding: read them all.
/// (The answer's turn is preserved; whether an open choice also outranked a completed eligible
/// turn outside the window, [`TurnReason::OpenTurnOutranksCompleted`], is not.)
pub fn window_decides<T: TurnRecord>(
    window: &[T],
    exhausted: bool,
    is_referenced: impl Fn(&str) -> bool,
) -> bool {
    let by_time = |a: &T, b: &T| {
        a.started_at()
            .cmp(b.started_at())
            .then_with(|| a.created_at().cmp(b.created_at()))
    };
    let (current, _) = current_turn(Some(window), None, &is_referenced);
    let Some(chosen) = current.turn().and_then(|i| window.get(i)) else {
        // No eligible turn in the window: decided only when nothing is outside it.
        return exhausted;
    };
    if chosen.is_open() || exhausted {
        return true;
    }
    let least = window
        .iter()
        .filter(|t| !t.is_open())
        .min_by(|a, b| by_time(a, b));
    least.is_some_and(|least| by_time(chosen, least) == Ordering::Greater)
}

/// Where one turn stands in [`current_turn`]'s decision (what `explain` reports per turn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnStanding {
    /// The current turn.
    Current,
    /// A lifecycle record: never current.
    LifecycleOnly,
    /// A reservation no known message references: not published, so not current.
    UnpublishedReservation,
    /// Eligible, but the session is not input-capable: no turn is current (quarantine).
    Quarantined,
    /// Eligible, but another turn ranks above it in [`authority_order`].
    Outranked,
}

/// Where `turn` stands, given the session's `state` and whether [`current_turn`] chose it.
pub fn turn_standing<T: TurnRecord>(
    turn: &T,
    state: Option<SessionState>,
    is_current: bool,
    is_referenced: impl Fn(&str) -> bool,
) -> TurnStanding {
    if turn.flags().lifecycle_only {
        TurnStanding::LifecycleOnly
    } else if !is_eligible(turn, is_referenced) {
        TurnStanding::UnpublishedReservation
    } else if state.is_some_and(|s| !s.is_input_capable()) {
        TurnStanding::Quarantined
    } else if is_current {
        TurnStanding::Current
    } else {
        TurnStanding::Outranked
    }
}

/// Visible turn history (SPEC §2): every published turn, lifecycle or not, ascending by
/// `started_at`, `created_at`, `id`. Returns indices into `turns`; equal keys keep input order.
pub fn visible_turn_history<T: TurnRecord>(
    turns: &[T],
    is_referenced: impl Fn(&str) -> bool,
) -> Vec<usize> {
    let published = |turn: &T| {
        let flags = turn.flags();
        !(flags.prompt_dispatch_pending
            && !flags.prompt_dispatch_attempted
            && !is_referenced(turn.id()))
    };
    // When both timestamps of every turn pack into a word of their order (the backend's do), the
    // sort reads the words side by side instead of the turns themselves (a long history sorts at
    // memory speed, not a cache miss per comparison), `id` breaking the ties; otherwise every
    // comparison reads the turns.
    let mut packed = true;
    let mut keys: Vec<crate::sort::Keyed> = Vec::with_capacity(turns.len());
    for (i, turn) in turns.iter().enumerate() {
        if published(turn) {
            let key = turn.started_at().packed().zip(turn.created_at().packed());
            packed &= key.is_some();
            let (started, created) = key.unwrap_or_default();
            keys.push((started, created, i));
        }
    }
    if !packed {
        for key in &mut keys {
            (key.0, key.1) = (0, 0);
        }
    }
    crate::sort::stable_sort_keyed(&mut keys, |a, b| match (turns.get(a), turns.get(b)) {
        (Some(a), Some(b)) if packed => a.id().cmp(b.id()),
        (Some(a), Some(b)) => a
            .started_at()
            .cmp(b.started_at())
            .then_with(|| a.created_at().cmp(b.created_at()))
            .then_with(|| a.id().cmp(b.id())),
        _ => Ordering::Equal,
    });
    keys.into_iter().map(|(_, _, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every history of up to 9 turns over few instants (ties), each open or not, lifecycle or
    /// an unpublished reservation or neither: for every window size, when [`window_decides`]
    /// says so, the window's current turn is the whole history's.
    #[test]
    #[cfg(not(target_arch = "wasm32"))] // proptest is a native dev-dependency
    fn a_deciding_window_chooses_what_the_whole_history_chooses() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let times = [
            "2026-11-29T12:00:00Z",
            "2026-11-29T12:00:01Z",
            "2026-11-29T12:00:02Z",
        ];
        let spec = (0..3usize, 0..3usize, any::<bool>(), 0..4u8, any::<bool>());
        let mut runner = TestRunner::new(Config {
            cases: 4096,
            ..Config::default()
        });
        let decided = std::cell::Cell::new(0usize);
        let undecided = std::cell::Cell::new(0usize);
        runner
            .run(
                &(prop::collection::vec(spec, 0..9), 1..6usize),
                |(specs, k)| {
                    let turns: Vec<Turn> = specs
                        .iter()
                        .enumerate()
                        .map(|(i, &(s, c, completed, kind, referenced))| {
                            let mut t = turn(
                                &format!("t{i}{}", u8::from(referenced)),
                                times[s],
                                times[c],
                                completed,
                            );
                            t.flags.lifecycle_only = kind == 1;
                            t.flags.prompt_dispatch_pending = kind == 2;
                            t.flags.prompt_dispatch_attempted = false;
                            t
                        })
                        .collect();
                    let referenced = |id: &str| id.ends_with('1');
                    let (whole, _) = current_turn(Some(&turns[..]), None, referenced);
                    let whole = whole.turn().map(|i| turns[i].id.clone());
                    // The window: every open turn and the k greatest completed by time (ties in
                    // storage order; any order is allowed).
                    let mut completed: Vec<&Turn> = turns.iter().filter(|t| t.completed).collect();
                    completed.sort_by(|a, b| {
                        b.started_at
                            .cmp(&a.started_at)
                            .then_with(|| b.created_at.cmp(&a.created_at))
                    });
                    let exhausted = completed.len() <= k;
                    let mut window: Vec<Turn> =
                        turns.iter().filter(|t| !t.completed).cloned().collect();
                    window.extend(completed.into_iter().take(k).cloned());
                    if window_decides(&window, exhausted, referenced) {
                        decided.set(decided.get() + 1);
                        let (part, _) = current_turn(Some(&window[..]), None, referenced);
                        prop_assert_eq!(part.turn().map(|i| window[i].id.clone()), whole);
                    } else {
                        undecided.set(undecided.get() + 1);
                        prop_assert!(!exhausted);
                    }
                    Ok(())
                },
            )
            .unwrap();
        let (decided, undecided) = (decided.get(), undecided.get());
        assert!(
            decided > 1000 && undecided > 50,
            "{decided} decided, {undecided} not"
        );
    }
    use crate::rules::model::{Turn, TurnFlags};
    use crate::rules::time::Timestamp;

    fn turn(id: &str, started: &str, created: &str, completed: bool) -> Turn {
        Turn {
            id: id.into(),
            completed,
            started_at: Timestamp::parse(started),
            created_at: Timestamp::parse(created),
            updated_at: None,
            flags: TurnFlags::default(),
        }
    }

    const T0: &str = "2026-11-29T12:00:00Z";
    const T1: &str = "2026-11-29T12:00:01Z";

    fn none(_: &str) -> bool {
        false
    }

    #[test]
    fn standings_follow_the_current_turn_decision() {
        let lifecycle = Turn {
            flags: TurnFlags {
                lifecycle_only: true,
                ..TurnFlags::default()
            },
            ..turn("life", T1, T1, false)
        };
        let reservation = Turn {
            flags: TurnFlags {
                prompt_dispatch_pending: true,
                ..TurnFlags::default()
            },
            ..turn("held", T1, T1, false)
        };
        let (done, open) = (turn("done", T1, T1, true), turn("open", T0, T0, false));
        let turns = [
            done.clone(),
            open.clone(),
            lifecycle.clone(),
            reservation.clone(),
        ];
        let (current, _) = current_turn(Some(&turns), None, none);
        assert_eq!(current, CurrentTurn::Turn(1));
        let standings: Vec<TurnStanding> = turns
            .iter()
            .enumerate()
            .map(|(i, t)| turn_standing(t, None, current == CurrentTurn::Turn(i), none))
            .collect();
        assert_eq!(
            standings,
            [
                TurnStanding::Outranked,
                TurnStanding::Current,
                TurnStanding::LifecycleOnly,
                TurnStanding::UnpublishedReservation,
            ]
        );
        // A referenced reservation is published; a terminal session quarantines every turn.
        assert_eq!(
            turn_standing(&reservation, None, false, |id| id == "held"),
            TurnStanding::Outranked
        );
        assert_eq!(
            turn_standing(&open, Some(SessionState::Completed), false, none),
            TurnStanding::Quarantined
        );
        assert_eq!(
            turn_standing(&lifecycle, Some(SessionState::Completed), false, none),
            TurnStanding::LifecycleOnly
        );
    }

    #[test]
    fn unknown_none_and_single() {
        assert_eq!(
            current_turn::<Turn>(None, None, none).0,
            CurrentTurn::Unknown
        );
        assert_eq!(
            current_turn::<Turn>(Some(&[]), None, none).0,
            CurrentTurn::None
        );
        let turns = [turn("a", T0, T0, true)];
        assert_eq!(
            current_turn(Some(&turns[..]), None, none).0,
            CurrentTurn::Turn(0)
        );
    }

    #[test]
    fn open_outranks_completed_with_reason() {
        let turns = [turn("c", T1, T1, true), turn("o", T0, T0, false)];
        assert_eq!(
            current_turn(Some(&turns[..]), None, none),
            (CurrentTurn::Turn(1), TurnReason::OpenTurnOutranksCompleted)
        );
    }

    #[test]
    fn complete_tie_keeps_first() {
        let turns = [turn("x", T0, T0, true), turn("x", T0, T0, true)];
        assert_eq!(
            current_turn(Some(&turns[..]), None, none).0,
            CurrentTurn::Turn(0)
        );
    }

    #[test]
    fn reservation_counts_once_referenced() {
        let mut reserved = turn("r", T1, T1, false);
        reserved.flags.prompt_dispatch_pending = true;
        let turns = [turn("a", T0, T0, true), reserved];
        assert_eq!(
            current_turn(Some(&turns[..]), None, none).0,
            CurrentTurn::Turn(0)
        );
        assert_eq!(
            current_turn(Some(&turns[..]), None, |id| id == "r").0,
            CurrentTurn::Turn(1)
        );
        assert_eq!(visible_turn_history(&turns, none), vec![0]);
    }

    /// The history as first written: the filter, then a stable sort by the full comparator.
    fn visible_reference(turns: &[Turn], is_referenced: impl Fn(&str) -> bool) -> Vec<usize> {
        let mut order: Vec<usize> = (0..turns.len())
            .filter(|&i| {
                let flags = turns[i].flags;
                !(flags.prompt_dispatch_pending
                    && !flags.prompt_dispatch_attempted
                    && !is_referenced(&turns[i].id))
            })
            .collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&turns[a], &turns[b]);
            a.started_at
                .cmp(&b.started_at)
                .then_with(|| a.created_at.cmp(&b.created_at))
                .then_with(|| a.id.cmp(&b.id))
        });
        order
    }

    #[test]
    fn visible_history_equals_the_reference_on_random_turns() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let stamps = [
            "2026-11-29T12:00:00Z",
            "2026-11-29T12:00:00.5Z",
            "2026-11-29T12:00:01Z",
            "2026-11-29T12:00:01.000000001Z",
            "2026-11-30T00:00:00Z",
        ];
        for round in 0..600 {
            let len = match round % 3 {
                0 => next(20),
                1 => next(200),
                _ => next(3000),
            } as usize;
            // Every third round has some text-form timestamps (the comparator path).
            let text = round % 3 == 2;
            let stamp = |next: &mut dyn FnMut(u64) -> u64| {
                if text && next(10) == 0 {
                    ["", "yesterday", "2026-11-29T12:00:00.5Z "][next(3) as usize]
                } else {
                    stamps[next(stamps.len() as u64) as usize]
                }
            };
            let turns: Vec<Turn> = (0..len)
                .map(|_| {
                    let id = format!("t{}", next(len as u64 / 2 + 1));
                    let (started, created) = (stamp(&mut next), stamp(&mut next));
                    let mut t = turn(&id, started, created, next(2) == 0);
                    t.flags.prompt_dispatch_pending = next(5) == 0;
                    t.flags.prompt_dispatch_attempted = next(2) == 0;
                    t.flags.lifecycle_only = next(4) == 0;
                    t
                })
                .collect();
            let referenced = |id: &str| id.len() % 2 == 0;
            assert_eq!(
                visible_turn_history(&turns, referenced),
                visible_reference(&turns, referenced),
                "round {round}"
            );
        }
    }

    #[test]
    fn visible_history_ascending_with_lifecycle() {
        let mut life = turn("life", T1, T1, true);
        life.flags.lifecycle_only = true;
        let turns = [life, turn("b", T0, T1, true), turn("a", T0, T1, true)];
        assert_eq!(visible_turn_history(&turns, none), vec![2, 1, 0]);
    }
}
