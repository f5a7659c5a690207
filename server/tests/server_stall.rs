//! Stall detection and orphan healing (SPEC §9, scenarios 58–60) on SQLite and PostgreSQL.

#[path = "server_support/mod.rs"]
mod server_support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use server_support::{Fx, Kind};
use task_projection::rules::stall::Execution;
use task_projection_server::clock::{wire_time, Clock, ManualClock};
use task_projection_server::events::{drain, BroadcastSink, SESSION_STATE_CHANGED, TASK_STALLED};
use task_projection_server::stall::{ExecutionRegistry, StallService};
use task_projection_server::Db;

const MIN: i64 = 60;
const HOUR: i64 = 3600;

#[derive(Default)]
struct Registry {
    live: Mutex<HashMap<String, Execution>>,
    unverifiable: Mutex<bool>,
}

impl Registry {
    fn set(&self, session: &str, execution: Execution) {
        self.live.lock().unwrap().insert(session.into(), execution);
    }
}

impl ExecutionRegistry for Registry {
    fn execution(&self, session_id: &str) -> Execution {
        if *self.unverifiable.lock().unwrap() {
            return Execution::Unverifiable;
        }
        self.live
            .lock()
            .unwrap()
            .get(session_id)
            .copied()
            .unwrap_or(Execution::Absent)
    }
}

struct Setup {
    fx: Fx,
    registry: Arc<Registry>,
    clock: Arc<ManualClock>,
    sink: BroadcastSink,
}

impl Setup {
    fn service(&self) -> StallService<Registry> {
        StallService::new(
            self.fx.storage.clone(),
            self.registry.clone(),
            self.clock.clone(),
            Arc::new(self.sink.clone()),
        )
    }
}

/// Sessions are created and last updated at 10:00; the clock starts there.
async fn setup(db: &Db) -> Setup {
    let fx = Fx::new(db);
    fx.task("task-1").await;
    Setup {
        fx,
        registry: Arc::new(Registry::default()),
        clock: Arc::new(ManualClock::at("2026-11-29T10:00:00Z").unwrap()),
        sink: BroadcastSink::default(),
    }
}

/// Scenario 58: reported once per episode; new activity starts a new episode.
async fn scenario_58_one_report_per_episode(db: Db, _: Kind) {
    let s = setup(&db).await;
    s.fx.session("s1", "task-1", "WAITING_FOR_INPUT").await;
    let service = s.service();
    let mut rx = s.sink.subscribe();

    s.clock.advance_secs(2 * HOUR + MIN);
    let report = service.sweep().await.unwrap();
    assert_eq!(report.stalled.len(), 1);
    let events = drain(&mut rx);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].name, TASK_STALLED);
    assert_eq!(events[0].payload["task_id"], json!("task-1"));
    assert_eq!(
        events[0].payload["sessions"],
        json!([{ "session_id": "s1", "silence_seconds": 2 * HOUR + MIN }])
    );

    // Same episode: nothing.
    s.clock.advance_secs(10 * MIN);
    assert!(service.sweep().await.unwrap().stalled.is_empty());
    assert!(drain(&mut rx).is_empty());

    // New activity, then another 2h01m of silence: a new episode, reported again.
    let now = wire_time(s.clock.now());
    s.fx.message("m1", "s1", None, "message", json!({}), &now)
        .await;
    assert!(
        service.sweep().await.unwrap().stalled.is_empty(),
        "active again"
    );
    s.clock.advance_secs(2 * HOUR + MIN);
    assert_eq!(service.sweep().await.unwrap().stalled.len(), 1);
    assert_eq!(drain(&mut rx).len(), 1);
    // Not yet 2 × threshold since the new activity: never healed.
    assert_eq!(
        s.fx.storage.session("s1").await.unwrap().state_text,
        "WAITING_FOR_INPUT"
    );
}
both!(scenario_58_one_report_per_episode);

/// Scenario 59: two orphaned sessions silent 4h01m → both cancelled `orphaned session`.
async fn scenario_59_heal_all_orphaned(db: Db, _: Kind) {
    let s = setup(&db).await;
    s.fx.session("s1", "task-1", "RUNNING").await;
    s.fx.session("s2", "task-1", "WAITING_FOR_INPUT").await;
    s.fx.session("done", "task-1", "COMPLETED").await;
    let mut rx = s.sink.subscribe();
    s.clock.advance_secs(4 * HOUR + MIN);
    let report = s.service().sweep().await.unwrap();
    let mut cancelled = report.cancelled.clone();
    cancelled.sort();
    assert_eq!(cancelled, ["s1", "s2"]);
    for id in ["s1", "s2"] {
        let row = s.fx.storage.session(id).await.unwrap();
        assert_eq!(row.state_text, "CANCELLED");
        assert_eq!(row.state_reason.as_deref(), Some("orphaned session"));
    }
    assert_eq!(
        s.fx.storage.session("done").await.unwrap().state_text,
        "COMPLETED"
    );
    let events = drain(&mut rx);
    let changes: Vec<_> = events
        .iter()
        .filter(|e| e.name == SESSION_STATE_CHANGED)
        .collect();
    assert_eq!(changes.len(), 2);
    assert!(changes
        .iter()
        .all(|e| e.payload["state"] == json!("CANCELLED")
            && e.payload["reason"] == json!("orphaned session")));
    assert_eq!(events.iter().filter(|e| e.name == TASK_STALLED).count(), 1);
}
both!(scenario_59_heal_all_orphaned);

