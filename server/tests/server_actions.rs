//! The user's actions over loopback (docs/server-api.md "REST"), on SQLite and PostgreSQL: the
//! clarification respond envelope of every SPEC §8 outcome (`success`, `claimed`, `status`,
//! `response`, and the position keys `session` / `status_summary` newer than what was read
//! before), two concurrent responders on one bundle, every permission answer and stale code
//! (`POST /api/v1/permissions/respond`), and session delete (`DELETE
//! /api/v1/task-sessions/:id`: its events, the session list, the task's projection).
#![cfg(feature = "test-client")]

#[path = "server_support/mod.rs"]
mod server_support;

use std::time::Duration;

use hyper::Method;
use serde_json::{json, Value};
use server_support::Kind;
use task_projection_server::http::client::{HttpClient, WsClient};
use task_projection_server::http::{serve_db, Config, Running};
use task_projection_server::storage::Storage;
use task_projection_server::Db;

struct Srv {
    running: Running,
    http: HttpClient,
    db: Db,
}

impl Srv {
    async fn start(db: Db) -> Srv {
        let config = Config {
            port: 0,
            simulator: true,
            stall_interval: Duration::ZERO,
            www: std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-www"),
            pkg: std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-pkg"),
            ..Config::default()
        };
        let running = serve_db(db.clone(), config).await.expect("server starts");
        let http = HttpClient::new(running.addr);
        Srv { running, http, db }
    }

    fn storage(&self) -> Storage {
        Storage::new(self.db.clone())
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        let (status, value) = self.http.post(path, &body).await.expect("request");
        assert_eq!(status, 200, "POST {path} {body}: {value}");
        value
    }

    async fn get(&self, path: &str) -> Value {
        let (status, value) = self.http.get(path).await.expect("request");
        assert_eq!(status, 200, "GET {path}: {value}");
        value
    }

    async fn delete(&self, path: &str) -> (u16, Value) {
        let (status, bytes, _) = self
            .http
            .request(Method::DELETE, path, Some(b"{}".to_vec()))
            .await
            .expect("request");
        (status, serde_json::from_slice(&bytes).expect("JSON"))
    }

    async fn task(&self) -> String {
        let v = self
            .post("/api/dev/sim/tasks", json!({ "title": "t" }))
            .await;
        v["task_id"].as_str().unwrap().to_owned()
    }

    async fn session(&self, task: &str, primary: bool) -> String {
        let path = format!("/api/dev/sim/tasks/{task}/sessions");
        let v = self.post(&path, json!({ "primary": primary })).await;
        v["session_id"].as_str().unwrap().to_owned()
    }

    async fn turn(&self, session: &str) -> String {
        let path = format!("/api/dev/sim/sessions/{session}/turns");
        let v = self.post(&path, json!({})).await;
        v["turn_id"].as_str().unwrap().to_owned()
    }

    async fn ask(&self, session: &str, questions: usize, live: bool) -> String {
        let questions: Vec<String> = (0..questions).map(|i| format!("Question {i}?")).collect();
        let path = format!("/api/dev/sim/sessions/{session}/clarification");
        let v = self
            .post(&path, json!({ "questions": questions, "live": live }))
            .await;
        v["pending_id"].as_str().unwrap().to_owned()
    }

    async fn detach(&self, session: &str, resume: &str) {
        let path = format!("/api/dev/sim/sessions/{session}/detach");
        self.post(&path, json!({ "resume": resume })).await;
    }

    async fn respond(&self, pending: &str, body: Value) -> (u16, Value) {
        let path = format!("/api/v1/clarification/{pending}/respond");
        self.http.post(&path, &body).await.expect("respond")
    }

