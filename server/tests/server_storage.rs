//! Storage, revisions (SPEC §5) and the authoritative projection (SPEC §2, §4) on SQLite and
//! PostgreSQL.

#[path = "server_support/mod.rs"]
mod server_support;

use serde_json::json;
use server_support::{fresh_url, t, Fx, Kind};
use task_projection::rules::model::{PendingAction, Revision};
use task_projection::rules::revision::compare_revisions;
use task_projection_server::events::{BroadcastSink, SESSION_MESSAGE_ADDED};
use task_projection_server::projection::{MessageEventKind, Projector};
use task_projection_server::revision::{allocate_epoch, stored_epoch, RevisionClock};
use task_projection_server::storage::{self, StateChange, Storage};
use task_projection_server::{Db, ServerError};

async fn projector(db: &Db) -> Projector {
    let clock = RevisionClock::start(db.clone()).await.expect("clock");
    Projector::new(Storage::new(db.clone()), clock)
}

fn newer(a: &Revision, b: &Revision) -> bool {
    compare_revisions(a, b) == Ok(std::cmp::Ordering::Greater)
}

// ---- storage ----------------------------------------------------------------------------------

async fn rows_round_trip(db: Db, _: Kind) {
    let fx = Fx::new(&db);
    fx.task("task-1").await;
    fx.session("s1", "task-1", "RUNNING").await;
    fx.turn(
        "t1",
        "s1",
        "12:00",
        None,
        json!({ "lifecycle_only": "1", "extra": [1, 2] }),
    )
    .await;
    fx.message(
        "m1",
        "s1",
        Some("t1"),
        "clarification_request",
        json!({ "pending_id": "p1", "question_total": 2, "status": "" }),
        "12:00:01",
    )
    .await;
    fx.message("m2", "s1", None, "message", json!({}), "12:00:02")
        .await;

    let s = &fx.storage;
    let task = s.task("task-1").await.unwrap();
    assert_eq!(task.workspace_id, "ws-1");
    assert!(!task.archived);
    let session = s.session("s1").await.unwrap();
    assert_eq!(session.state_text, "RUNNING");
    assert_eq!(session.version, 0);

    use task_projection::rules::model::{MessageKind, MessageRecord, TurnRecord};
    let turns = s.turns_of_session("s1").await.unwrap();
    assert_eq!(turns.len(), 1);
    assert!(turns[0].flags().lifecycle_only, "\"1\" is a set flag");
    assert!(turns[0].is_open());
    assert_eq!(
        turns[0].metadata["extra"],
        json!([1, 2]),
        "metadata kept verbatim"
    );
    let messages = s.messages_of_session("s1").await.unwrap();
    assert_eq!(
        messages.iter().map(|m| m.id()).collect::<Vec<_>>(),
        ["m1", "m2"]
    );
    assert!(messages[0].seq < messages[1].seq, "insertion order");
    assert_eq!(messages[0].kind(), MessageKind::ClarificationRequest);
    assert!(messages[0].status().is_pending(), "empty status is pending");
    assert_eq!(messages[0].pending_id(), Some("p1"));
    assert_eq!(messages[0].question_total(), Some(2.0));
    assert_eq!(messages[1].turn_id(), None);

    // Compare-and-set on the session version.
    let change = StateChange {
        state: "COMPLETED",
        updated_at: &t("13:00"),
        completed_at: Some(&t("13:00")),
        reason: None,
    };
    assert!(s.cas_session_state("s1", 0, &change).await.unwrap());
    assert!(
        !s.cas_session_state("s1", 0, &change).await.unwrap(),
        "stale version loses"
    );
    let session = s.session("s1").await.unwrap();
    assert_eq!(
        (session.state_text.as_str(), session.version),
        ("COMPLETED", 1)
    );
    assert_eq!(session.completed_at, Some(t("13:00")));

    // Message metadata compare-and-set (on the version of the row as read; the row written
    // comes back), delete.
    let read = s.message("m1").await.unwrap();
    assert_eq!(read.version, 0);
    let written = s
        .cas_message_metadata(
            &read,
            &json!({ "pending_id": "p1", "status": "answered" }),
            &t("13:00"),
        )
        .await
        .unwrap()
        .expect("the compare-and-set wins on the version read");
    assert_eq!(written.version, 1);
    assert!(!written.status().is_pending());
    assert_eq!(written, s.message("m1").await.unwrap());
    assert!(s
        .cas_message_metadata(&read, &json!({}), &t("13:00"))
        .await
        .unwrap()
        .is_none());
    assert!(!s.message("m1").await.unwrap().status().is_pending());
    assert!(s.delete_message("m2").await.unwrap());
    assert!(matches!(
        s.message("m2").await,
        Err(ServerError::NotFound { .. })
    ));

    // Counters are atomic and monotonic.
    let a = s.next_counter("x").await.unwrap();
    let b = s.next_counter("x").await.unwrap();
    assert_eq!((a, b), (1, 2));
}
both!(rows_round_trip);

