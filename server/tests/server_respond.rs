//! Clarification respond (SPEC §8, scenarios 56–57) on SQLite and PostgreSQL: classification,
//! claim with a durable delivery intent, finalize/restore, startup reconciliation, and two
//! racing responses.

#[path = "server_support/mod.rs"]
mod server_support;

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use server_support::{Fx, Kind};
use task_projection::rules::model::MessageRecord;
use task_projection::rules::respond::{
    BundleState, Handoff, IntentRecovery, RespondReply, Response, ResumeReport,
};
use task_projection_server::clock::ManualClock;
use task_projection_server::events::{drain, BroadcastSink, SESSION_MESSAGE_UPDATED};
use task_projection_server::projection::Projector;
use task_projection_server::respond::{
    DeliveryError, RespondService, ResponseInput, ResumeRequest, Resumer, WaiterRegistry,
};
use task_projection_server::revision::RevisionClock;
use task_projection_server::storage::Storage;
use task_projection_server::Db;

#[derive(Default)]
struct Waiters {
    live: Mutex<HashSet<String>>,
    fail: Mutex<bool>,
    delivered: Mutex<Vec<(String, Value)>>,
}

impl WaiterRegistry for Waiters {
    fn has_waiter(&self, pending_id: &str) -> bool {
        self.live.lock().unwrap().contains(pending_id)
    }
    async fn deliver(
        &self,
        pending_id: &str,
        response: &ResponseInput,
    ) -> Result<(), DeliveryError> {
        if *self.fail.lock().unwrap() {
            return Err(DeliveryError("waiter gone".into()));
        }
        self.delivered
            .lock()
            .unwrap()
            .push((pending_id.to_owned(), response.payload.clone()));
        Ok(())
    }
}

struct Orchestrator {
    report: Mutex<ResumeReport>,
    delay: Duration,
    calls: AtomicUsize,
    requests: Mutex<Vec<ResumeRequest>>,
}

impl Orchestrator {
    fn new(report: ResumeReport) -> Orchestrator {
        Orchestrator {
            report: Mutex::new(report),
            delay: Duration::ZERO,
            calls: AtomicUsize::new(0),
            requests: Mutex::new(Vec::new()),
        }
    }
}

impl Resumer for Orchestrator {
    async fn resume(&self, request: &ResumeRequest) -> ResumeReport {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.requests.lock().unwrap().push(request.clone());
        tokio::time::sleep(self.delay).await;
        *self.report.lock().unwrap()
    }
}

struct Setup {
    fx: Fx,
    service: Arc<RespondService<Waiters, Orchestrator>>,
    waiters: Arc<Waiters>,
    orchestrator: Arc<Orchestrator>,
    sink: BroadcastSink,
}

async fn setup_with(db: &Db, orchestrator: Orchestrator) -> Setup {
    let fx = Fx::new(db);
    fx.task("task-1").await;
    fx.session("s1", "task-1", "WAITING_FOR_INPUT").await;
    fx.turn("t1", "s1", "12:00", None, json!({})).await;
    fx.question("q1", "s1", "t1", "p1", "pending", "12:01")
        .await;
    fx.question("q2", "s1", "t1", "p1", "pending", "12:02")
        .await;
    let clock = RevisionClock::start(db.clone()).await.unwrap();
    let projector = Projector::new(Storage::new(db.clone()), clock);
    let waiters = Arc::new(Waiters::default());
    let orchestrator = Arc::new(orchestrator);
    let sink = BroadcastSink::default();
    let service = RespondService::new(
        projector,
        waiters.clone(),
        orchestrator.clone(),
        Arc::new(sink.clone()),
        Arc::new(ManualClock::at("2026-11-29T14:00:00Z").unwrap()),
    );
    Setup {
        fx,
        service: Arc::new(service),
        waiters,
        orchestrator,
        sink,
    }
}

async fn setup(db: &Db) -> Setup {
    setup_with(db, Orchestrator::new(ResumeReport::AcceptedAndPublished)).await
}

/// Answers to the fixture's bundle `p1` (questions `q1`, `q2`: their message ids).
fn answer() -> ResponseInput {
    answer_to(&["q1", "q2"])
}

/// One answer per question id.
fn answer_to(questions: &[&str]) -> ResponseInput {
    let answers: Vec<serde_json::Value> = questions
        .iter()
        .map(|q| json!({ "question_id": q, "answer": "yes" }))
        .collect();
    ResponseInput {
        kind: Response::Answer,
        payload: json!({ "answers": answers }),
    }
}

fn reject() -> ResponseInput {
    ResponseInput {
        kind: Response::Reject,
        payload: json!({ "rejected": true }),
    }
}