    /// The session as the session list projects it (its revision reserved by this read).
    async fn listed(&self, task: &str, session: &str) -> Value {
        let list = self
            .get(&format!("/api/v1/tasks/{task}/task-sessions"))
            .await;
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == session)
            .cloned()
            .unwrap_or_else(|| panic!("session {session} listed: {list}"))
    }

    async fn task_json(&self, task: &str) -> Value {
        let tasks = self.get("/api/v1/tasks").await;
        tasks["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == task)
            .cloned()
            .unwrap_or_else(|| panic!("task {task} listed"))
    }

    async fn message(&self, session: &str, id: &str) -> Value {
        let messages = self
            .get(&format!("/api/v1/task-sessions/{session}/messages"))
            .await;
        messages["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("message {id}"))
    }

    async fn socket(&self) -> WsClient {
        self.running.app.settle().await;
        let mut ws = WsClient::connect(self.running.addr).await.expect("ws");
        let hello = ws.next().await.expect("hello").expect("a frame");
        assert_eq!(hello["type"], "server.hello");
        ws
    }

    /// Frames until a marker frame sent through the simulator's replay.
    async fn frames_until_marker(&self, ws: &mut WsClient) -> Vec<Value> {
        let marker = uuid::Uuid::new_v4().to_string();
        let frame =
            json!({ "type": "task.stalled", "payload": { "task_id": "marker", "marker": marker } });
        self.post("/api/dev/sim/replay", json!({ "frames": [frame] }))
            .await;
        let mut frames = Vec::new();
        loop {
            let frame = ws
                .next_within(Duration::from_secs(10))
                .await
                .expect("read")
                .expect("a frame before the marker");
            if frame["payload"]["marker"] == marker.as_str() {
                return frames;
            }
            frames.push(frame);
        }
    }

    async fn stop(self) {
        self.running.shutdown().await;
        self.db.close().await;
    }
}

/// `(epoch, sequence)` of a revision object, comparable (epochs here are short decimals).
fn revision(value: &Value) -> (u64, u64) {
    let epoch = value["epoch"].as_str().expect("epoch").parse().unwrap();
    (epoch, value["sequence"].as_u64().expect("sequence"))
}

/// The position keys of a reply: the session is `session`'s, its revision is newer than
/// `before` (the session list read before the call), and the summary (when `summary_before` is
/// given) is at least as new.
fn assert_position(body: &Value, task: &str, session: &str, before: &Value, summary: &Value) {
    let position = &body["session"];
    assert_eq!(position["id"], session, "{body}");
    assert_eq!(position["task_id"], task, "{body}");
    assert!(position.get("pending_action").is_some(), "{body}");
    assert!(
        revision(&position["pending_action_revision"])
            > revision(&before["pending_action_revision"]),
        "the reply's position is newer than the list read before it: {body} vs {before}"
    );
    let keys: Vec<&String> = position.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 4, "exactly the event's keys: {position}");
    let revision_after = body["status_summary"]["revision"]
        .as_u64()
        .expect("summary");
    assert!(
        revision_after >= summary["revision"].as_u64().unwrap(),
        "{body}"
    );
}

/// The keys every 200 and 409 envelope carries, and none of the 5xx ones.
fn assert_envelope(body: &Value, success: bool, outcome: &str, state: &str) {
    assert_eq!(body["success"], success, "{body}");
    assert_eq!(body["outcome"], outcome, "{body}");
    assert_eq!(body["result"], outcome, "{body}");
    assert_eq!(body["state"], state, "{body}");
}

// ---- the respond envelope of every outcome -----------------------------------------------------

