//! The projector's narrow read (SPEC §2, §4): [`load_pending_snapshots`] reads the session, its
//! turns, which turns messages reference and the current turn's request rows, and the rule it
//! hands them to answers as [`session_pending_action`] does over the whole transcript. Property
//! test on random sessions written through storage: every state (terminal and unknown ones
//! included), lifecycle turns and reservations, messages with and without turn ids (empty, dangling,
//! another session's turn), every request kind and status, `created_at` ties.
//!
//! `PROPTEST_CASES` sets the number of cases (default 512 on SQLite; the PostgreSQL variant, which
//! needs `TASK_PROJECTION_TEST_PG_URL` and creates a database per case, runs a quarter of them).
//!
//! [`load_pending_snapshots`]: task_projection_server::projection::load_pending_snapshots
//! [`session_pending_action`]: task_projection::rules::pending::session_pending_action

#[path = "server_support/mod.rs"]
mod server_support;

use std::collections::BTreeMap;
use std::sync::Mutex;

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestError, TestRunner};
use serde_json::{json, Map, Value};
use server_support::Kind;
use task_projection::rules::model::{MessageKind, MessageRecord};
use task_projection::rules::respond::observe_bundle;
use task_projection_server::projection::{
    load_bundle_snapshot, load_pending_snapshot, load_pending_snapshots, load_snapshot, Projector,
};
use task_projection_server::revision::RevisionClock;
use task_projection_server::storage::{
    MessageRow, NewMessage, NewSession, NewTask, NewTurn, Storage,
};
use task_projection_server::Db;

const TASK: &str = "task-1";

/// Every SPEC state, plus one this version does not know.
const STATES: [&str; 9] = [
    "CREATED",
    "STARTING",
    "RUNNING",
    "IDLE",
    "WAITING_FOR_INPUT",
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "PAUSED",
];

/// Few instants, so that ties are common: `…:01Z` and `…:01.000000000Z` are the same instant in
/// two spellings, `+00:00` is another suffix.
const TIMES: [&str; 5] = [
    "2026-11-29T11:59:59.5Z",
    "2026-11-29T12:00:00Z",
    "2026-11-29T12:00:01Z",
    "2026-11-29T12:00:01.000000000Z",
    "2026-11-29T12:00:02+00:00",
];

/// The request kinds, other types, and near misses the rules read as ordinary.
const TYPES: [&str; 6] = [
    "clarification_request",
    "permission_request",
    "message",
    "tool_call",
    "",
    "Permission_Request",
];

/// `None`: no `status` key.
const STATUSES: [Option<&str>; 9] = [
    None,
    Some(""),
    Some("pending"),
    Some("answered"),
    Some("approved"),
    Some("rejected"),
    Some("expired"),
    Some("cancelled"),
    Some("weird"),
];

/// The bundles rows are spread over.
const BUNDLES: usize = 4;

fn bundle_id(bundle: usize) -> String {
    format!("p{bundle}")
}

#[derive(Clone, Debug)]
struct TurnSpec {
    session: usize,
    started: usize,
    created: usize,
    completed: Option<usize>,
    metadata: Value,
}

#[derive(Clone, Debug)]
enum TurnRef {
    None,
    /// `turn_id: ""` (no turn, to the decoder).
    Empty,
    /// A turn of the world, of any session.
    Turn(usize),
    /// A turn that does not exist.
    Dangling,
}

#[derive(Clone, Debug)]
struct MessageSpec {
    /// The message's session when it names no turn of the world, or `foreign` is set; else its
    /// turn's session.
    session: usize,
    foreign: bool,
    turn: TurnRef,
    message_type: usize,
    status: usize,
    created: usize,
    /// The bundle (`pending_id`) of a row with a status: few, so bundles have several rows,
    /// across turns and sessions.
    bundle: usize,
}

#[derive(Clone, Debug)]
struct World {
    states: Vec<usize>,
    /// Turn 0's id is `""` (a turn id the decoder accepts; a message's `""` turn id is none).
    empty_turn_id: bool,
    turns: Vec<TurnSpec>,
    messages: Vec<MessageSpec>,
}

impl World {
    fn session_id(index: usize) -> String {
        format!("s{index}")
    }

    fn turn_id(&self, index: usize) -> String {
        if index == 0 && self.empty_turn_id {
            String::new()
        } else {
            format!("t{index}")
        }
    }
}

