//! Workflow profile-session lifecycle (SPEC §10, scenarios 61–62 and the four start/end policy
//! combinations) on SQLite and PostgreSQL.

#[path = "server_support/mod.rs"]
mod server_support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use server_support::{t, Fx, Kind};
use task_projection::rules::lifecycle::{CallbackHandling, KeepReason, Retirement};
use task_projection_server::clock::ManualClock;
use task_projection_server::events::{drain, BroadcastSink, SESSION_STATE_CHANGED};
use task_projection_server::lifecycle::{
    LifecycleService, Runtime, RuntimeError, TransitionInput, TransitionOutcome,
};
use task_projection_server::Db;

#[derive(Default)]
struct FakeRuntime {
    executions: Mutex<HashMap<String, String>>,
    fail_prepare: Mutex<bool>,
    fail_stop: Mutex<bool>,
    prepared: Mutex<Vec<(String, String, bool)>>,
    stopped: Mutex<Vec<(String, String, Option<String>)>>,
}

impl Runtime for FakeRuntime {
    async fn prepare(
        &self,
        session_id: &str,
        profile: &str,
        created: bool,
    ) -> Result<(), RuntimeError> {
        if *self.fail_prepare.lock().unwrap() {
            return Err(RuntimeError("credentials preflight failed".into()));
        }
        self.prepared
            .lock()
            .unwrap()
            .push((session_id.into(), profile.into(), created));
        Ok(())
    }
    fn execution_id(&self, session_id: &str) -> Option<String> {
        self.executions.lock().unwrap().get(session_id).cloned()
    }
    async fn stop(
        &self,
        session_id: &str,
        execution_id: &str,
        stamp: Option<&str>,
    ) -> Result<(), RuntimeError> {
        self.stopped.lock().unwrap().push((
            session_id.into(),
            execution_id.into(),
            stamp.map(str::to_owned),
        ));
        if *self.fail_stop.lock().unwrap() {
            return Err(RuntimeError("stop timed out".into()));
        }
        Ok(())
    }
}

struct Setup {
    fx: Fx,
    runtime: Arc<FakeRuntime>,
    sink: BroadcastSink,
    service: LifecycleService<FakeRuntime>,
}

/// Task `task` with the active source `<task>-src` (profile alpha, RUNNING, primary, execution
/// `exec-<task>`), reusable beta sessions `<task>-old` (09:00) and `<task>-newer` (09:30, IDLE),
/// and a terminal beta session `<task>-done` (09:45) that is never reused.
async fn fixture(fx: &Fx, runtime: &FakeRuntime, task: &str) {
    fx.task(task).await;
    fx.session_at(
        &format!("{task}-src"),
        task,
        "RUNNING",
        "alpha",
        &t("10:00"),
    )
    .await;
    fx.storage
        .set_session_primary(&format!("{task}-src"), true)
        .await
        .unwrap();
    fx.session_at(
        &format!("{task}-old"),
        task,
        "WAITING_FOR_INPUT",
        "beta",
        &t("09:00"),
    )
    .await;
    fx.session_at(&format!("{task}-newer"), task, "IDLE", "beta", &t("09:30"))
        .await;
    fx.session_at(
        &format!("{task}-done"),
        task,
        "COMPLETED",
        "beta",
        &t("09:45"),
    )
    .await;
    runtime
        .executions
        .lock()
        .unwrap()
        .insert(format!("{task}-src"), format!("exec-{task}"));
}

async fn setup(db: &Db) -> Setup {
    let fx = Fx::new(db);
    let runtime = Arc::new(FakeRuntime::default());
    let sink = BroadcastSink::default();
    let service = LifecycleService::new(
        fx.storage.clone(),
        runtime.clone(),
        Arc::new(ManualClock::at("2026-11-29T12:00:00Z").unwrap()),
        Arc::new(sink.clone()),
    );
    Setup {
        fx,
        runtime,
        sink,
        service,
    }
}

fn input<'a>(
    task: &'a str,
    source: &'a str,
    profile: &'a str,
    start: &'a str,
    end: &'a str,
) -> TransitionInput<'a> {
    TransitionInput {
        task_id: task,
        active_session_id: Some(source),
        destination_profile: Some(profile),
        destination_start_policy: Some(start),
        source_end_policy: Some(end),
    }
}