async fn respond_envelope(db: Db, _: Kind) {
    let srv = Srv::start(db).await;
    let task = srv.task().await;
    let session = srv.session(&task, true).await;
    srv.turn(&session).await;

    // Live answer: 200, this call claimed it; its answers as the reference client reads them.
    let live = srv.ask(&session, 2, true).await;
    let before = srv.listed(&task, &session).await;
    let summary = srv.task_json(&task).await["status_summary"].clone();
    assert_eq!(summary["pending_action"], "clarification");
    let answers = json!({ "answers": [
        { "question_id": "q2", "answer": "b" }, { "question_id": "q1", "answer": "a" }
    ] });
    let (status, body) = srv.respond(&live, answers.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_envelope(&body, true, "success", "active_live");
    assert_eq!(body["claimed"], true);
    assert_eq!(body["status"], "answered");
    let response = &body["response"];
    assert_eq!(response["pending_id"], live.as_str());
    assert_eq!(
        response["answers"],
        json!([
            { "question_id": "q1", "selected_options": [], "custom_text": "a" },
            { "question_id": "q2", "selected_options": [], "custom_text": "b" },
        ]),
        "in the bundle's order"
    );
    assert_eq!(response["rejected"], false);
    assert_eq!(response["reject_reason"], "");
    assert!(response["responded_at"].is_string(), "{response}");
    assert_position(&body, &task, &session, &before, &summary);
    assert_eq!(body["session"]["pending_action"], Value::Null);
    assert!(
        body["status_summary"].get("pending_action").is_none(),
        "{body}"
    );
    assert!(body["status_summary"]["revision"].as_u64() > summary["revision"].as_u64());

    // Answering again (a reject this time): 200, claimed false, the winner's status and response.
    let before = srv.listed(&task, &session).await;
    let (status, again) = srv.respond(&live, json!({ "reject": true })).await;
    assert_eq!(status, 200, "{again}");
    assert_envelope(&again, true, "conflict", "terminal");
    assert_eq!(again["claimed"], false);
    assert_eq!(
        again["status"], "answered",
        "the winner's status, not the loser's"
    );
    assert_eq!(again["response"], body["response"], "the winner's response");
    assert_position(&again, &task, &session, &before, &body["status_summary"]);

    // Live reject (Skip): claimed, rejected, no answers.
    srv.turn(&session).await;
    let skip = srv.ask(&session, 1, true).await;
    let (status, body) = srv.respond(&skip, json!({ "reject": true })).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["claimed"].as_bool(), body["status"].as_str()),
        (Some(true), Some("rejected"))
    );
    assert_eq!(body["response"]["rejected"], true);
    assert_eq!(body["response"]["answers"], json!([]));
    let (status, lost) = srv
        .respond(
            &skip,
            json!({ "answers": [{ "question_id": "q1", "answer": "x" }] }),
        )
        .await;
    assert_eq!(status, 200, "{lost}");
    assert_eq!(
        (lost["claimed"].as_bool(), lost["status"].as_str()),
        (Some(false), Some("rejected"))
    );

    // Detached answer: claimed after one acknowledged resume.
    srv.turn(&session).await;
    let detached = srv.ask(&session, 1, true).await;
    srv.detach(&session, "accepted").await;
    let one = json!({ "answers": [{ "question_id": "q1", "answer": "a" }] });
    let (status, body) = srv.respond(&detached, one.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_envelope(&body, true, "success", "active_detached");
    assert_eq!(body["claimed"], true);

    // Retryable (503) and non-retryable (500): no position keys, the claim was this call's.
    srv.turn(&session).await;
    let refused = srv.ask(&session, 1, false).await;
    srv.detach(&session, "not_accepted").await;
    let (status, body) = srv.respond(&refused, one.clone()).await;
    assert_eq!(status, 503, "{body}");
    assert_envelope(&body, false, "retryable_error", "active_detached");
    assert_eq!(body["claimed"], true);
    assert_eq!(body["error"]["code"], "retryable_error");
    assert!(
        body.get("session").is_none() && body.get("status_summary").is_none(),
        "{body}"
    );
    srv.detach(&session, "ambiguous").await;
    let (status, body) = srv.respond(&refused, one.clone()).await;
    assert_eq!(status, 500, "{body}");
    assert_envelope(&body, false, "non_retryable_error", "active_detached");
    assert_eq!(body["error"]["code"], "non_retryable_error");
    assert!(body.get("session").is_none(), "{body}");
    // The ambiguous answer stays terminal: a later response lost to it.
    let (status, body) = srv.respond(&refused, json!({ "reject": true })).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["claimed"].as_bool(), body["status"].as_str()),
        (Some(false), Some("answered"))
    );
    assert_eq!(body["response"]["answers"][0]["custom_text"], "a");

    // Superseded: no winner, 409 with an error object and the position keys.
    srv.detach(&session, "accepted").await;
    let old = srv.ask(&session, 1, true).await;
    srv.turn(&session).await;
    let before = srv.listed(&task, &session).await;
    let summary = srv.task_json(&task).await["status_summary"].clone();
    let (status, body) = srv.respond(&old, one.clone()).await;
    assert_eq!(status, 409, "{body}");
    assert_envelope(&body, false, "conflict", "superseded_history");
    assert_eq!(body["error"]["code"], "clarification_not_active");
    assert!(
        body.get("claimed").is_none() && body.get("response").is_none(),
        "{body}"
    );
    assert_position(&body, &task, &session, &before, &summary);

    // Expired (every row ended unanswered): terminal, no winner → 409.
    let expiring = srv.ask(&session, 2, true).await;
    let storage = srv.storage();
    for row in storage.messages_of_session(&session).await.unwrap() {
        if row.metadata["pending_id"] == expiring.as_str() {
            let mut metadata = row.metadata.clone();
            metadata["status"] = json!("expired");
            storage
                .cas_message_metadata(&row, &metadata, "2030-01-01T00:00:00Z")
                .await
                .unwrap()
                .unwrap();
        }
    }
    let (status, body) = srv.respond(&expiring, json!({ "reject": true })).await;
    assert_eq!(status, 409, "{body}");
    assert_envelope(&body, false, "conflict", "terminal");
    assert_eq!(body["session"]["id"], session.as_str());

    // Unknown bundle: 404 as before.
    let (status, body) = srv.respond("nope", json!({ "reject": true })).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_found"))
    );
    srv.stop().await;
}
both!(respond_envelope);