/// A turn flag: absent, or one of the spellings the decoder reads (true, false, `"1"`, 1, 0).
fn flag(weight_true: u32) -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        4 => Just(None),
        weight_true => Just(Some(json!(true))),
        2 => Just(Some(json!(false))),
        1 => Just(Some(json!("1"))),
        1 => Just(Some(json!(1))),
        1 => Just(Some(json!(0))),
    ]
}

fn turn_spec(sessions: usize) -> impl Strategy<Value = TurnSpec> {
    // Mostly instants with a packed form (the last spelling has none: such a session is read
    // whole, every other one through a window of its turns when it has enough of them).
    let time = || prop_oneof![12 => 0..TIMES.len() - 1, 1 => Just(TIMES.len() - 1)];
    (
        0..sessions,
        time(),
        time(),
        prop::option::weighted(0.85, 0..TIMES.len()),
        flag(1),
        flag(2),
        flag(2),
    )
        .prop_map(
            |(session, started, created, completed, lifecycle, pending, attempted)| {
                let mut metadata = Map::new();
                for (key, value) in [
                    ("lifecycle_only", lifecycle),
                    ("prompt_dispatch_pending", pending),
                    ("prompt_dispatch_attempted", attempted),
                ] {
                    if let Some(value) = value {
                        metadata.insert(key.into(), value);
                    }
                }
                TurnSpec {
                    session,
                    started,
                    created,
                    completed,
                    metadata: Value::Object(metadata),
                }
            },
        )
}

fn message_spec(sessions: usize, turns: usize) -> impl Strategy<Value = MessageSpec> {
    let turn = if turns == 0 {
        prop_oneof![
            Just(TurnRef::None),
            Just(TurnRef::Empty),
            Just(TurnRef::Dangling)
        ]
        .boxed()
    } else {
        prop_oneof![
            2 => Just(TurnRef::None),
            1 => Just(TurnRef::Empty),
            8 => (0..turns).prop_map(TurnRef::Turn),
            1 => Just(TurnRef::Dangling),
        ]
        .boxed()
    };
    let message_type = prop_oneof![
        3 => Just(0usize),
        3 => Just(1usize),
        4 => 2..TYPES.len(),
    ];
    (
        0..sessions,
        prop::bool::weighted(0.15),
        turn,
        message_type,
        0..STATUSES.len(),
        0..TIMES.len(),
        0..BUNDLES,
    )
        .prop_map(
            |(session, foreign, turn, message_type, status, created, bundle)| MessageSpec {
                session,
                foreign,
                turn,
                message_type,
                status,
                created,
                bundle,
            },
        )
}

fn world() -> impl Strategy<Value = World> {
    // Input-capable states are weighted up: they are the ones whose messages are read.
    let state = prop_oneof![
        3 => Just(2usize),
        3 => Just(4usize),
        4 => 0..STATES.len(),
    ];
    (
        prop::collection::vec(state, 1..=3),
        0..16usize,
        any::<bool>(),
    )
        .prop_flat_map(|(states, turns, empty_turn_id)| {
            let sessions = states.len();
            (
                Just(states),
                Just(empty_turn_id),
                prop::collection::vec(turn_spec(sessions), turns),
            )
        })
        .prop_flat_map(|(states, empty_turn_id, turns)| {
            let sessions = states.len();
            let count = turns.len();
            (
                Just(states),
                Just(empty_turn_id),
                Just(turns),
                prop::collection::vec(message_spec(sessions, count), 0..30),
            )
        })
        .prop_map(|(states, empty_turn_id, turns, messages)| World {
            states,
            empty_turn_id,
            turns,
            messages,
        })
}

/// The task every session belongs to.
async fn insert_task(storage: &Storage) {
    storage
        .insert_task(&NewTask {
            id: TASK,
            workspace_id: "ws-1",
            created_at: TIMES[1],
        })
        .await
        .expect("task");
}