async fn statuses(fx: &Fx) -> Vec<(String, bool, i64)> {
    let mut out = Vec::new();
    for id in ["q1", "q2"] {
        let row = fx.storage.message(id).await.unwrap();
        out.push((id.to_owned(), row.status().is_pending(), row.version));
    }
    out
}

fn all_pending(rows: &[(String, bool, i64)]) -> bool {
    rows.iter().all(|(_, pending, _)| *pending)
}

/// Scenario 56: a newer turn is current → conflict, no write, no resume.
async fn scenario_56_superseded_history_conflicts(db: Db, _: Kind) {
    let s = setup(&db).await;
    s.fx.turn("t2", "s1", "13:00", None, json!({})).await;
    assert_eq!(
        s.service.classify("p1").await.unwrap(),
        BundleState::SupersededHistory
    );
    let before = statuses(&s.fx).await;
    for input in [answer(), reject()] {
        let outcome = s.service.respond("p1", &input).await.unwrap();
        assert_eq!(outcome.reply, RespondReply::Conflict);
        assert_eq!(outcome.state, BundleState::SupersededHistory);
    }
    assert_eq!(statuses(&s.fx).await, before, "no write");
    assert_eq!(s.orchestrator.calls.load(Ordering::SeqCst), 0, "no resume");
    assert!(s.fx.storage.delivery_intent("p1").await.unwrap().is_none());
}
both!(scenario_56_superseded_history_conflicts);

/// Scenario 57: a detached answer whose resume acceptance fails → retryable error, bundle pending
/// again (detached, marker kept); the retry succeeds.
async fn scenario_57_detached_acceptance_failure_restores(db: Db, _: Kind) {
    let s = setup_with(
        &db,
        Orchestrator::new(ResumeReport::NotAccepted {
            rollback_succeeded: true,
        }),
    )
    .await;
    assert_eq!(
        s.service.classify("p1").await.unwrap(),
        BundleState::ActiveDetached
    );
    let outcome = s.service.respond("p1", &answer()).await.unwrap();
    assert_eq!(outcome.reply, RespondReply::RetryableError);
    assert!(all_pending(&statuses(&s.fx).await), "bundle pending again");
    assert!(s.fx.storage.delivery_intent("p1").await.unwrap().is_none());
    let q1 = s.fx.storage.message("q1").await.unwrap();
    assert_eq!(q1.metadata["agent_disconnected"], json!(true));
    assert!(q1.metadata.get("response").is_none());
    assert_eq!(
        s.service.classify("p1").await.unwrap(),
        BundleState::ActiveDetached
    );

    *s.orchestrator.report.lock().unwrap() = ResumeReport::AcceptedAndPublished;
    let outcome = s.service.respond("p1", &answer()).await.unwrap();
    assert_eq!(outcome.reply, RespondReply::Success);
    assert_eq!(s.orchestrator.calls.load(Ordering::SeqCst), 2);
    let request = s.orchestrator.requests.lock().unwrap()[1].clone();
    assert_eq!(
        (request.session_id.as_str(), request.turn_id.as_str()),
        ("s1", "t1")
    );
    assert!(statuses(&s.fx).await.iter().all(|(_, pending, _)| !pending));
    assert_eq!(
        s.service.classify("p1").await.unwrap(),
        BundleState::Terminal
    );
    // Terminal bundles never become active again.
    assert_eq!(
        s.service.respond("p1", &answer()).await.unwrap().reply,
        RespondReply::Conflict
    );
}
both!(scenario_57_detached_acceptance_failure_restores);

async fn live_answer_and_reject_go_to_the_waiter(db: Db, _: Kind) {
    let s = setup(&db).await;
    let mut rx = s.sink.subscribe();
    s.waiters.live.lock().unwrap().insert("p1".into());
    assert_eq!(
        s.service.classify("p1").await.unwrap(),
        BundleState::ActiveLive
    );
    let outcome = s.service.respond("p1", &reject()).await.unwrap();
    assert_eq!(outcome.reply, RespondReply::Success);
    assert_eq!(s.waiters.delivered.lock().unwrap().len(), 1);
    assert_eq!(s.orchestrator.calls.load(Ordering::SeqCst), 0);
    let q2 = s.fx.storage.message("q2").await.unwrap();
    assert_eq!(q2.metadata["status"], json!("rejected"));
    assert!(s.fx.storage.delivery_intent("p1").await.unwrap().is_none());
    // The terminal rows are published with the session projection, now clean.
    let events = drain(&mut rx);
    assert_eq!(events.len(), 2);
    assert!(events
        .iter()
        .all(|e| e.name == SESSION_MESSAGE_UPDATED && e.payload["pending_action"] == json!(null)));
}
both!(live_answer_and_reject_go_to_the_waiter);