// ---- two concurrent responders on one bundle ------------------------------------------------

async fn concurrent_responders(db: Db, _: Kind) {
    let srv = Srv::start(db).await;
    let task = srv.task().await;
    let session = srv.session(&task, true).await;
    for round in 0..4 {
        srv.turn(&session).await;
        let live = round % 2 == 0;
        let pending = srv.ask(&session, 1, live).await;
        if !live {
            srv.detach(&session, "accepted").await;
        }
        let path = format!("/api/v1/clarification/{pending}/respond");
        // Two clients (each its own connection), one answer and one reject, at once.
        let (a, b) = (
            HttpClient::new(srv.running.addr),
            HttpClient::new(srv.running.addr),
        );
        let answer =
            json!({ "answers": [{ "question_id": "q1", "answer": format!("first {round}") }] });
        let reject = json!({ "reject": true });
        let (first, second) = tokio::join!(a.post(&path, &answer), b.post(&path, &reject));
        let (first, second) = (first.unwrap(), second.unwrap());
        assert_eq!((first.0, second.0), (200, 200), "{first:?} {second:?}");
        let claimed: Vec<bool> = [&first.1, &second.1]
            .iter()
            .map(|b| b["claimed"].as_bool().unwrap())
            .collect();
        assert_eq!(
            claimed.iter().filter(|c| **c).count(),
            1,
            "exactly one claims: {first:?} {second:?}"
        );
        let (winner, loser) = if claimed[0] {
            (&first.1, &second.1)
        } else {
            (&second.1, &first.1)
        };
        let expected = if claimed[0] { "answered" } else { "rejected" };
        assert_eq!(winner["status"], expected);
        assert_eq!(loser["success"], true);
        assert_eq!(
            loser["status"], winner["status"],
            "the loser reports the winner"
        );
        assert_eq!(loser["response"], winner["response"]);
        let row = srv
            .storage()
            .messages_of_session(&session)
            .await
            .unwrap()
            .into_iter()
            .find(|m| m.metadata["pending_id"] == pending.as_str())
            .unwrap();
        assert_eq!(
            row.metadata["status"], expected,
            "the winner's write stands"
        );
    }
    srv.stop().await;
}
both!(concurrent_responders);

// ---- permissions answered by the user ----------------------------------------------------------

struct Permission {
    message_id: String,
    pending_id: String,
    request_id: String,
}

async fn ask_permission(srv: &Srv, session: &str, open_turn: bool) -> Permission {
    let path = format!("/api/dev/sim/sessions/{session}/permission");
    let v = srv
        .post(&path, json!({ "text": "Run it?", "open_turn": open_turn }))
        .await;
    let text = |key: &str| {
        v[key]
            .as_str()
            .unwrap_or_else(|| panic!("{key}: {v}"))
            .to_owned()
    };
    Permission {
        message_id: text("message_id"),
        pending_id: text("pending_id"),
        request_id: text("request_id"),
    }
}

fn permission_body(task: &str, session: &str, p: &Permission, option: Option<&str>) -> Value {
    let mut body = json!({
        "task_id": task,
        "session_id": session,
        "request_id": p.request_id,
        "pending_id": p.pending_id,
    });
    match option {
        Some(option) => body["option_id"] = json!(option),
        None => body["cancelled"] = json!(true),
    }
    body
}