async fn migrations_are_idempotent(db: Db, _: Kind) {
    db.migrate().await.unwrap();
    db.migrate().await.unwrap();
    let fx = Fx::new(&db);
    fx.task("task-1").await;
    assert!(fx.storage.task("task-1").await.is_ok());
}
both!(migrations_are_idempotent);

/// The previous build's SQLite database (tests/fixtures/sqlx-bookkeeping.db: its
/// `_sqlx_migrations` table, epoch 3) serves on once `storage::connect` has migrated it in place:
/// its tasks with their answers, and revisions newer than every one it handed out.
#[tokio::test]
async fn a_previous_builds_sqlite_database_serves_on() {
    let url = fresh_url(Kind::Sqlite).await.unwrap();
    let path = url
        .trim_start_matches("sqlite://")
        .trim_end_matches("?mode=rwc");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sqlx-bookkeeping.db"
    );
    std::fs::copy(fixture, path).unwrap();
    let db = storage::connect(&url).await.unwrap();
    assert_eq!(stored_epoch(&db).await.unwrap().as_deref(), Some("3"));
    let clock = RevisionClock::start(db.clone()).await.unwrap();
    assert_eq!(clock.started_epoch(), "4");
    let revision = clock.reserve().await.unwrap();
    let last = Revision {
        epoch: "3".into(),
        sequence: 10,
    };
    assert!(newer(&revision, &last), "{revision:?} after {last:?}");
    let p = Projector::new(Storage::new(db.clone()), clock);
    assert_eq!(p.storage().task_count().await.unwrap(), 4);
    for (title, action) in [
        ("Refactor the billing module", None),
        (
            "Upgrade the CI pipeline",
            Some(PendingAction::Clarification),
        ),
        (
            "Deploy preview environment",
            Some(PendingAction::Permission),
        ),
        (
            "Made by the previous build",
            Some(PendingAction::Clarification),
        ),
    ] {
        let id: String =
            task_projection_server::db::query_scalar("SELECT id FROM tasks WHERE title = $1")
                .bind(title)
                .fetch_one(&db)
                .await
                .unwrap();
        assert_eq!(p.task_action(&id).await.unwrap(), action, "{title}");
    }
}

async fn corrupt_metadata_is_an_error(db: Db, _: Kind) {
    let fx = Fx::new(&db);
    fx.task("task-1").await;
    fx.session("s1", "task-1", "RUNNING").await;
    fx.turn("t1", "s1", "12:00", None, json!({})).await;
    task_projection_server::db::query("INSERT INTO messages (id, seq, session_id, task_id, turn_id, author_type, message_type, metadata, created_at, updated_at) \
                 VALUES ('bad', 99, 's1', 'task-1', 't1', 'agent', 'clarification_request', 'not json', $1, $1)")
        .bind(t("12:00"))
        .execute(&db).await.unwrap();
    let p = projector(&db).await;
    // A projection failure is an error, never a falsely clean answer.
    assert!(matches!(
        p.project_sessions(&["s1"]).await,
        Err(ServerError::CorruptRow { .. })
    ));
    assert!(p.task_action("task-1").await.is_err());
    // The message event omits the projection keys (keep what you have).
    let event = p
        .message_event(
            MessageEventKind::Added,
            "s1",
            json!({ "message_id": "bad" }),
        )
        .await;
    assert!(event.payload.get("pending_action").is_none());
    assert!(event.payload.get("pending_action_revision").is_none());
}
both!(corrupt_metadata_is_an_error);