/// Scenario 59, second half: one of them has a live execution → nothing cancelled.
async fn scenario_59_live_execution_blocks_heal(db: Db, _: Kind) {
    let s = setup(&db).await;
    s.fx.session("s1", "task-1", "RUNNING").await;
    s.fx.session("s2", "task-1", "WAITING_FOR_INPUT").await;
    s.registry.set("s2", Execution::Live);
    s.clock.advance_secs(4 * HOUR + MIN);
    let report = s.service().sweep().await.unwrap();
    assert!(report.cancelled.is_empty());
    assert_eq!(report.stalled.len(), 1, "s1 is still reported stalled");
    for id in ["s1", "s2"] {
        assert_ne!(
            s.fx.storage.session(id).await.unwrap().state_text,
            "CANCELLED"
        );
    }
}
both!(scenario_59_live_execution_blocks_heal);

/// Scenario 60: an unreadable activity clock → no report and no heal for that task.
async fn scenario_60_unreadable_clock(db: Db, _: Kind) {
    let s = setup(&db).await;
    s.fx.session("s1", "task-1", "RUNNING").await;
    s.fx.session("s2", "task-1", "RUNNING").await;
    s.fx.message("bad", "s2", None, "message", json!({}), "yesterday-ish")
        .await;
    s.fx.task("task-2").await;
    s.fx.session("other", "task-2", "RUNNING").await;
    let mut rx = s.sink.subscribe();
    s.clock.advance_secs(4 * HOUR + MIN);
    let report = s.service().sweep().await.unwrap();
    assert_eq!(report.unreadable, ["task-1"]);
    assert_eq!(
        report.cancelled,
        ["other"],
        "other tasks are still evaluated"
    );
    assert_eq!(
        s.fx.storage.session("s1").await.unwrap().state_text,
        "RUNNING"
    );
    let events = drain(&mut rx);
    assert!(events
        .iter()
        .all(|e| e.payload["task_id"] == json!("task-2")));
}
both!(scenario_60_unreadable_clock);

/// An unverifiable registry → the sweep does nothing at all.
async fn unverifiable_registry_does_nothing(db: Db, _: Kind) {
    let s = setup(&db).await;
    s.fx.session("s1", "task-1", "RUNNING").await;
    *s.registry.unverifiable.lock().unwrap() = true;
    let mut rx = s.sink.subscribe();
    s.clock.advance_secs(5 * HOUR);
    let report = s.service().sweep().await.unwrap();
    assert!(report.registry_unverifiable);
    assert!(report.stalled.is_empty() && report.cancelled.is_empty());
    assert!(drain(&mut rx).is_empty());
    assert_eq!(
        s.fx.storage.session("s1").await.unwrap().state_text,
        "RUNNING"
    );
}
both!(unverifiable_registry_does_nothing);

/// A live execution registering during the sweep is never cancelled: after classification (the
/// plan re-check fails for the whole task), or right before the cancel (the per-session check).
async fn execution_registering_during_sweep_is_never_cancelled(db: Db, _: Kind) {
    let s = setup(&db).await;
    s.fx.session("s1", "task-1", "RUNNING").await;
    s.fx.session("s2", "task-1", "RUNNING").await;
    s.clock.advance_secs(4 * HOUR + MIN);
    let registry = s.registry.clone();
    let service = s
        .service()
        .with_after_classify(Arc::new(move |_task| registry.set("s1", Execution::Live)));
    let report = service.sweep().await.unwrap();
    assert!(
        report.cancelled.is_empty(),
        "plan re-check: nothing cancelled"
    );
    for id in ["s1", "s2"] {
        assert_eq!(
            s.fx.storage.session(id).await.unwrap().state_text,
            "RUNNING"
        );
    }

    // Registration right before the cancel of s2: s2 survives (s1 may already be cancelled).
    s.registry.set("s1", Execution::Absent);
    let registry = s.registry.clone();
    let service = s.service().with_before_cancel(Arc::new(move |session| {
        if session == "s2" {
            registry.set("s2", Execution::Live);
        }
    }));
    let report = service.sweep().await.unwrap();
    assert!(!report.cancelled.contains(&"s2".to_owned()));
    assert_eq!(
        s.fx.storage.session("s2").await.unwrap().state_text,
        "RUNNING"
    );
}
both!(execution_registering_during_sweep_is_never_cancelled);

async fn archived_tasks_are_not_swept(db: Db, _: Kind) {
    let s = setup(&db).await;
    s.fx.session("s1", "task-1", "RUNNING").await;
    s.fx.storage
        .set_task_archived("task-1", true)
        .await
        .unwrap();
    s.clock.advance_secs(5 * HOUR);
    let report = s.service().sweep().await.unwrap();
    assert!(report.stalled.is_empty() && report.cancelled.is_empty());
}
both!(archived_tasks_are_not_swept);