/// Writes the world through storage: sessions, turns, then messages in the generated order
/// (their insertion order, `seq`).
async fn write(storage: &Storage, world: &World) {
    insert_task(storage).await;
    for (index, &state) in world.states.iter().enumerate() {
        storage
            .insert_session(&NewSession {
                id: &World::session_id(index),
                task_id: TASK,
                state: STATES[state],
                agent_profile_id: "",
                is_primary: index == 0,
                started_at: TIMES[1],
                updated_at: TIMES[1],
            })
            .await
            .expect("session");
    }
    for (index, turn) in world.turns.iter().enumerate() {
        storage
            .insert_turn(&NewTurn {
                id: &world.turn_id(index),
                session_id: &World::session_id(turn.session),
                task_id: TASK,
                started_at: TIMES[turn.started],
                created_at: TIMES[turn.created],
                completed_at: turn.completed.map(|c| TIMES[c]),
                metadata: turn.metadata.clone(),
            })
            .await
            .expect("turn");
    }
    for (index, message) in world.messages.iter().enumerate() {
        let turn_id = match message.turn {
            TurnRef::None => None,
            TurnRef::Empty => Some(String::new()),
            TurnRef::Turn(turn) => Some(world.turn_id(turn)),
            TurnRef::Dangling => Some("ghost".to_owned()),
        };
        let session = match message.turn {
            TurnRef::Turn(turn) if !message.foreign => world.turns[turn].session,
            _ => message.session,
        };
        let metadata = match STATUSES[message.status] {
            None => json!({}),
            Some(status) => json!({ "status": status, "pending_id": bundle_id(message.bundle) }),
        };
        storage
            .insert_message(&NewMessage {
                id: &format!("m{index}"),
                session_id: &World::session_id(session),
                task_id: TASK,
                turn_id: turn_id.as_deref(),
                author_type: "agent",
                message_type: TYPES[message.message_type],
                content: "…",
                metadata,
                created_at: TIMES[message.created],
            })
            .await
            .expect("message");
    }
}

/// What the runs saw: each answer (reason and action), and how many message rows the narrow
/// read left unread.
#[derive(Debug, Default)]
struct Seen {
    answers: BTreeMap<String, usize>,
    /// Each bundle placement (turn, rows up to 3) seen.
    bundles: BTreeMap<String, usize>,
    cases: usize,
    sessions: usize,
    rows_in_transcripts: usize,
    rows_read: usize,
    /// Sessions whose narrow read took a window of their turns (not all of them).
    windowed: usize,
}

/// One case: for every session the narrow answer, the projector's and the rule's over the whole
/// transcript of the same database agree.
async fn check(db: &Db, world: &World, seen: &Mutex<Seen>) -> Result<(), TestCaseError> {
    let storage = Storage::new(db.clone());
    write(&storage, world).await;
    let ids: Vec<String> = (0..world.states.len()).map(World::session_id).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let projector = Projector::new(
        storage.clone(),
        RevisionClock::start(db.clone()).await.expect("clock"),
    );
    let projections = projector.project_sessions(&ids).await.expect("project");
    let narrow_all = load_pending_snapshots(&storage, &ids)
        .await
        .expect("narrow");
    prop_assert_eq!(projections.len(), ids.len());
    prop_assert_eq!(narrow_all.len(), ids.len());
    // The task's action (on PostgreSQL one statement over the task's sessions when their windows
    // decide) is the rule over the task's session list.
    let listed = projector.task_sessions(TASK).await.expect("task sessions");
    prop_assert_eq!(listed.len(), ids.len());
    let task_action = projector.task_action(TASK).await.expect("task action");
    prop_assert_eq!(
        task_action,
        task_projection::rules::pending::task_pending_action(&listed)
    );
    prop_assert!(projector
        .summary_with_action(TASK)
        .await
        .expect("summary")
        .is_none());
    for (index, id) in ids.iter().enumerate() {
        let full = load_snapshot(&storage, id).await.expect("full snapshot");
        let narrow = load_pending_snapshot(&storage, id)
            .await
            .expect("narrow snapshot");
        let expected = full.pending_action();
        prop_assert_eq!(narrow.pending_action(), expected, "session {}", id);
        prop_assert_eq!(
            narrow_all.get(index).map(|s| s.pending_action()),
            Some(expected)
        );
        let projection = projections.get(index).expect("projection");
        prop_assert_eq!(&projection.session.id, id);
        prop_assert_eq!(
            (projection.pending_action, projection.reason),
            expected,
            "projector, session {}",
            id
        );
        // The narrow read is what the rule reads: the turns it needs (all, or a window that
        // decides as all would), which of them the transcript references, and request rows only.
        prop_assert!(narrow
            .turns
            .iter()
            .all(|t| full.turns.iter().any(|f| f == t)));
        let mut referenced: Vec<String> = narrow
            .turns
            .iter()
            .filter(|t| full.messages.iter().any(|m| m.turn_id() == Some(&t.id)))
            .map(|t| t.id.clone())
            .collect();
        referenced.sort();
        prop_assert_eq!(&narrow.referenced, &referenced);
        prop_assert!(narrow
            .requests
            .iter()
            .all(|m| m.kind() != MessageKind::Other));
        // Respond's narrow read places every bundle as the rule does over the transcript.
        for bundle in (0..BUNDLES).map(bundle_id) {
            let whole = observe_bundle(
                Some(full.session.state()),
                &full.turns,
                &full.messages,
                &bundle,
            );
            let read = load_bundle_snapshot(&storage, id, &bundle)
                .await
                .expect("bundle snapshot");
            let placed = read.observe(&bundle);
            let ids = |rows: &[usize], of: &[MessageRow]| -> Vec<String> {
                rows.iter()
                    .filter_map(|&i| of.get(i))
                    .map(|m| m.id().to_owned())
                    .collect()
            };
            prop_assert_eq!(placed.turn, whole.turn, "bundle {} of {}", bundle, id);
            prop_assert_eq!(
                ids(&placed.rows, &read.rows),
                ids(&whole.rows, &full.messages)
            );
            prop_assert_eq!(
                ids(&placed.pending_rows, &read.rows),
                ids(&whole.pending_rows, &full.messages)
            );
            let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
            *seen
                .bundles
                .entry(format!("{:?} {} rows", whole.turn, whole.rows.len().min(3)))
                .or_default() += 1;
        }
        let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
        *seen
            .answers
            .entry(format!("{:?} {:?}", expected.1, expected.0))
            .or_default() += 1;
        seen.sessions += 1;
        seen.rows_in_transcripts += full.messages.len();
        seen.rows_read += narrow.requests.len();
        seen.windowed += usize::from(narrow.turns.len() < full.turns.len());
    }
    Ok(())
}

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