async fn live_delivery_failure_restores(db: Db, _: Kind) {
    let s = setup(&db).await;
    s.waiters.live.lock().unwrap().insert("p1".into());
    *s.waiters.fail.lock().unwrap() = true;
    let outcome = s.service.respond("p1", &answer()).await.unwrap();
    assert_eq!(outcome.reply, RespondReply::RetryableError);
    assert!(all_pending(&statuses(&s.fx).await));
    assert!(s.fx.storage.delivery_intent("p1").await.unwrap().is_none());
}
both!(live_delivery_failure_restores);

async fn detached_reject_never_resumes(db: Db, _: Kind) {
    let s = setup(&db).await;
    let outcome = s.service.respond("p1", &reject()).await.unwrap();
    assert_eq!(
        (outcome.reply, outcome.state),
        (RespondReply::Success, BundleState::ActiveDetached)
    );
    assert_eq!(s.orchestrator.calls.load(Ordering::SeqCst), 0);
    assert!(statuses(&s.fx).await.iter().all(|(_, pending, _)| !pending));
}
both!(detached_reject_never_resumes);

async fn accepted_but_unpublished_stays_terminal(db: Db, _: Kind) {
    let s = setup_with(
        &db,
        Orchestrator::new(ResumeReport::AcceptedPublicationFailed),
    )
    .await;
    let outcome = s.service.respond("p1", &answer()).await.unwrap();
    assert_eq!(outcome.reply, RespondReply::NonRetryableError);
    assert!(statuses(&s.fx).await.iter().all(|(_, pending, _)| !pending));
    assert_eq!(
        s.service.classify("p1").await.unwrap(),
        BundleState::Terminal
    );
    assert_eq!(
        s.service.respond("p1", &answer()).await.unwrap().reply,
        RespondReply::Conflict
    );
    assert_eq!(s.orchestrator.calls.load(Ordering::SeqCst), 1);
}
both!(accepted_but_unpublished_stays_terminal);

/// A failed rollback leaves the claim for startup recovery: meanwhile the bundle is
/// delivery_claimed (conflict); a restart before any handoff restores it.
async fn startup_reconciliation_restores_a_current_claim(db: Db, _: Kind) {
    let s = setup_with(
        &db,
        Orchestrator::new(ResumeReport::NotAccepted {
            rollback_succeeded: false,
        }),
    )
    .await;
    let outcome = s.service.respond("p1", &answer()).await.unwrap();
    assert_eq!(outcome.reply, RespondReply::NonRetryableError);
    assert!(s.fx.storage.delivery_intent("p1").await.unwrap().is_some());
    assert_eq!(
        s.service.classify("p1").await.unwrap(),
        BundleState::DeliveryClaimed
    );
    let before = statuses(&s.fx).await;
    assert_eq!(
        s.service.respond("p1", &reject()).await.unwrap().reply,
        RespondReply::Conflict
    );
    assert_eq!(statuses(&s.fx).await, before);

    let done = s.service.reconcile_intents().await.unwrap();
    assert_eq!(done.len(), 1);
    assert!(matches!(done[0].recovery, IntentRecovery::Restore { .. }));
    assert!(all_pending(&statuses(&s.fx).await));
    assert_eq!(
        s.service.classify("p1").await.unwrap(),
        BundleState::ActiveDetached
    );
}
both!(startup_reconciliation_restores_a_current_claim);

async fn startup_reconciliation_retires_and_finalizes(db: Db, _: Kind) {
    let s = setup_with(
        &db,
        Orchestrator::new(ResumeReport::NotAccepted {
            rollback_succeeded: false,
        }),
    )
    .await;
    // Claim p1, then a newer turn becomes current: recovery retires the intent, keeps history.
    s.service.respond("p1", &answer()).await.unwrap();
    s.fx.turn("t2", "s1", "13:00", None, json!({})).await;
    let done = s.service.reconcile_intents().await.unwrap();
    assert_eq!(done[0].recovery, IntentRecovery::RetireKeepHistory);
    assert!(
        statuses(&s.fx).await.iter().all(|(_, pending, _)| !pending),
        "history kept terminal"
    );
    assert_eq!(
        s.service.classify("p1").await.unwrap(),
        BundleState::Terminal
    );

    // A claim whose handoff was acknowledged is finalized.
    s.fx.question("q3", "s1", "t2", "p3", "pending", "13:01")
        .await;
    s.service.respond("p3", &answer_to(&["q3"])).await.unwrap();
    s.service
        .record_handoff("p3", Handoff::Acknowledged)
        .await
        .unwrap();
    let done = s.service.reconcile_intents().await.unwrap();
    assert_eq!(done[0].recovery, IntentRecovery::Finalize);
    assert!(!s
        .fx
        .storage
        .message("q3")
        .await
        .unwrap()
        .status()
        .is_pending());
    assert!(s.fx.storage.delivery_intents().await.unwrap().is_empty());
}
both!(startup_reconciliation_retires_and_finalizes);

