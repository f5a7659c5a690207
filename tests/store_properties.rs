//! Property tests of the store (issue 3): order independence of revisioned events, idempotence,
//! rejected and malformed events leaving the state unchanged, and equivalence of the store's
//! indexed answers with the stateless rules run on the whole transcript.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use serde_json::{json, Value};
use task_projection::rules::clarification::{self, Scope};
use task_projection::rules::model::{
    Message, MessageKind, PendingAction, RequestStatus, Revision, Session, SessionState,
    StatusSummary, Turn, TurnFlags,
};
use task_projection::rules::pending;
use task_projection::rules::revision::PendingProjection;
use task_projection::rules::time::Timestamp;
use task_projection::rules::turn::current_turn;
use task_projection::store::{MessageEvent, MessageEventKind, ProjectionStore};
use task_projection::wire::{store_api, Json};

type Store = ProjectionStore<u64>;

const SESSIONS: [&str; 3] = ["s0", "s1", "s2"];
const TASK: &str = "task-1";

/// Mostly timestamps the store packs into 8 bytes; some it keeps in its side table (raw text
/// that still orders with the value: 9 fraction digits, another suffix). Increasing in
/// `second`.
fn ts(second: u32) -> Timestamp {
    let (minute, sec) = (second / 60 % 60, second % 60);
    Timestamp::parse(&if second % 13 == 7 {
        format!("2026-11-29T12:{minute:02}:{sec:02}.{second:09}+00:00")
    } else {
        format!("2026-11-29T12:{minute:02}:{sec:02}.{second:09}Z")
    })
}

/// Like [`ts`], plus instants the store cannot pack (another century), which sort first: for
/// creation times, whose order is free.
fn ts_any(second: u32) -> Timestamp {
    if second % 11 == 3 {
        let (minute, sec) = (second / 60 % 60, second % 60);
        Timestamp::parse(&format!("1969-11-29T12:{minute:02}:{sec:02}.{second:09}Z"))
    } else {
        ts(second)
    }
}

/// One revisioned event of the permutation property.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
enum Event {
    Message {
        kind: MessageEventKind,
        event: MessageEvent,
    },
    Summary {
        revision: u64,
        action: Option<PendingAction>,
    },
}

fn action_of(n: u8) -> Option<PendingAction> {
    match n % 3 {
        0 => None,
        1 => Some(PendingAction::Clarification),
        _ => Some(PendingAction::Permission),
    }
}

fn message(id: usize, version: u32, turn: usize, kind: u8, status: u8) -> Message {
    Message {
        id: format!("m{id}"),
        turn_id: Some(format!("t{turn}")),
        kind: match kind % 4 {
            0 => MessageKind::ClarificationRequest,
            1 => MessageKind::PermissionRequest,
            _ => MessageKind::Other,
        },
        status: if status % 2 == 0 {
            RequestStatus::Pending
        } else {
            RequestStatus::Answered
        },
        pending_id: Some(format!("p{}", id % 3)),
        question_total: None,
        flags: Default::default(),
        created_at: ts_any(u32::try_from(id).unwrap()),
        updated_at: Some(ts(1000 + version)),
    }
}

/// A set of events whose revisions are distinct per session and consistent with row versions:
/// a later version of a message always carries a later revision; an epoch bump happens at
/// `bump` (every later event uses epoch 8, the earlier ones epoch 7).
fn events_strategy(always_project: bool) -> impl Strategy<Value = Vec<Event>> {
    let message_event = (
        0usize..3,
        0usize..6,
        0usize..3,
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        any::<bool>(),
    );
    (
        prop::collection::vec(message_event, 1..24),
        0usize..24,
        prop::collection::vec((0u64..40, any::<u8>()), 0..5),
    )
        .prop_map(move |(raw, bump, summaries)| {
            let mut per_session_seq = [0u64; 3];
            let mut versions = std::collections::HashMap::new();
            let mut events = Vec::new();
            for (i, (session, id, turn, kind, status, act, with_projection)) in
                raw.into_iter().enumerate()
            {
                let id = session * 100 + id;
                let version = versions.entry(id).and_modify(|v| *v += 1).or_insert(0u32);
                per_session_seq[session] += 1;
                let epoch = if i >= bump { "8" } else { "7" };
                let projection = (always_project || with_projection).then(|| PendingProjection {
                    action: Some(action_of(act)),
                    revision: Some(Revision {
                        epoch: epoch.into(),
                        sequence: per_session_seq[session],
                    }),
                });
                let kind_of_event = if *version == 0 {
                    MessageEventKind::Added
                } else {
                    MessageEventKind::Updated
                };
                events.push(Event::Message {
                    kind: kind_of_event,
                    event: MessageEvent {
                        session_id: SESSIONS[session].into(),
                        task_id: Some(TASK.into()),
                        message: message(id, *version, turn, kind, status),
                        projection,
                    },
                });
            }
            let mut seen = std::collections::HashSet::new();
            for (revision, act) in summaries {
                if seen.insert(revision) {
                    events.push(Event::Summary {
                        revision,
                        action: action_of(act),
                    });
                }
            }
            events
        })
}

