//! Server summary repair (SPEC §7) on SQLite and PostgreSQL: compare-and-set, preserved fields,
//! one event per semantic change, invalidation on exhaustion, racing repairs.

#[path = "server_support/mod.rs"]
mod server_support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use server_support::{t, Fx, Kind};
use task_projection_server::clock::ManualClock;
use task_projection_server::events::{drain, BroadcastSink, TASK_STATUS_SUMMARY_UPDATED};
use task_projection_server::projection::Projector;
use task_projection_server::revision::RevisionClock;
use task_projection_server::storage::Storage;
use task_projection_server::summary::{RepairOutcome, SummaryRepair};
use task_projection_server::Db;

struct Setup {
    fx: Fx,
    repair: SummaryRepair,
    sink: BroadcastSink,
}

/// A task whose only session waits on a clarification, and a stored summary that says clean.
async fn setup(db: &Db) -> Setup {
    let fx = Fx::new(db);
    fx.task("task-1").await;
    fx.session("s1", "task-1", "WAITING_FOR_INPUT").await;
    fx.turn("t1", "s1", "12:00", None, json!({})).await;
    fx.question("q1", "s1", "t1", "p1", "pending", "12:01")
        .await;
    let stale = json!({
        "revision": 4,
        "updated_at": t("12:00"),
        "primary_session": { "id": "s1" },
        "queued_prompt_count": 2,
        "git": { "branch": "main", "ahead": 1 },
        "active_error": null,
    });
    fx.storage
        .insert_summary("task-1", 4, &stale, &t("12:00"))
        .await
        .unwrap();
    let clock = RevisionClock::start(db.clone()).await.unwrap();
    let projector = Projector::new(Storage::new(db.clone()), clock);
    let sink = BroadcastSink::default();
    let repair = SummaryRepair::new(
        projector,
        Arc::new(sink.clone()),
        Arc::new(ManualClock::at("2026-11-29T14:00:00Z").unwrap()),
    );
    Setup { fx, repair, sink }
}

async fn repair_rewrites_only_the_pending_fields(db: Db, _: Kind) {
    let s = setup(&db).await;
    let mut rx = s.sink.subscribe();
    let RepairOutcome::Repaired(summary) = s.repair.repair("task-1").await.unwrap() else {
        panic!("expected a repair");
    };
    assert_eq!(summary["pending_action"], json!("clarification"));
    assert_eq!(summary["revision"], json!(5));
    assert_eq!(
        summary["updated_at"],
        json!("2026-11-29T14:00:00.000000000Z")
    );
    assert_eq!(summary["queued_prompt_count"], json!(2));
    assert_eq!(summary["git"], json!({ "branch": "main", "ahead": 1 }));
    assert_eq!(summary["primary_session"], json!({ "id": "s1" }));
    assert_eq!(
        summary["active_error"],
        json!(null),
        "null fields preserved as null"
    );
    let stored = s.fx.storage.summary("task-1").await.unwrap().unwrap();
    assert_eq!((stored.revision, &stored.summary), (5, &summary));
    let events = drain(&mut rx);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].name, TASK_STATUS_SUMMARY_UPDATED);
    assert_eq!(
        events[0].payload,
        json!({ "task_id": "task-1", "workspace_id": "ws-1", "status_summary": summary })
    );

    // A repeat publishes nothing and writes nothing.
    assert!(matches!(
        s.repair.repair("task-1").await.unwrap(),
        RepairOutcome::Unchanged(_)
    ));
    assert!(drain(&mut rx).is_empty());
    assert_eq!(
        s.fx.storage
            .summary("task-1")
            .await
            .unwrap()
            .unwrap()
            .revision,
        5
    );

    // The question is answered: the action goes clean and the key is omitted.
    let q = s.fx.storage.message("q1").await.unwrap();
    s.fx.storage
        .cas_message_metadata(
            &q,
            &json!({ "pending_id": "p1", "status": "answered" }),
            &t("14:00"),
        )
        .await
        .unwrap();
    let RepairOutcome::Repaired(summary) = s.repair.repair("task-1").await.unwrap() else {
        panic!("expected a repair");
    };
    assert!(
        summary.get("pending_action").is_none(),
        "omitted when clean"
    );
    assert_eq!(summary["revision"], json!(6));
    assert_eq!(drain(&mut rx).len(), 1);

    // The task answer carries the summary and the legacy field.
    let answer = s.repair.task_answer("task-1").await.unwrap();
    assert_eq!(answer["status_summary"], summary);
    assert_eq!(answer["task_pending_action"], json!(null));
    assert!(answer.get("status_summary_invalidated").is_none());
    assert!(drain(&mut rx).is_empty());
}
both!(repair_rewrites_only_the_pending_fields);