async fn answer_permission(srv: &Srv, body: &Value) -> (u16, Value) {
    srv.http
        .post("/api/v1/permissions/respond", body)
        .await
        .expect("permission respond")
}

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or_default()
}

async fn permission_respond(db: Db, _: Kind) {
    let srv = Srv::start(db).await;
    let task = srv.task().await;
    let session = srv.session(&task, true).await;
    srv.turn(&session).await;

    // The simulator's permission carries its identity and options.
    let p = ask_permission(&srv, &session, false).await;
    let row = srv.message(&session, &p.message_id).await;
    assert_eq!(
        row["metadata"]["request_id"],
        p.request_id.as_str(),
        "{row}"
    );
    assert_eq!(
        row["metadata"]["pending_id"],
        p.pending_id.as_str(),
        "{row}"
    );
    assert!(
        row["metadata"]["options"].as_array().unwrap().len() >= 2,
        "{row}"
    );
    assert_eq!(
        srv.task_json(&task).await["task_pending_action"],
        "permission"
    );

    // Approve: the row is approved, the event carries the projection, the session runs again.
    let mut ws = srv.socket().await;
    let before = srv.listed(&task, &session).await;
    let summary = srv.task_json(&task).await["status_summary"].clone();
    let (status, body) = answer_permission(
        &srv,
        &permission_body(&task, &session, &p, Some("allow_once")),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["success"], true);
    assert_eq!(body["status"], "approved");
    assert_eq!(body["message_id"], p.message_id.as_str());
    assert_eq!(
        (body["session_id"].as_str(), body["pending_id"].as_str()),
        (Some(session.as_str()), Some(p.pending_id.as_str()))
    );
    assert_position(&body, &task, &session, &before, &summary);
    assert_eq!(body["session"]["pending_action"], Value::Null);
    let frames = srv.frames_until_marker(&mut ws).await;
    let updated = frames
        .iter()
        .find(|f| {
            f["type"] == "session.message.updated"
                && f["payload"]["message_id"] == p.message_id.as_str()
        })
        .unwrap_or_else(|| panic!("the update: {frames:?}"));
    assert_eq!(updated["payload"]["metadata"]["status"], "approved");
    assert_eq!(updated["payload"]["pending_action"], Value::Null);
    assert!(updated["payload"]["pending_action_revision"].is_object());
    assert!(
        frames
            .iter()
            .any(|f| f["type"] == "session.state_changed" && f["payload"]["state"] == "RUNNING"),
        "{frames:?}"
    );
    assert_eq!(
        srv.message(&session, &p.message_id).await["metadata"]["status"],
        "approved"
    );
    assert_eq!(
        srv.task_json(&task).await["task_pending_action"],
        Value::Null
    );

    // Again: already resolved, nothing written.
    let (status, body) = answer_permission(
        &srv,
        &permission_body(&task, &session, &p, Some("reject_once")),
    )
    .await;
    assert_eq!(
        (status, code(&body)),
        (409, "permission_already_resolved"),
        "{body}"
    );
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("permission_already_resolved"));

    // A reject option rejects; a cancellation rejects.
    for option in [Some("reject_once"), None] {
        let p = ask_permission(&srv, &session, false).await;
        let (status, body) =
            answer_permission(&srv, &permission_body(&task, &session, &p, option)).await;
        assert_eq!(
            (status, body["status"].as_str()),
            (200, Some("rejected")),
            "{option:?} {body}"
        );
        assert_eq!(
            srv.message(&session, &p.message_id).await["metadata"]["status"],
            "rejected"
        );
    }

    // An option not offered, a bad body, another task: refused, nothing written.
    let p = ask_permission(&srv, &session, false).await;
    let (status, body) =
        answer_permission(&srv, &permission_body(&task, &session, &p, Some("nope"))).await;
    assert_eq!(
        (status, code(&body)),
        (400, "permission_option_not_offered"),
        "{body}"
    );
    for bad in [
        json!({}),
        json!({ "task_id": task, "session_id": session, "pending_id": p.pending_id, "option_id": "allow_once" }),
        json!({ "task_id": task, "session_id": session, "request_id": p.request_id, "pending_id": p.pending_id }),
        json!({ "task_id": task, "session_id": session, "request_id": p.request_id, "pending_id": p.pending_id, "cancelled": "yes" }),
    ] {
        let (status, body) = answer_permission(&srv, &bad).await;
        assert_eq!((status, code(&body)), (400, "bad_request"), "{bad}: {body}");
    }
    let other_task = srv.task().await;
    let (status, body) = answer_permission(
        &srv,
        &permission_body(&other_task, &session, &p, Some("allow_once")),
    )
    .await;
    assert_eq!(
        (status, code(&body)),
        (404, "task_or_session_not_found"),
        "{body}"
    );
    let mut unknown = permission_body(&task, "no-such-session", &p, Some("allow_once"));
    let (status, body) = answer_permission(&srv, &unknown).await;
    assert_eq!(
        (status, code(&body)),
        (404, "task_or_session_not_found"),
        "{body}"
    );

    // Stale: another request id (a newer generation of the request).
    unknown = permission_body(&task, &session, &p, Some("allow_once"));
    unknown["request_id"] = json!("req-other");
    let (status, body) = answer_permission(&srv, &unknown).await;
    assert_eq!((status, code(&body)), (409, "permission_stale"), "{body}");
    // Not found: no such pending id.
    unknown = permission_body(&task, &session, &p, Some("allow_once"));
    unknown["pending_id"] = json!("perm-none");
    let (status, body) = answer_permission(&srv, &unknown).await;
    assert_eq!(
        (status, code(&body)),
        (404, "permission_not_found"),
        "{body}"
    );
    assert_eq!(
        srv.message(&session, &p.message_id).await["metadata"]["status"],
        "pending"
    );

    // Stale: not the latest permission of the current turn.
    let newer = ask_permission(&srv, &session, false).await;
    let (status, body) = answer_permission(
        &srv,
        &permission_body(&task, &session, &p, Some("allow_once")),
    )
    .await;
    assert_eq!((status, code(&body)), (409, "permission_stale"), "{body}");
    // Stale: a superseded turn's permission.
    srv.post(
        &format!("/api/dev/sim/sessions/{session}/turns"),
        json!({ "close_open": true }),
    )
    .await;
    let (status, body) = answer_permission(
        &srv,
        &permission_body(&task, &session, &newer, Some("allow_once")),
    )
    .await;
    assert_eq!((status, code(&body)), (409, "permission_stale"), "{body}");

    // A pending permission without a request_id: expired, not answerable; the session's
    // projection no longer counts it.
    let bare = ask_permission(&srv, &session, false).await;
    let storage = srv.storage();
    let row = storage.message(&bare.message_id).await.unwrap();
    let mut metadata = row.metadata.clone();
    metadata.as_object_mut().unwrap().remove("request_id");
    storage
        .cas_message_metadata(&row, &metadata, "2030-01-01T00:00:00Z")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        srv.listed(&task, &session).await["pending_action"],
        "permission"
    );
    let (status, body) = answer_permission(
        &srv,
        &permission_body(&task, &session, &bare, Some("allow_once")),
    )
    .await;
    assert_eq!(
        (status, code(&body)),
        (404, "permission_not_found"),
        "{body}"
    );
    assert_eq!(
        srv.message(&session, &bare.message_id).await["metadata"]["status"],
        "expired"
    );
    assert_eq!(
        srv.listed(&task, &session).await["pending_action"],
        Value::Null
    );
    let (status, body) = answer_permission(
        &srv,
        &permission_body(&task, &session, &bare, Some("allow_once")),
    )
    .await;
    assert_eq!(
        (status, code(&body)),
        (404, "permission_not_found"),
        "an expired row stays not found: {body}"
    );
    srv.stop().await;
}
both!(permission_respond);