fn base_store() -> Store {
    let mut store = Store::new();
    let sessions: Vec<Session> = SESSIONS
        .iter()
        .map(|id| Session {
            id: (*id).into(),
            task_id: Some(TASK.into()),
            state: Some(SessionState::Running),
            is_primary: *id == "s0",
            pending_action: None,
            pending_action_revision: None,
            updated_at: None,
        })
        .collect();
    store.apply_session_list(TASK, sessions).unwrap();
    for id in SESSIONS {
        let turns = (0..3)
            .map(|t| Turn {
                id: format!("t{t}"),
                completed: t < 2,
                started_at: ts(t * 10),
                created_at: ts(t * 10),
                updated_at: None,
                flags: TurnFlags::default(),
            })
            .collect();
        store.apply_turn_list(id, turns);
    }
    store
}

fn apply(store: &mut Store, event: &Event) {
    match event {
        Event::Message { kind, event, .. } => {
            store.apply_message_event(*kind, event);
        }
        Event::Summary { revision, action } => {
            let summary = StatusSummary {
                revision: Some(*revision),
                pending_action: *action,
            };
            store.apply_status_summary_event(TASK, Some((summary, *revision)));
        }
    }
}

/// Revision order: the order the backend emitted the events in (the strategy generates them so:
/// sequences ascending per session, the epoch bump in the middle, row versions ascending),
/// summaries by revision.
fn revision_order(events: &[Event]) -> Vec<Event> {
    let mut ordered: Vec<Event> = events
        .iter()
        .filter(|e| matches!(e, Event::Message { .. }))
        .cloned()
        .collect();
    let mut summaries: Vec<Event> = events
        .iter()
        .filter(|e| matches!(e, Event::Summary { .. }))
        .cloned()
        .collect();
    summaries.sort_by_key(|e| match e {
        Event::Summary { revision, .. } => *revision,
        Event::Message { .. } => 0,
    });
    ordered.extend(summaries);
    ordered
}