// ---- revisions (SPEC §5) ------------------------------------------------------------------------

async fn scenario_55_epoch_allocation(db: Db, _: Kind) {
    assert_eq!(stored_epoch(&db).await.unwrap(), None);
    assert_eq!(allocate_epoch(&db).await.unwrap(), "1");
    assert_eq!(allocate_epoch(&db).await.unwrap(), "2");
    for corrupt in ["007", "x", "", "0", "-1", " 3"] {
        task_projection_server::db::query(
            "UPDATE meta SET value = $1 WHERE key = 'projection_epoch'",
        )
        .bind(corrupt)
        .execute(&db)
        .await
        .unwrap();
        match RevisionClock::start(db.clone()).await {
            Err(ServerError::CorruptEpoch { stored }) => assert_eq!(stored, corrupt),
            other => panic!("{corrupt:?}: expected a startup error, got {other:?}"),
        }
        assert_eq!(
            stored_epoch(&db).await.unwrap().as_deref(),
            Some(corrupt),
            "value untouched"
        );
    }
    // Arbitrary length: no fixed-width overflow.
    task_projection_server::db::query(
        "UPDATE meta SET value = '18446744073709551615' WHERE key = 'projection_epoch'",
    )
    .execute(&db)
    .await
    .unwrap();
    assert_eq!(allocate_epoch(&db).await.unwrap(), "18446744073709551616");
}
both!(scenario_55_epoch_allocation);

async fn sequence_reserved_in_order(db: Db, _: Kind) {
    let clock = RevisionClock::start(db.clone()).await.unwrap();
    assert_eq!(clock.started_epoch(), "1");
    let a = clock.reserve().await.unwrap();
    let b = clock.reserve().await.unwrap();
    assert_eq!(
        a,
        Revision {
            epoch: "1".into(),
            sequence: 1
        }
    );
    assert!(newer(&b, &a));
}
both!(sequence_reserved_in_order);