/// Two concurrent responses to one bundle: exactly one wins, the other gets conflict and
/// writes nothing; exactly one resume.
async fn racing_responses_one_winner(db: Db, _: Kind) {
    let mut orchestrator = Orchestrator::new(ResumeReport::AcceptedAndPublished);
    orchestrator.delay = Duration::from_millis(50);
    let s = setup_with(&db, orchestrator).await;
    for round in 0..3 {
        let pending_id = format!("race{round}");
        s.fx.question(
            &format!("r{round}a"),
            "s1",
            "t1",
            &pending_id,
            "pending",
            "12:10",
        )
        .await;
        s.fx.question(
            &format!("r{round}b"),
            "s1",
            "t1",
            &pending_id,
            "pending",
            "12:11",
        )
        .await;
        let (a, b) = (s.service.clone(), s.service.clone());
        let (pa, pb) = (pending_id.clone(), pending_id.clone());
        let input = answer_to(&[&format!("r{round}a"), &format!("r{round}b")]);
        let first = tokio::spawn(async move { a.respond(&pa, &input).await.unwrap() });
        let second = tokio::spawn(async move { b.respond(&pb, &reject()).await.unwrap() });
        let replies = [first.await.unwrap().reply, second.await.unwrap().reply];
        assert_eq!(
            replies
                .iter()
                .filter(|r| **r == RespondReply::Success)
                .count(),
            1,
            "{replies:?}"
        );
        assert_eq!(
            replies
                .iter()
                .filter(|r| **r == RespondReply::Conflict)
                .count(),
            1,
            "{replies:?}"
        );
        for id in [format!("r{round}a"), format!("r{round}b")] {
            let row = s.fx.storage.message(&id).await.unwrap();
            assert_eq!(row.version, 1, "claimed exactly once");
            assert!(!row.status().is_pending());
        }
    }
    // Only answers resume; rejections never do. At most one resume per bundle.
    assert!(s.orchestrator.calls.load(Ordering::SeqCst) <= 3);
    let mut bundles: Vec<String> = s
        .orchestrator
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.pending_id.clone())
        .collect();
    let before = bundles.len();
    bundles.dedup();
    assert_eq!(before, bundles.len());
}
both!(racing_responses_one_winner);

/// Answers that do not cover the bundle exactly once (a question missing, an unknown id, one
/// answered twice, `""`, an answer too long) are refused as invalid with nothing written; the
/// bundle stays answerable.
async fn answers_must_cover_the_bundle(db: Db, _: Kind) {
    let s = setup(&db).await;
    let long = "x".repeat(task_projection::rules::respond::MAX_ANSWER_BYTES + 1);
    let bad = [
        json!({ "answers": [{ "question_id": "q1", "answer": "yes" }] }),
        json!({ "answers": [{ "question_id": "q1", "answer": "a" }, { "question_id": "q9", "answer": "b" }] }),
        json!({ "answers": [{ "question_id": "q1", "answer": "a" }, { "question_id": "q1", "answer": "a" }, { "question_id": "q2", "answer": "b" }] }),
        json!({ "answers": [{ "question_id": "", "answer": "a" }] }),
        json!({ "answers": [{ "question_id": "q1", "answer": long }, { "question_id": "q2", "answer": "b" }] }),
    ];
    for payload in bad {
        let input = ResponseInput {
            kind: Response::Answer,
            payload: payload.clone(),
        };
        let error = s.service.respond("p1", &input).await.unwrap_err();
        assert!(
            matches!(error, task_projection_server::ServerError::Invalid(_)),
            "{error}"
        );
        for q in ["q1", "q2"] {
            assert!(
                s.fx.storage.message(q).await.unwrap().status().is_pending(),
                "{q} after {payload}"
            );
        }
        assert!(s.fx.storage.delivery_intents().await.unwrap().is_empty());
    }
    let outcome = s.service.respond("p1", &answer()).await.unwrap();
    assert_eq!(outcome.reply, RespondReply::Success);
}
both!(answers_must_cover_the_bundle);

async fn unknown_bundle_is_not_found(db: Db, _: Kind) {
    let s = setup(&db).await;
    assert!(s.service.respond("nope", &answer()).await.is_err());
}
both!(unknown_bundle_is_not_found);

/// The respond flow on an in-memory SQLite database (one connection: the claim transaction must
/// not acquire a second one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_sqlite_respond() {
    let db = Db::memory().await.unwrap();
    let s = setup(&db).await;
    let run = async {
        let outcome = s.service.respond("p1", &answer()).await.unwrap();
        assert_eq!(outcome.reply, RespondReply::Success);
        s.service.reconcile_intents().await.unwrap()
    };
    let done = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("no pool starvation");
    assert!(done.is_empty());
}