fn answers(store: &Store) -> Vec<String> {
    let mut out = Vec::new();
    for id in SESSIONS {
        out.push(format!("{:?}", store.session_pending_action(id).0));
        out.push(format!("{:?}", store.pending_clarification(id).0));
        out.push(format!("{:?}", store.has_pending_permission(id).0));
    }
    out.push(format!("{:?}", store.task_pending_action(TASK).0));
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any permutation of a set of revisioned events (with duplicates and a mid-stream epoch
    /// bump) yields the same state as applying them in revision order.
    #[test]
    fn permutations_converge(events in events_strategy(true), seed in any::<u64>(), dups in prop::collection::vec(any::<prop::sample::Index>(), 0..6)) {
        let mut set = events.clone();
        for d in &dups {
            set.push(d.get(&events).clone());
        }
        let mut ordered = base_store();
        for e in revision_order(&events) {
            apply(&mut ordered, &e);
        }
        let mut shuffled_events = set.clone();
        // Fisher-Yates with a deterministic LCG from the seed.
        let mut state = seed | 1;
        for i in (1..shuffled_events.len()).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let j = (state >> 33) as usize % (i + 1);
            shuffled_events.swap(i, j);
        }
        let mut shuffled = base_store();
        for e in &shuffled_events {
            apply(&mut shuffled, e);
        }
        prop_assert_eq!(answers(&ordered), answers(&shuffled));
        prop_assert_eq!(format!("{:?}", ordered.task_status_summary(TASK)), format!("{:?}", shuffled.task_status_summary(TASK)));
        for id in SESSIONS {
            prop_assert_eq!(ordered.session_projection(id), shuffled.session_projection(id));
        }
        prop_assert_eq!(ordered.digest(), shuffled.digest());
    }

    /// Applying every event twice equals applying it once.
    #[test]
    fn events_are_idempotent(events in events_strategy(false)) {
        let mut once = base_store();
        let mut twice = base_store();
        for e in &events {
            apply(&mut once, e);
            apply(&mut twice, e);
            apply(&mut twice, e);
        }
        prop_assert_eq!(once.digest(), twice.digest());
        prop_assert_eq!(answers(&once), answers(&twice));
    }

    /// A rejected event (an older revision re-delivering a stored row, or a stale row update)
    /// leaves the state unchanged.
    #[test]
    fn rejected_events_change_nothing(events in events_strategy(false)) {
        let mut store = base_store();
        for e in revision_order(&events) {
            apply(&mut store, &e);
        }
        for e in &events {
            let Event::Message { kind, event, .. } = e else { continue };
            let held = store.session_projection(&event.session_id).and_then(|(_, r)| r.cloned());
            let Some(held) = held else { continue };
            // Same row as stored now (re-delivery) with a revision older than the held one.
            let mut older = event.clone();
            older.projection = Some(PendingProjection {
                action: Some(Some(PendingAction::Permission)),
                revision: Some(Revision { epoch: "6".into(), sequence: held.sequence }),
            });
            // A stale version of the row: updated before anything stored.
            older.message.updated_at = Some(ts(999));
            let before = store.digest();
            store.apply_message_event(MessageEventKind::Updated, &older);
            let _ = kind;
            prop_assert_eq!(before, store.digest());
        }
    }

    /// Malformed payloads are rejected before any mutation.
    #[test]
    fn malformed_events_change_nothing(events in events_strategy(false), which in 0usize..6) {
        let mut store = ProjectionStore::<Value>::new();
        let sessions = json!([{"id": "s0", "task_id": TASK, "state": "RUNNING"}]);
        store_api::apply_session_list(&mut store, &Json::new(&json!(TASK)), &Json::new(&sessions)).unwrap();
        for e in &events {
            if let Event::Message { kind, event, .. } = e {
                let mut event = event.clone();
                event.session_id = "s0".into();
                store.apply_message_event(*kind, &event);
            }
        }
        let before = store.digest();
        let bad = [
            json!({"message_id": 7, "session_id": "s0"}),
            json!({"message_id": "m1", "session_id": "s0", "pending_action": "maybe"}),
            json!({"message_id": "m1", "session_id": "s0", "pending_action": null, "pending_action_revision": {"epoch": "7", "sequence": -1}}),
            json!({"message_id": "m1", "session_id": "s0", "created_at": 5}),
            json!({"message_id": "m1"}),
            json!([1, 2]),
        ];
        let result = store_api::apply_message_event(&mut store, &Json::new(&json!("updated")), &Json::new(&bad[which]));
        prop_assert!(result.is_err());
        let batch = json!([{"message_id": "ok", "session_id": "s0", "created_at": "2026-11-29T13:00:00Z"}, bad[which].clone()]);
        let result = store_api::apply_message_events(&mut store, &Json::new(&json!("added")), &Json::new(&batch));
        prop_assert!(result.is_err());
        prop_assert_eq!(before, store.digest());
    }
}

/// A random transcript for the equivalence property.
fn transcript_strategy() -> impl Strategy<
    Value = (
        Vec<Message>,
        Vec<Turn>,
        Option<SessionState>,
        Option<Option<PendingAction>>,
    ),