// ---- session delete ------------------------------------------------------------------------------

async fn session_delete(db: Db, _: Kind) {
    let srv = Srv::start(db).await;
    let task = srv.task().await;
    let kept = srv.session(&task, false).await;
    let doomed = srv.session(&task, true).await;
    srv.turn(&doomed).await;
    ask_permission(&srv, &doomed, false).await;
    assert_eq!(
        srv.task_json(&task).await["task_pending_action"],
        "permission"
    );
    let summary = srv.task_json(&task).await["status_summary"].clone();
    assert_eq!(summary["pending_action"], "permission");

    // A running session is not deleted.
    let (status, body) = srv.delete(&format!("/api/v1/task-sessions/{kept}")).await;
    assert_eq!((status, code(&body)), (409, "session_running"), "{body}");

    let mut ws = srv.socket().await;
    let (status, body) = srv.delete(&format!("/api/v1/task-sessions/{doomed}")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["success"], true);
    assert_eq!(
        (body["session_id"].as_str(), body["task_id"].as_str()),
        (Some(doomed.as_str()), Some(task.as_str()))
    );
    assert!(
        body["status_summary"].get("pending_action").is_none(),
        "{body}"
    );
    assert!(body["status_summary"]["revision"].as_u64() > summary["revision"].as_u64());

    let frames = srv.frames_until_marker(&mut ws).await;
    let names: Vec<&str> = frames.iter().filter_map(|f| f["type"].as_str()).collect();
    let deleted = frames
        .iter()
        .find(|f| f["type"] == "session.deleted")
        .unwrap_or_else(|| panic!("{names:?}"));
    assert_eq!(
        deleted["payload"],
        json!({ "session_id": doomed, "task_id": task, "workspace_id": "ws-demo" })
    );
    let error = frames
        .iter()
        .find(|f| f["type"] == "task_session.error_changed")
        .unwrap_or_else(|| panic!("{names:?}"));
    assert_eq!(
        error["payload"],
        json!({ "task_id": task, "session_id": doomed, "active": false })
    );
    let summary_event = frames
        .iter()
        .find(|f| f["type"] == "task.status_summary.updated")
        .unwrap_or_else(|| panic!("{names:?}"));
    assert!(summary_event["payload"]["status_summary"]
        .get("pending_action")
        .is_none());
    let updated = frames
        .iter()
        .find(|f| f["type"] == "task.updated")
        .unwrap_or_else(|| panic!("{names:?}"));
    assert_eq!(updated["payload"]["task_pending_action"], Value::Null);
    let at = |name: &str| names.iter().position(|n| *n == name).unwrap();
    assert!(
        at("session.deleted") < at("task.status_summary.updated"),
        "{names:?}"
    );

    // The list, the task and the session's reads follow.
    let sessions = srv
        .get(&format!("/api/v1/tasks/{task}/task-sessions"))
        .await;
    let ids: Vec<&str> = sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(ids, [kept.as_str()]);
    let task_json = srv.task_json(&task).await;
    assert_eq!(task_json["task_pending_action"], Value::Null);
    assert!(
        task_json["status_summary"].get("pending_action").is_none(),
        "{task_json}"
    );
    let (status, _) = srv
        .http
        .get(&format!("/api/v1/task-sessions/{doomed}/messages"))
        .await
        .unwrap();
    assert_eq!(status, 404);
    let (status, _) = srv
        .http
        .get(&format!("/api/v1/task-sessions/{doomed}/turns"))
        .await
        .unwrap();
    assert_eq!(status, 404);

    // Again, and an unknown session: 404.
    let (status, body) = srv.delete(&format!("/api/v1/task-sessions/{doomed}")).await;
    assert_eq!((status, code(&body)), (404, "not_found"), "{body}");

    // A stopped session with a clarification bundle: its bundle is gone with it.
    srv.post(&format!("/api/dev/sim/sessions/{kept}/turns"), json!({}))
        .await;
    let pending = srv.ask(&kept, 1, true).await;
    srv.post(
        &format!("/api/dev/sim/sessions/{kept}/state"),
        json!({ "state": "CANCELLED" }),
    )
    .await;
    let (status, body) = srv.delete(&format!("/api/v1/task-sessions/{kept}")).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = srv.respond(&pending, json!({ "reject": true })).await;
    assert_eq!((status, code(&body)), (404, "not_found"), "{body}");
    assert_eq!(
        srv.get(&format!("/api/v1/tasks/{task}/task-sessions"))
            .await["sessions"],
        json!([])
    );
    srv.stop().await;
}
both!(session_delete);