/// The four combinations of the lifecycle design's verification table.
async fn four_policy_combinations(db: Db, _: Kind) {
    let s = setup(&db).await;
    let mut rx = s.sink.subscribe();
    for (task, start, end) in [
        ("rc", "reuse", "complete"),
        ("nc", "new", "complete"),
        ("rp", "reuse", "park"),
        ("np", "new", "park"),
    ] {
        fixture(&s.fx, &s.runtime, task).await;
        let source = format!("{task}-src");
        let outcome = s
            .service
            .transition(&input(task, &source, "beta", start, end))
            .await
            .unwrap();
        let TransitionOutcome::Switched {
            destination_session_id,
            created,
            source: Some(retired),
        } = outcome
        else {
            panic!("{task}: expected a switch with a retired source, got {outcome:?}");
        };
        // Destination: reuse → the newest eligible non-terminal beta session; new → a fresh one.
        let destination = s.fx.storage.session(&destination_session_id).await.unwrap();
        if start == "reuse" {
            assert_eq!(destination_session_id, format!("{task}-newer"), "{task}");
            assert!(!created);
        } else {
            assert!(created, "{task}");
            assert_eq!(
                (
                    destination.state_text.as_str(),
                    destination.agent_profile_id.as_str()
                ),
                ("CREATED", "beta")
            );
        }
        assert!(destination.is_primary, "{task}: destination promoted");
        // Source: complete → COMPLETED; park → WAITING_FOR_INPUT, completed_at cleared, intent.
        let src = s.fx.storage.session(&source).await.unwrap();
        assert!(!src.is_primary, "{task}: source demoted");
        let stopped = s.runtime.stopped.lock().unwrap().last().cloned().unwrap();
        assert_eq!(
            (stopped.0.as_str(), stopped.1.as_str()),
            (source.as_str(), format!("exec-{task}").as_str())
        );
        if end == "complete" {
            assert_eq!(retired.retirement, Retirement::Complete);
            assert_eq!(src.state_text, "COMPLETED");
            assert!(src.completed_at.is_some());
            assert!(retired.stop_intent.is_none());
            assert!(s.fx.storage.stop_intent(&source).await.unwrap().is_none());
        } else {
            assert_eq!(retired.retirement, Retirement::Park);
            assert_eq!(src.state_text, "WAITING_FOR_INPUT");
            assert_eq!(src.completed_at, None);
            let intent = retired.stop_intent.clone().unwrap();
            let stored = s.fx.storage.stop_intent(&source).await.unwrap().unwrap();
            assert_eq!(
                (
                    stored.execution_id.as_str(),
                    stored.stamp.as_str(),
                    stored.consumed
                ),
                (intent.execution_id.as_str(), intent.stamp.as_str(), false)
            );
            assert_eq!(
                stopped.2.as_deref(),
                Some(intent.stamp.as_str()),
                "the stop carries the stamp"
            );
        }
        // The terminal beta session is never revived.
        assert_eq!(
            s.fx.storage
                .session(&format!("{task}-done"))
                .await
                .unwrap()
                .state_text,
            "COMPLETED"
        );
    }
    let changes = drain(&mut rx)
        .into_iter()
        .filter(|e| e.name == SESSION_STATE_CHANGED)
        .count();
    assert_eq!(changes, 4);
}
both!(four_policy_combinations);

/// Scenario 62: the destination profile equals the active session's → keep, no policy applied.
async fn scenario_62_same_profile_keeps_the_session(db: Db, _: Kind) {
    let s = setup(&db).await;
    fixture(&s.fx, &s.runtime, "k").await;
    for (profile, reason) in [
        ("alpha", KeepReason::SameProfile),
        (" alpha ", KeepReason::SameProfile),
        ("", KeepReason::NoDestinationProfile),
    ] {
        let outcome = s
            .service
            .transition(&input("k", "k-src", profile, "new", "park"))
            .await
            .unwrap();
        assert_eq!(outcome, TransitionOutcome::Kept(reason));
    }
    let src = s.fx.storage.session("k-src").await.unwrap();
    assert_eq!(
        (src.state_text.as_str(), src.is_primary, src.version),
        ("RUNNING", true, 1)
    );
    assert_eq!(
        s.fx.storage.sessions_of_task("k").await.unwrap().len(),
        4,
        "no session created"
    );
    assert!(s.runtime.prepared.lock().unwrap().is_empty());
    assert!(s.runtime.stopped.lock().unwrap().is_empty());
}
both!(scenario_62_same_profile_keeps_the_session);

/// Scenario 61 through the service: raw step settings are normalized by the rules.
async fn scenario_61_policy_normalization(db: Db, _: Kind) {
    let s = setup(&db).await;
    let cases = [
        ("n1", " new ", "", true, Retirement::Complete),
        ("n2", "", "retain", false, Retirement::Complete),
        ("n3", "retain", " park ", false, Retirement::Park),
        ("n4", "NEW", "PARK", false, Retirement::Complete),
    ];
    for (task, start, end, expect_created, expect_retirement) in cases {
        fixture(&s.fx, &s.runtime, task).await;
        let source = format!("{task}-src");
        let TransitionOutcome::Switched {
            created,
            source: Some(retired),
            ..
        } = s
            .service
            .transition(&input(task, &source, "beta", start, end))
            .await
            .unwrap()
        else {
            panic!("{task}: expected a switch");
        };
        assert_eq!(
            (created, retired.retirement),
            (expect_created, expect_retirement),
            "{task}: {start:?}/{end:?}"
        );
    }
}
both!(scenario_61_policy_normalization);