> {
    let msg = (
        0usize..4,
        any::<u8>(),
        any::<u8>(),
        0u8..4,
        prop::option::of(0u8..4),
        0u32..40,
        any::<bool>(),
    );
    let turn = (
        any::<bool>(),
        0u32..40,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    );
    (
        prop::collection::vec(msg, 0..40),
        prop::collection::vec(turn, 0..5),
        prop::option::of(prop::sample::select(vec![
            SessionState::Running,
            SessionState::WaitingForInput,
            SessionState::Idle,
            SessionState::Completed,
        ])),
        prop::option::of(prop::option::of(prop::sample::select(vec![
            PendingAction::Clarification,
            PendingAction::Permission,
        ]))),
    )
        .prop_map(|(msgs, turns, state, projection)| {
            let messages = msgs
                .into_iter()
                .enumerate()
                .map(
                    |(i, (turn, kind, status, pending, total, created, turnless))| Message {
                        id: format!("m{i:02}"),
                        turn_id: (!turnless).then(|| format!("t{turn}")),
                        kind: match kind % 3 {
                            0 => MessageKind::ClarificationRequest,
                            1 => MessageKind::PermissionRequest,
                            _ => MessageKind::Other,
                        },
                        status: match status % 3 {
                            0 => RequestStatus::Pending,
                            1 => RequestStatus::Answered,
                            _ => RequestStatus::Rejected,
                        },
                        pending_id: Some(format!("p{pending}")),
                        question_total: total.map(f64::from),
                        flags: Default::default(),
                        created_at: ts_any(created),
                        updated_at: None,
                    },
                )
                .collect();
            let turns = turns
                .into_iter()
                .enumerate()
                .map(
                    |(i, (open, started, lifecycle, reserved, attempted))| Turn {
                        id: format!("t{i}"),
                        completed: !open,
                        started_at: ts(started),
                        created_at: ts(started),
                        updated_at: None,
                        flags: TurnFlags {
                            lifecycle_only: lifecycle && i % 2 == 0,
                            prompt_dispatch_pending: reserved,
                            prompt_dispatch_attempted: attempted,
                        },
                    },
                )
                .collect();
            (messages, turns, state, projection)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The store's indexed answers equal the stateless rules run on the whole transcript in
    /// creation order (the store's transcript order).
    #[test]
    fn store_answers_equal_the_rules_on_the_whole_transcript((messages, turns, state, projection) in transcript_strategy(), load_turns in prop::bool::weighted(0.7)) {
        let mut store = Store::new();
        let sessions: [Session; 1] = [Session {
            id: "s".into(),
            task_id: Some(TASK.into()),
            state,
            is_primary: true,
            pending_action: projection,
            pending_action_revision: None,
            updated_at: None,
        }];
        store.apply_session_list(TASK, sessions.to_vec()).unwrap();
        // Without the turn list (a session never opened) the current turn is unknown, and with a
        // clarification projection discovery considers every message (SPEC §3 table).
        let history = load_turns.then_some(&turns[..]);
        if load_turns {
            store.apply_turn_list("s", turns.clone());
        }
        store.apply_message_page("s", &messages);

        let mut ordered = messages.clone();
        ordered.sort_by(|a, b| a.created_at.cmp(&b.created_at).then_with(|| a.id.cmp(&b.id)));
        let referenced = |t: &str| ordered.iter().any(|m| m.turn_id.as_deref() == Some(t));
        let (current, _) = current_turn(history, state, referenced);
        let current = current.map(|i| turns[i].id.as_str());
        let (store_turn, _) = store.current_turn_id("s");
        let (store_bundle, _) = store.pending_clarification("s");
        let store_permission = store.has_pending_permission("s").0;
        let store_action = store.session_pending_action("s").0;
        if !load_turns {
            // SPEC §11: the rows' answers wait for the turn list (a quarantined session's
            // discovery excepted: none); the action is known only from the listing's projection.
            use task_projection::rules::turn::CurrentTurn;
            if state.is_some_and(|s| !s.is_input_capable()) {
                prop_assert_eq!(store_turn, CurrentTurn::None);
                prop_assert!(matches!(store_bundle, Some(None)));
            } else {
                prop_assert_eq!(store_turn, CurrentTurn::Unknown);
                prop_assert!(store_bundle.is_none());
            }
            prop_assert_eq!(store_permission, None);
            prop_assert_eq!(store_action, projection);
            return Ok(());
        }
        prop_assert_eq!(store_turn, current);

        let scope = Scope { current_turn: current, pending_action: projection };
        let bundle: Vec<&str> = clarification::pending_bundle(&ordered, Some(&scope)).into_iter().map(|i| ordered[i].id.as_str()).collect();
        prop_assert_eq!(store_bundle.expect("known").map(|b| b.message_ids).unwrap_or_default(), bundle);

        prop_assert_eq!(store_permission, Some(clarification::has_pending_permission(&ordered)));

        let expected_action = match projection {
            Some(action) => action,
            None => pending::session_pending_action(state, history, &ordered).0,
        };
        prop_assert_eq!(store_action, Some(expected_action));
    }
}

#[test]
fn message_removal_keeps_the_index_consistent() {
    let mut store = base_store();
    for i in 0..50 {
        let event = MessageEvent {
            session_id: "s0".into(),
            task_id: Some(TASK.into()),
            message: message(i, 0, i % 3, u8::try_from(i).unwrap(), 0),
            projection: None,
        };
        store.apply_message_event(MessageEventKind::Added, &event);
    }
    assert_eq!(store.message_count(), 50);
    for i in (0..50).step_by(2) {
        let event = MessageEvent {
            session_id: "s0".into(),
            task_id: Some(TASK.into()),
            message: message(i, 0, i % 3, u8::try_from(i).unwrap(), 0),
            projection: None,
        };
        store.apply_message_event(MessageEventKind::Deleted, &event);
    }
    assert_eq!(store.message_count(), 25);
    let _: u64 = store.digest();
}

/// A bundle as `(pending_id, message_ids)`.
type BundleAnswer = Option<Option<(Option<String>, Vec<String>)>>;

/// The answers the wasm binding caches by [`ProjectionStore::discovery_version`]: current turn,
/// bundle, hidden ids.
fn discovery_answers(store: &Store) -> (String, BundleAnswer, Option<Vec<String>>) {
    let turn = format!("{:?}", store.current_turn_id("s").0);
    let bundle = store.pending_clarification("s").0.map(|b| {
        b.map(|b| {
            (
                b.pending_id.map(str::to_owned),
                b.message_ids.iter().map(|m| (*m).to_owned()).collect(),
            )
        })
    });
    let hidden = store
        .hidden_message_ids("s")
        .0
        .map(|ids| ids.iter().map(|m| (*m).to_owned()).collect());
    (turn, bundle, hidden)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The binding keeps a session's current turn, bundle and hidden ids while
    /// `discovery_version` is unchanged: so after any message event that leaves it unchanged,
    /// those answers must be unchanged too (with or without a turn list, with reservations,
    /// with every kind of projection).
    #[test]
    fn an_unchanged_discovery_version_means_unchanged_answers(
        turn_list in prop::option::of(prop::collection::vec((any::<bool>(), any::<bool>(), any::<bool>()), 0..4)),
        steps in prop::collection::vec(
            (0u8..3, 0usize..8, 0u8..5, 0u8..4, 0u8..3, 0u8..3, prop::option::of(0u8..3), 0u32..60, prop::option::of(0u8..3)),
            1..40,
        ),
    ) {
        let mut store = Store::new();
        let session: Session = Session {
            id: "s".into(),
            task_id: Some(TASK.into()),
            state: Some(SessionState::Running),
            is_primary: true,
            pending_action: None,
            pending_action_revision: None,
            updated_at: None,
        };
        store.apply_session_list(TASK, vec![session]).unwrap();
        if let Some(list) = &turn_list {
            let turns = list
                .iter()
                .enumerate()
                .map(|(i, (open, reserved, attempted))| Turn {
                    id: format!("t{i}"),
                    completed: !open,
                    started_at: ts(u32::try_from(i).unwrap() * 7),
                    created_at: ts(u32::try_from(i).unwrap() * 7),
                    updated_at: None,
                    flags: TurnFlags {
                        lifecycle_only: false,
                        prompt_dispatch_pending: *reserved,
                        prompt_dispatch_attempted: *attempted,
                    },
                })
                .collect();
            store.apply_turn_list("s", turns);
        }
        for (n, (kind, id, turn, typ, status, pending, action, created, total)) in steps.into_iter().enumerate() {
            let event = MessageEvent {
                session_id: "s".into(),
                task_id: Some(TASK.into()),
                message: Message {
                    id: format!("m{id}"),
                    turn_id: (turn < 4).then(|| format!("t{turn}")),
                    kind: match typ {
                        0 => MessageKind::ClarificationRequest,
                        1 => MessageKind::PermissionRequest,
                        _ => MessageKind::Other,
                    },
                    status: match status {
                        0 => RequestStatus::Pending,
                        1 => RequestStatus::Answered,
                        _ => RequestStatus::Rejected,
                    },
                    pending_id: Some(format!("p{pending}")),
                    question_total: total.map(f64::from),
                    flags: Default::default(),
                    created_at: ts_any(created),
                    updated_at: Some(ts(1000 + u32::try_from(n).unwrap())),
                },
                projection: action.map(|a| PendingProjection {
                    action: Some(action_of(a)),
                    revision: Some(Revision { epoch: "1".into(), sequence: u64::try_from(n).unwrap() }),
                }),
            };
            let event_kind = match kind {
                0 => MessageEventKind::Added,
                1 => MessageEventKind::Updated,
                _ => MessageEventKind::Deleted,
            };
            let before = (store.discovery_version("s"), discovery_answers(&store));
            store.apply_message_event(event_kind, &event);
            let after = (store.discovery_version("s"), discovery_answers(&store));
            if before.0 == after.0 {
                prop_assert_eq!(&before.1, &after.1, "step {}: {:?} {:?}", n, event_kind, event);
            }
        }
    }
}