fn run(cases: u32, backend: Kind) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/server_projection.proptest-regressions",
        ))),
        ..Config::default()
    });
    let seen = Mutex::new(Seen::default());
    let outcome = runner.run(&world(), |world| {
        runtime.block_on(async {
            let db = match backend {
                Kind::Sqlite => Db::memory().await.expect("sqlite in memory"),
                Kind::Postgres => server_support::fresh(Kind::Postgres)
                    .await
                    .expect("postgres"),
            };
            let result = check(&db, &world, &seen).await;
            db.close().await;
            result
        })?;
        seen.lock().unwrap_or_else(|e| e.into_inner()).cases += 1;
        Ok(())
    });
    match outcome {
        Ok(()) => {}
        Err(TestError::Fail(why, world)) => panic!("{why}\nminimal failing world: {world:#?}"),
        Err(TestError::Abort(why)) => panic!("aborted: {why}"),
    }
    let seen = seen.into_inner().unwrap_or_else(|e| e.into_inner());
    eprintln!(
        "{backend:?}: {} cases passed ({} sessions, {} read through a window of their turns); \
         message rows: {} in the transcripts, {} read by the narrow projection",
        seen.cases, seen.sessions, seen.windowed, seen.rows_in_transcripts, seen.rows_read
    );
    for (answer, count) in &seen.answers {
        eprintln!("  {count:>6}  {answer}");
    }
    eprintln!("bundle placements (respond's narrow read):");
    for (placement, count) in &seen.bundles {
        eprintln!("  {count:>6}  {placement}");
    }
    // The run reached every answer a server session can have (its history is always loaded).
    if cases >= 256 {
        assert!(
            seen.windowed > cases as usize / 32,
            "windows: {}",
            seen.windowed
        );
        for reason in [
            "TerminalSession None",
            "SessionNotInputCapable None",
            "NoCurrentTurn None",
            "PendingClarificationInCurrentTurn Some(Clarification)",
            "LatestPermissionPending Some(Permission)",
            "NothingPendingInCurrentTurn None",
        ] {
            assert!(
                seen.answers.contains_key(reason),
                "no case reached {reason}"
            );
        }
        assert!(seen.rows_read < seen.rows_in_transcripts);
        // Respond's read met every placement, with bundles of one row and of several.
        for placement in [
            "Current 1 rows",
            "Current 2 rows",
            "Superseded 1 rows",
            "Superseded 2 rows",
            "Orphaned 2 rows",
            "SessionQuarantined 1 rows",
        ] {
            assert!(
                seen.bundles.contains_key(placement),
                "no case reached bundle placement {placement}"
            );
        }
    }
}