/// The epoch strictly increases across 20 restarts on the same database.
async fn epoch_increases_across_20_restarts(kind: Kind) {
    let Some(url) = fresh_url(kind).await else {
        eprintln!("skipped: PostgreSQL URL not set");
        return;
    };
    let mut last: Option<Revision> = None;
    for restart in 1..=20u64 {
        let db = storage::connect(&url).await.unwrap();
        let clock = RevisionClock::start(db.clone()).await.unwrap();
        assert_eq!(clock.started_epoch(), restart.to_string());
        let revision = clock.reserve().await.unwrap();
        if let Some(last) = &last {
            assert!(newer(&revision, last), "{revision:?} after {last:?}");
        }
        last = Some(revision);
        db.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn epoch_increases_across_20_restarts_sqlite_file() {
    epoch_increases_across_20_restarts(Kind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn epoch_increases_across_20_restarts_postgres() {
    epoch_increases_across_20_restarts(Kind::Postgres).await;
}

/// Two instances on one database: every revision either hands out is ordered after every
/// revision handed out before it, by either instance, also across a restart of one of them.
async fn two_instances_totally_ordered(kind: Kind) {
    let Some(url) = fresh_url(kind).await else {
        eprintln!("skipped: PostgreSQL URL not set");
        return;
    };
    let db_a = storage::connect(&url).await.unwrap();
    let db_b = storage::connect(&url).await.unwrap();
    let a = RevisionClock::start(db_a.clone()).await.unwrap();
    let b = RevisionClock::start(db_b.clone()).await.unwrap();
    assert!(b.started_epoch() > a.started_epoch());

    // Sequential interleaving: strictly increasing in issue order.
    let mut issued = Vec::new();
    for i in 0..10 {
        let clock = if i % 2 == 0 { &a } else { &b };
        issued.push(clock.reserve().await.unwrap());
    }
    // Instance B restarts: A's next revisions follow B's new epoch, never fall behind it.
    db_b.close().await;
    let db_b = storage::connect(&url).await.unwrap();
    let b = RevisionClock::start(db_b.clone()).await.unwrap();
    issued.push(b.reserve().await.unwrap());
    issued.push(a.reserve().await.unwrap());
    issued.push(b.reserve().await.unwrap());
    for pair in issued.windows(2) {
        assert!(
            newer(&pair[1], &pair[0]),
            "{:?} then {:?}",
            pair[0],
            pair[1]
        );
    }
    assert_eq!(
        issued[11].epoch,
        b.started_epoch(),
        "A serves the restarted epoch"
    );

    // Concurrent reservations from both instances: all distinct (a total order).
    let mut handles = Vec::new();
    for i in 0..40 {
        let clock = if i % 2 == 0 { a.clone() } else { b.clone() };
        handles.push(tokio::spawn(async move { clock.reserve().await.unwrap() }));
    }
    let mut all = Vec::new();
    for handle in handles {
        all.push(handle.await.unwrap());
    }
    all.sort_by(|x, y| compare_revisions(x, y).unwrap());
    for pair in all.windows(2) {
        assert!(
            newer(&pair[1], &pair[0]),
            "duplicate revision {:?}",
            pair[0]
        );
    }
    assert!(newer(&all[0], issued.last().unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_totally_ordered_sqlite_file() {
    two_instances_totally_ordered(Kind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_totally_ordered_postgres() {
    two_instances_totally_ordered(Kind::Postgres).await;
}

/// Real-time order under contention: two instances reserve from four tasks while one of them
/// restarts five times. For every two reservations where one returned before the other was
/// asked for, the later one is newer (SPEC §5: reserved before the read; a restart raises the
/// epoch) — whichever instance made them, whatever the epochs in between.
async fn reservations_follow_real_time(kind: Kind) {
    use std::time::Instant;
    let Some(url) = fresh_url(kind).await else {
        eprintln!("skipped: PostgreSQL URL not set");
        return;
    };
    let db_a = storage::connect(&url).await.unwrap();
    let db_b = storage::connect(&url).await.unwrap();
    let a = RevisionClock::start(db_a.clone()).await.unwrap();
    let b = RevisionClock::start(db_b.clone()).await.unwrap();
    // Each worker reserves at least 150 times and until the restarts are over.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut handles = Vec::new();
    for worker in 0..4 {
        let clock = if worker % 2 == 0 {
            a.clone()
        } else {
            b.clone()
        };
        let done = done.clone();
        handles.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            while seen.len() < 150 || !done.load(std::sync::atomic::Ordering::SeqCst) {
                let asked = Instant::now();
                let revision = clock.reserve().await.unwrap();
                seen.push((asked, Instant::now(), revision));
            }
            seen
        }));
    }
    let restarts = {
        let db_b = db_b.clone();
        let done = done.clone();
        tokio::spawn(async move {
            for _ in 0..5 {
                tokio::time::sleep(std::time::Duration::from_millis(15)).await;
                RevisionClock::start(db_b.clone()).await.unwrap();
            }
            tokio::time::sleep(std::time::Duration::from_millis(15)).await;
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        })
    };
    let mut all = Vec::new();
    for handle in handles {
        all.extend(handle.await.unwrap());
    }
    restarts.await.unwrap();
    let epochs: std::collections::BTreeSet<&str> =
        all.iter().map(|(_, _, r)| r.epoch.as_str()).collect();
    assert!(
        epochs.len() > 1,
        "the restarts landed among the reservations: {epochs:?}"
    );
    let mut ordered_pairs = 0u64;
    for (_, returned, first) in &all {
        for (asked, _, second) in &all {
            if returned < asked {
                ordered_pairs += 1;
                assert!(
                    newer(second, first),
                    "{second:?} asked after {first:?} returned"
                );
            }
        }
    }
    assert!(ordered_pairs > 100_000, "{ordered_pairs} ordered pairs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reservations_follow_real_time_sqlite_file() {
    reservations_follow_real_time(Kind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reservations_follow_real_time_postgres() {
    reservations_follow_real_time(Kind::Postgres).await;
}

/// PostgreSQL: what the epoch records no longer matches the running server (a restart, as seen
/// from here), and the sequence is set back, as a lost WAL record would leave it.
async fn seen_as_restarted(db: &Db) {
    task_projection_server::db::query(
        "UPDATE meta SET value = '0.5' WHERE key = 'projection_epoch_server'",
    )
    .execute(db)
    .await
    .unwrap();
    task_projection_server::db::query("SELECT setval('projection_sequence', 1)")
        .execute(db)
        .await
        .unwrap();
}

/// PostgreSQL: a database restart may hand out a sequence value again, so a reservation made
/// under a server start the epoch does not know advances the epoch first (once, whichever
/// instance notices), and everything after is newer than everything before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_restart_advances_the_epoch_postgres() {
    let Some(url) = fresh_url(Kind::Postgres).await else {
        eprintln!("skipped: PostgreSQL URL not set");
        return;
    };
    let db = storage::connect(&url).await.unwrap();
    let a = RevisionClock::start(db.clone()).await.unwrap();
    let b = RevisionClock::start(db.clone()).await.unwrap();
    let before = a.reserve().await.unwrap();
    assert_eq!(before.epoch, "2");
    seen_as_restarted(&db).await;
    let (x, y) = tokio::join!(a.reserve(), b.reserve());
    let (x, y) = (x.unwrap(), y.unwrap());
    assert_eq!(
        (x.epoch.as_str(), y.epoch.as_str()),
        ("3", "3"),
        "advanced once"
    );
    assert!(newer(&x, &before) && newer(&y, &before));
    let after = b.reserve().await.unwrap();
    assert_eq!(after.epoch, "3");
    assert!(newer(&after, &x) && newer(&after, &y));
    assert_eq!(stored_epoch(&db).await.unwrap().as_deref(), Some("3"));
}

/// PostgreSQL: a restart seen by a projection's reservation advances the epoch before the
/// projection is labelled: it carries the new epoch, after everything before, and reads as
/// before; a session that does not exist is not found after its reservation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projection_after_a_database_restart_carries_the_new_epoch_postgres() {
    let Some(url) = fresh_url(Kind::Postgres).await else {
        eprintln!("skipped: PostgreSQL URL not set");
        return;
    };
    let db = storage::connect(&url).await.unwrap();
    let fx = Fx::new(&db);
    fx.task("task-1").await;
    fx.session("s1", "task-1", "WAITING_FOR_INPUT").await;
    fx.turn("t1", "s1", "12:00", None, json!({})).await;
    fx.question("q1", "s1", "t1", "p1", "pending", "12:01")
        .await;
    let p = projector(&db).await;
    let before = p.project_sessions(&["s1"]).await.unwrap().remove(0);
    assert_eq!(before.revision.epoch, "1");
    assert_eq!(before.pending_action, Some(PendingAction::Clarification));
    seen_as_restarted(&db).await;
    let after = p.project_sessions(&["s1"]).await.unwrap().remove(0);
    assert_eq!(after.revision.epoch, "2");
    assert!(newer(&after.revision, &before.revision));
    assert_eq!(after.pending_action, Some(PendingAction::Clarification));
    assert_eq!(stored_epoch(&db).await.unwrap().as_deref(), Some("2"));
    // A session that does not exist: reserved, then not found.
    assert!(matches!(
        p.project_sessions(&["nope"]).await,
        Err(ServerError::NotFound { .. })
    ));
}

// ---- authoritative projection (SPEC §2, §4) ----------------------------------------------------

async fn projection_current_turn_rules(db: Db, _: Kind) {
    let fx = Fx::new(&db);
    fx.task("task-1").await;
    // s1: a pending question in the real turn; a newer lifecycle turn is never current.
    fx.session("s1", "task-1", "WAITING_FOR_INPUT").await;
    fx.turn("real", "s1", "12:00", Some("12:05"), json!({}))
        .await;
    fx.turn(
        "life",
        "s1",
        "13:00",
        Some("13:01"),
        json!({ "lifecycle_only": true }),
    )
    .await;
    fx.question("q1", "s1", "real", "p1", "pending", "12:01")
        .await;
    // s2: an unpublished reservation is not current; once a message references it, it is.
    fx.session("s2", "task-1", "RUNNING").await;
    fx.turn("old", "s2", "12:00", Some("12:05"), json!({}))
        .await;
    fx.turn(
        "resv",
        "s2",
        "13:00",
        None,
        json!({ "prompt_dispatch_pending": true }),
    )
    .await;
    fx.question("q2", "s2", "old", "p2", "pending", "12:01")
        .await;
    // s3: terminal → clean whatever its rows say.
    fx.session("s3", "task-1", "COMPLETED").await;
    fx.turn("t3", "s3", "12:00", None, json!({})).await;
    fx.message(
        "perm3",
        "s3",
        Some("t3"),
        "permission_request",
        json!({}),
        "12:01",
    )
    .await;
    // s4: the latest permission in the current turn is pending.
    fx.session("s4", "task-1", "RUNNING").await;
    fx.turn("t4", "s4", "12:00", None, json!({})).await;
    fx.message(
        "perm4a",
        "s4",
        Some("t4"),
        "permission_request",
        json!({ "status": "approved" }),
        "12:01",
    )
    .await;
    fx.message(
        "perm4b",
        "s4",
        Some("t4"),
        "permission_request",
        json!({ "status": "pending" }),
        "12:02",
    )
    .await;

    let p = projector(&db).await;
    let by_id = |list: &[task_projection_server::projection::SessionProjection], id: &str| {
        list.iter()
            .find(|s| s.session.id == id)
            .map(|s| s.pending_action)
            .unwrap()
    };
    let list = p.project_sessions(&["s1", "s2", "s3", "s4"]).await.unwrap();
    assert_eq!(by_id(&list, "s1"), Some(PendingAction::Clarification));
    assert_eq!(
        by_id(&list, "s2"),
        Some(PendingAction::Clarification),
        "reservation unpublished"
    );
    assert_eq!(by_id(&list, "s3"), None, "terminal session clean");
    assert_eq!(by_id(&list, "s4"), Some(PendingAction::Permission));
    // Task: permission on any input-capable session wins.
    assert_eq!(
        p.task_action("task-1").await.unwrap(),
        Some(PendingAction::Permission)
    );

    // A message referencing the reservation publishes it: the old question is history.
    fx.message(
        "m-resv",
        "s2",
        Some("resv"),
        "message",
        json!({}),
        "13:00:01",
    )
    .await;
    let list = p.project_sessions(&["s2"]).await.unwrap();
    assert_eq!(by_id(&list, "s2"), None);

    // Deleting every message of the newer turn never reactivates the older question.
    fx.storage.delete_message("m-resv").await.unwrap();
    // (The reservation is unpublished again: its marker is still there, nothing references it.)
    fx.storage.complete_turn("resv", &t("13:02")).await.unwrap();
    task_projection_server::db::query("UPDATE turns SET metadata = '{}' WHERE id = 'resv'")
        .execute(&db)
        .await
        .unwrap();
    let list = p.project_sessions(&["s2"]).await.unwrap();
    assert_eq!(by_id(&list, "s2"), None, "scenario 31");

    // A message in a turn that does not exist counts for nothing (scenario 32).
    fx.session("s5", "task-1", "RUNNING").await;
    fx.question("q5", "s5", "ghost", "p5", "pending", "12:00")
        .await;
    let list = p.project_sessions(&["s5"]).await.unwrap();
    assert_eq!(by_id(&list, "s5"), None);
}
both!(projection_current_turn_rules);

async fn task_sessions_list_and_revisions(db: Db, _: Kind) {
    let fx = Fx::new(&db);
    fx.task("task-1").await;
    fx.session_at("old", "task-1", "RUNNING", "", &t("10:00"))
        .await;
    fx.session_at("new", "task-1", "WAITING_FOR_INPUT", "", &t("11:00"))
        .await;
    fx.turn("t", "new", "11:00", None, json!({})).await;
    fx.question("q", "new", "t", "p", "pending", "11:01").await;
    let p = projector(&db).await;
    let first = p.task_sessions("task-1").await.unwrap();
    assert_eq!(
        first
            .iter()
            .map(|s| s.session.id.as_str())
            .collect::<Vec<_>>(),
        ["new", "old"]
    );
    let wire = first[0].to_wire();
    assert_eq!(wire["pending_action"], json!("clarification"));
    assert_eq!(wire["pending_action_revision"]["epoch"], json!("1"));
    assert_eq!(first[1].to_wire()["pending_action"], json!(null));
    assert_eq!(
        first[0].revision, first[1].revision,
        "one reservation per read"
    );

    // The message event carries a newer revision than the earlier list.
    let sink = BroadcastSink::default();
    let mut rx = sink.subscribe();
    fx.message("m2", "new", Some("t"), "message", json!({}), "11:02")
        .await;
    let row = fx.storage.message("m2").await.unwrap();
    let event = p
        .publish_message_event(&sink, MessageEventKind::Added, "new", row.to_wire())
        .await;
    assert_eq!(event.name, SESSION_MESSAGE_ADDED);
    assert_eq!(event.payload["message_id"], json!("m2"));
    assert_eq!(event.payload["pending_action"], json!("clarification"));
    let revision = Revision {
        epoch: event.payload["pending_action_revision"]["epoch"]
            .as_str()
            .unwrap()
            .into(),
        sequence: event.payload["pending_action_revision"]["sequence"]
            .as_u64()
            .unwrap(),
    };
    assert!(newer(&revision, &first[0].revision));
    assert_eq!(task_projection_server::events::drain(&mut rx), vec![event]);
    // A content-only update carries no projection.
    let content = p
        .message_event(MessageEventKind::ContentUpdated, "new", row.to_wire())
        .await;
    assert!(content.payload.get("pending_action").is_none());
}
both!(task_sessions_list_and_revisions);

/// Instances starting at the same moment on one database each get their own epoch (the
/// compare-and-set loser re-reads and advances past the winner).
async fn concurrent_starts_allocate_distinct_epochs(kind: Kind) {
    let Some(url) = fresh_url(kind).await else {
        eprintln!("skipped: PostgreSQL URL not set");
        return;
    };
    let db = storage::connect(&url).await.unwrap();
    let mut handles = Vec::new();
    for _ in 0..6 {
        let url = url.clone();
        handles.push(tokio::spawn(async move {
            let db = storage::connect(&url).await.unwrap();
            let epoch = allocate_epoch(&db).await.unwrap();
            db.close().await;
            epoch
        }));
    }
    let mut epochs = Vec::new();
    for handle in handles {
        epochs.push(handle.await.unwrap().parse::<u64>().unwrap());
    }
    epochs.sort_unstable();
    assert_eq!(epochs, [1, 2, 3, 4, 5, 6]);
    assert_eq!(stored_epoch(&db).await.unwrap().as_deref(), Some("6"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_starts_allocate_distinct_epochs_sqlite_file() {
    concurrent_starts_allocate_distinct_epochs(Kind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_starts_allocate_distinct_epochs_postgres() {
    concurrent_starts_allocate_distinct_epochs(Kind::Postgres).await;
}

// ---- PostgreSQL connections (server/src/db/pg.rs) ----------------------------------------------

/// The backend process serving the statement.
async fn backend_pid(on: impl Into<task_projection_server::db::On<'_>>) -> i64 {
    task_projection_server::db::query_scalar::<i64>("SELECT pg_backend_pid()")
        .fetch_one(on)
        .await
        .unwrap()
}

/// The connections are reused: statements one after another run on one connection (no ping, no
/// reconnect per statement); a database error leaves its connection usable; a transaction
/// dropped uncommitted is rolled back and its connection reused; a statement cancelled mid-flight
/// closes its connection instead (its late answer is never read by the next statement).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_reused_and_never_left_dirty_postgres() {
    use task_projection_server::db::{query, query_scalar, PG_CONNECTIONS};
    let Some(url) = fresh_url(Kind::Postgres).await else {
        eprintln!("skipped: PostgreSQL URL not set");
        return;
    };
    let db = storage::connect(&url).await.unwrap();
    query("CREATE TABLE pool_probe (a BIGINT)")
        .execute(&db)
        .await
        .unwrap();
    let first = backend_pid(&db).await;
    for _ in 0..50 {
        assert_eq!(backend_pid(&db).await, first, "one connection, reused");
    }

    // A database error is an answer: the same held connection runs the next statement.
    let mut conn = db.conn().await.unwrap();
    let held = backend_pid(&mut conn).await;
    assert!(query("SELECT * FROM no_such_table")
        .execute(&mut conn)
        .await
        .is_err());
    assert_eq!(backend_pid(&mut conn).await, held);
    drop(conn);
    assert_eq!(backend_pid(&db).await, held, "returned to the pool");

    // Dropped uncommitted: rolled back, and the connection comes back. (Watched from a
    // connection of its own: on the pool, the probe would run on the rolled-back connection as
    // soon as it is back, and see it busy with the probe itself.)
    let mut probe = {
        let mut tx = db.begin().await.unwrap();
        query("INSERT INTO pool_probe VALUES (1)")
            .execute(&mut tx)
            .await
            .unwrap();
        db.conn().await.unwrap()
    };
    let mut idle = false;
    for _ in 0..200 {
        let count: i64 = query_scalar("SELECT COUNT(*) FROM pool_probe")
            .fetch_one(&mut probe)
            .await
            .unwrap();
        assert_eq!(count, 0, "an uncommitted insert is never visible");
        let state: Option<String> =
            query_scalar("SELECT state FROM pg_stat_activity WHERE pid = $1")
                .bind(held)
                .fetch_optional(&mut probe)
                .await
                .unwrap();
        assert!(state.is_some(), "the connection stays open");
        if state.as_deref() == Some("idle") {
            idle = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(idle, "the dropped transaction is rolled back");
    drop(probe);
    let (mut a, mut b) = (db.conn().await.unwrap(), db.conn().await.unwrap());
    assert!(
        [backend_pid(&mut a).await, backend_pid(&mut b).await].contains(&held),
        "the rolled-back connection is back in the pool"
    );
    drop((a, b));

    // Cancelled mid-statement: that connection is closed, the next statement answers itself.
    let mut conn = db.conn().await.unwrap();
    let cancelled = backend_pid(&mut conn).await;
    let sleeping = tokio::time::timeout(
        std::time::Duration::from_millis(50),
        query_scalar::<String>("SELECT pg_sleep(2)::text").fetch_one(&mut conn),
    )
    .await;
    assert!(sleeping.is_err(), "the statement was cancelled");
    drop(conn);
    let started = std::time::Instant::now();
    let one: i64 = query_scalar("SELECT 1").fetch_one(&db).await.unwrap();
    assert_eq!(one, 1);
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    let mut pids = Vec::new();
    let mut held_all = Vec::new();
    for _ in 0..PG_CONNECTIONS {
        let mut conn = db.conn().await.unwrap();
        pids.push(backend_pid(&mut conn).await);
        held_all.push(conn);
    }
    assert!(
        !pids.contains(&cancelled),
        "the cancelled connection was not reused"
    );
    // At most PG_CONNECTIONS at once: one more waits for a release.
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(100), db.conn())
            .await
            .is_err()
    );
    drop(held_all);
    assert!(db.conn().await.is_ok());
    db.close().await;
}