/// Every attempt loses its compare-and-set (another writer bumps the revision each time): after
/// 3 attempts the task is answered invalidated, with no summary, and nothing is published.
async fn exhaustion_invalidates(db: Db, _: Kind) {
    let s = setup(&db).await;
    let mut rx = s.sink.subscribe();
    let storage = s.fx.storage.clone();
    let attempts = Arc::new(AtomicU32::new(0));
    let seen = attempts.clone();
    let repair = s
        .repair
        .clone()
        .with_before_write(Arc::new(move |_attempt| {
            let storage = storage.clone();
            let seen = seen.clone();
            Box::pin(async move {
                seen.fetch_add(1, Ordering::SeqCst);
                let row = storage.summary("task-1").await.unwrap().unwrap();
                let mut summary = row.summary.clone();
                summary["revision"] = json!(row.revision + 1);
                summary["queued_prompt_count"] = json!(row.revision);
                assert!(storage
                    .cas_summary(
                        "task-1",
                        row.revision,
                        row.revision + 1,
                        &summary,
                        &t("13:00")
                    )
                    .await
                    .unwrap());
            })
        }));
    let started = std::time::Instant::now();
    assert_eq!(
        repair.repair("task-1").await.unwrap(),
        RepairOutcome::Invalidated { attempts: 3 }
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(3),
        "1 ms + 2 ms backoff"
    );
    let answer = repair.task_answer("task-1").await.unwrap();
    assert_eq!(answer["status_summary_invalidated"], json!(true));
    assert!(answer.get("status_summary").is_none());
    assert_eq!(answer["task_pending_action"], json!("clarification"));
    assert!(drain(&mut rx).is_empty());
    // The other writer's fields were never overwritten.
    let stored = s.fx.storage.summary("task-1").await.unwrap().unwrap();
    assert_eq!(stored.revision, 4 + 6);
    assert_eq!(stored.summary["queued_prompt_count"], json!(9));
}
both!(exhaustion_invalidates);

/// A racing writer changes an unrelated field once: the repair loses, reloads, retries and keeps
/// the newer field.
async fn loser_reloads_and_keeps_newer_fields(db: Db, _: Kind) {
    let s = setup(&db).await;
    let mut rx = s.sink.subscribe();
    let storage = s.fx.storage.clone();
    let repair = s.repair.clone().with_before_write(Arc::new(move |attempt| {
        let storage = storage.clone();
        Box::pin(async move {
            if attempt == 1 {
                let row = storage.summary("task-1").await.unwrap().unwrap();
                let mut summary = row.summary.clone();
                summary["revision"] = json!(5);
                summary["foreground_activity"] = json!({ "kind": "tool", "name": "grep" });
                assert!(storage
                    .cas_summary("task-1", 4, 5, &summary, &t("13:00"))
                    .await
                    .unwrap());
            }
        })
    }));
    let RepairOutcome::Repaired(summary) = repair.repair("task-1").await.unwrap() else {
        panic!("expected a repair");
    };
    assert_eq!(summary["revision"], json!(6));
    assert_eq!(summary["pending_action"], json!("clarification"));
    assert_eq!(
        summary["foreground_activity"],
        json!({ "kind": "tool", "name": "grep" })
    );
    assert_eq!(summary["queued_prompt_count"], json!(2));
    assert_eq!(drain(&mut rx).len(), 1);
}
both!(loser_reloads_and_keeps_newer_fields);

/// Many concurrent repairs of one stale summary: exactly one semantic change is written and
/// published; the others reload and find it correct.
async fn racing_repairs_publish_once(db: Db, _: Kind) {
    let s = setup(&db).await;
    let mut rx = s.sink.subscribe();
    let mut handles = Vec::new();
    for _ in 0..6 {
        let repair = s.repair.clone();
        handles.push(tokio::spawn(async move {
            repair.repair("task-1").await.unwrap()
        }));
    }
    let mut repaired = 0;
    for handle in handles {
        match handle.await.unwrap() {
            RepairOutcome::Repaired(_) => repaired += 1,
            RepairOutcome::Unchanged(summary) => {
                assert_eq!(summary["pending_action"], json!("clarification"))
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(repaired, 1);
    let events: Vec<Value> = drain(&mut rx).into_iter().map(|e| e.payload).collect();
    assert_eq!(events.len(), 1);
    assert_eq!(
        s.fx.storage
            .summary("task-1")
            .await
            .unwrap()
            .unwrap()
            .revision,
        5
    );
}
both!(racing_repairs_publish_once);

async fn no_summary_is_left_alone(db: Db, _: Kind) {
    let s = setup(&db).await;
    s.fx.task("task-2").await;
    assert_eq!(
        s.repair.repair("task-2").await.unwrap(),
        RepairOutcome::NoSummary
    );
    let answer = s.repair.task_answer("task-2").await.unwrap();
    assert!(answer.get("status_summary").is_none());
    assert!(answer.get("status_summary_invalidated").is_none());
}
both!(no_summary_is_left_alone);

/// A failing summary write (a trigger rejects it) answers the task invalidated, publishes
/// nothing, and leaves the stored summary as it was.
async fn write_failure_invalidates(db: Db, _: Kind) {
    let s = setup(&db).await;
    let mut rx = s.sink.subscribe();
    server_support::reject_summary_writes(&db).await;
    assert_eq!(
        s.repair.repair("task-1").await.unwrap(),
        RepairOutcome::Invalidated { attempts: 1 }
    );
    let answer = s.repair.task_answer("task-1").await.unwrap();
    assert_eq!(answer["status_summary_invalidated"], json!(true));
    assert!(answer.get("status_summary").is_none());
    assert!(drain(&mut rx).is_empty());
    assert_eq!(
        s.fx.storage
            .summary("task-1")
            .await
            .unwrap()
            .unwrap()
            .revision,
        4
    );
}
both!(write_failure_invalidates);

/// The services run on an in-memory SQLite database (one connection: no nested acquisition).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_sqlite_runs_the_services() {
    let db = Db::memory().await.unwrap();
    let s = setup(&db).await;
    let run = async {
        assert!(matches!(
            s.repair.repair("task-1").await.unwrap(),
            RepairOutcome::Repaired(_)
        ));
        assert!(matches!(
            s.repair.repair("task-1").await.unwrap(),
            RepairOutcome::Unchanged(_)
        ));
        s.repair.task_answer("task-1").await.unwrap()
    };
    let answer = tokio::time::timeout(std::time::Duration::from_secs(10), run)
        .await
        .expect("no pool starvation");
    assert_eq!(
        answer["status_summary"]["pending_action"],
        json!("clarification")
    );
}