/// Whether the PostgreSQL tests run (`TASK_PROJECTION_TEST_PG_URL` set); says so when not.
fn postgres_configured() -> bool {
    let set = std::env::var(server_support::PG_ENV)
        .ok()
        .is_some_and(|u| !u.is_empty());
    if !set {
        eprintln!("skipped: {} is not set", server_support::PG_ENV);
    }
    set
}

#[test]
fn narrow_projection_equals_the_rule_over_the_transcript_sqlite() {
    run(cases(512), Kind::Sqlite);
}

#[test]
fn narrow_projection_equals_the_rule_over_the_transcript_postgres() {
    if !postgres_configured() {
        return;
    }
    run(cases(512) / 4, Kind::Postgres);
}

/// The two ways a window of the newest turns could choose wrongly, written out: the window's
/// completed turns are all lifecycle records (the current turn is older), and the newest turns
/// tie on their timestamps beyond the window (the greatest `id` decides). Both read every turn,
/// and answer what the whole transcript answers.
#[test]
fn a_window_that_cannot_decide_reads_every_turn() {
    undecided_windows(Kind::Sqlite);
}

/// [`a_window_that_cannot_decide_reads_every_turn`] on PostgreSQL, where a session whose window
/// decides is one joined statement.
#[test]
fn a_window_that_cannot_decide_reads_every_turn_postgres() {
    if !postgres_configured() {
        return;
    }
    undecided_windows(Kind::Postgres);
}

fn undecided_windows(backend: Kind) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        for tie in [false, true] {
            let db = match backend {
                Kind::Sqlite => Db::memory().await.expect("sqlite in memory"),
                Kind::Postgres => server_support::fresh(Kind::Postgres)
                    .await
                    .expect("postgres"),
            };
            let storage = Storage::new(db.clone());
            insert_task(&storage).await;
            storage
                .insert_session(&NewSession {
                    id: "s0",
                    task_id: TASK,
                    state: "RUNNING",
                    agent_profile_id: "",
                    is_primary: true,
                    started_at: TIMES[1],
                    updated_at: TIMES[1],
                })
                .await
                .expect("session");
            // Turn "t9" holds the question. Without a tie it is the oldest of ten turns, the nine
            // newer ones lifecycle records; with one, all ten start at one instant and "t9" has
            // the greatest id.
            for i in 0..10 {
                let time = |minute: usize| format!("2026-11-29T12:{minute:02}:00Z");
                let started = if tie { time(0) } else { time(10 - i) };
                let metadata = if !tie && i != 9 {
                    json!({ "lifecycle_only": true })
                } else {
                    json!({})
                };
                let id = format!("t{i}");
                storage
                    .insert_turn(&NewTurn {
                        id: &id,
                        session_id: "s0",
                        task_id: TASK,
                        started_at: &started,
                        created_at: &started,
                        completed_at: Some("2026-11-29T13:00:00Z"),
                        metadata,
                    })
                    .await
                    .expect("turn");
            }
            storage
                .insert_message(&NewMessage {
                    id: "q",
                    session_id: "s0",
                    task_id: TASK,
                    turn_id: Some("t9"),
                    author_type: "agent",
                    message_type: "clarification_request",
                    content: "…",
                    metadata: json!({ "status": "pending", "pending_id": "p1" }),
                    created_at: "2026-11-29T12:30:00Z",
                })
                .await
                .expect("message");
            let full = load_snapshot(&storage, "s0").await.expect("full");
            let narrow = load_pending_snapshot(&storage, "s0").await.expect("narrow");
            assert_eq!(narrow.pending_action(), full.pending_action(), "tie: {tie}");
            assert_eq!(
                narrow.pending_action().0,
                Some(task_projection::rules::model::PendingAction::Clarification)
            );
            assert_eq!(narrow.turns.len(), 10, "every turn read (tie: {tie})");
            // The task's action too (PostgreSQL's one-statement task read falls back).
            let projector = Projector::new(
                storage.clone(),
                RevisionClock::start(db.clone()).await.expect("clock"),
            );
            assert_eq!(
                projector.task_action(TASK).await.expect("task action"),
                Some(task_projection::rules::model::PendingAction::Clarification)
            );
            let bundle = load_bundle_snapshot(&storage, "s0", "p1")
                .await
                .expect("bundle");
            assert_eq!(
                bundle.observe("p1").turn,
                observe_bundle(
                    Some(full.session.state()),
                    &full.turns,
                    &full.messages,
                    "p1"
                )
                .turn
            );
        }
    });
}