/// Destination preparation fails before any source mutation.
async fn failed_preparation_leaves_the_source(db: Db, _: Kind) {
    let s = setup(&db).await;
    fixture(&s.fx, &s.runtime, "f").await;
    *s.runtime.fail_prepare.lock().unwrap() = true;
    assert!(s
        .service
        .transition(&input("f", "f-src", "beta", "new", "park"))
        .await
        .is_err());
    let src = s.fx.storage.session("f-src").await.unwrap();
    assert_eq!((src.state_text.as_str(), src.is_primary), ("RUNNING", true));
    assert!(s.fx.storage.stop_intent("f-src").await.unwrap().is_none());
    assert_eq!(s.fx.storage.sessions_of_task("f").await.unwrap().len(), 4);
    assert!(s.runtime.stopped.lock().unwrap().is_empty());
}
both!(failed_preparation_leaves_the_source);

/// Stamped consumption: a matching callback consumes the intent (tombstone kept) and is
/// suppressed; a repeat is suppressed without a write; other executions or stamps are ordinary;
/// a newer park replaces the stamp; a stop failure keeps the intent.
async fn stop_intent_consumption(db: Db, _: Kind) {
    let s = setup(&db).await;
    fixture(&s.fx, &s.runtime, "c").await;
    *s.runtime.fail_stop.lock().unwrap() = true;
    let TransitionOutcome::Switched {
        source: Some(retired),
        ..
    } = s
        .service
        .transition(&input("c", "c-src", "beta", "reuse", "park"))
        .await
        .unwrap()
    else {
        panic!("expected a switch");
    };
    assert!(retired.stop_error.is_some(), "stop failure reported");
    let intent = retired.stop_intent.unwrap();
    assert!(
        !s.fx
            .storage
            .stop_intent("c-src")
            .await
            .unwrap()
            .unwrap()
            .consumed,
        "intent kept"
    );

    let (handling, _) = s
        .service
        .on_stop_callback("c-src", "exec-other", &intent.stamp)
        .await
        .unwrap();
    assert_eq!(handling, CallbackHandling::Ordinary);
    let (handling, _) = s
        .service
        .on_stop_callback("c-src", "exec-c", "stale-stamp")
        .await
        .unwrap();
    assert_eq!(handling, CallbackHandling::Ordinary);
    let (handling, _) = s
        .service
        .on_stop_callback("c-src", "exec-c", &intent.stamp)
        .await
        .unwrap();
    assert_eq!(handling, CallbackHandling::ConsumeAndSuppress);
    let tombstone = s.fx.storage.stop_intent("c-src").await.unwrap().unwrap();
    assert!(tombstone.consumed && tombstone.consumed_at.is_some());
    let (handling, _) = s
        .service
        .on_stop_callback("c-src", "exec-c", &intent.stamp)
        .await
        .unwrap();
    assert_eq!(
        handling,
        CallbackHandling::Suppress,
        "delayed repeat meets the tombstone"
    );
    assert_eq!(
        s.fx.storage.stop_intent("c-src").await.unwrap().unwrap(),
        tombstone,
        "no write"
    );

    // A newer park of the same session writes a new execution id and stamp.
    s.fx.storage
        .put_stop_intent("c-src", "exec-c2", "stamp-2", &t("13:00"))
        .await
        .unwrap();
    let (handling, _) = s
        .service
        .on_stop_callback("c-src", "exec-c", &intent.stamp)
        .await
        .unwrap();
    assert_eq!(handling, CallbackHandling::Ordinary);
    let (handling, _) = s
        .service
        .on_stop_callback("c-src", "exec-c2", "stamp-2")
        .await
        .unwrap();
    assert_eq!(handling, CallbackHandling::ConsumeAndSuppress);
}
both!(stop_intent_consumption);

/// Two racing deliveries of the same callback: exactly one consumes, the other meets the tombstone.
async fn racing_callbacks_consume_once(db: Db, _: Kind) {
    let s = Arc::new(setup(&db).await);
    fixture(&s.fx, &s.runtime, "r").await;
    s.fx.storage
        .put_stop_intent("r-src", "exec-r", "stamp-r", &t("11:00"))
        .await
        .unwrap();
    let mut handles = Vec::new();
    for _ in 0..4 {
        let s = s.clone();
        handles.push(tokio::spawn(async move {
            s.service
                .on_stop_callback("r-src", "exec-r", "stamp-r")
                .await
                .unwrap()
                .0
        }));
    }
    let mut results = Vec::new();
    for handle in handles {
        results.push(handle.await.unwrap());
    }
    assert_eq!(
        results
            .iter()
            .filter(|h| **h == CallbackHandling::ConsumeAndSuppress)
            .count(),
        1,
        "{results:?}"
    );
    assert!(results.iter().all(|h| h.suppresses()));
}
both!(racing_callbacks_consume_once);
