//! The reference server over loopback (docs/server-api.md), on SQLite and PostgreSQL: every REST
//! route's shape and error codes, respond outcomes, the 500 instead of a falsely clean session
//! list, WebSocket frames decoded by the native `ProjectionStore` and converging to the REST
//! answers, a simulated restart (new epoch, old-epoch frames rejected), the stall sweep, static
//! files, and the binary's exit codes.
#![cfg(feature = "test-client")]

#[path = "server_support/mod.rs"]
mod server_support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use server_support::{fresh_url, Kind};
use task_projection::store::Reason;
use task_projection_server::http::client::{check_converged, HttpClient, Mirror, WsClient};
use task_projection_server::http::{database_url, parse_args, serve_db, Args, Config, Running};
use task_projection_server::storage::Storage;
use task_projection_server::Db;

const BIN: &str = env!("CARGO_BIN_EXE_task-projection-server");

/// A server on a fresh database with the simulator on, and a client.
struct Srv {
    running: Running,
    http: HttpClient,
    db: Db,
}

fn config() -> Config {
    Config {
        port: 0,
        simulator: true,
        stall_interval: Duration::ZERO,
        www: std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-www"),
        pkg: std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-pkg"),
        ..Config::default()
    }
}

impl Srv {
    async fn start(db: Db) -> Srv {
        Srv::with(db, config()).await
    }

    async fn with(db: Db, config: Config) -> Srv {
        let running = serve_db(db.clone(), config).await.expect("server starts");
        let http = HttpClient::new(running.addr);
        Srv { running, http, db }
    }

    /// A client as the browser runs it: the WebSocket first (`server.hello` is its first
    /// frame), then the REST boot of a native store.
    async fn client(&self) -> (WsClient, Mirror) {
        // What was published before is delivered first (PostgreSQL: through the outbox), so the
        // socket starts after it, as a test expects.
        self.running.app.settle().await;
        let mut ws = WsClient::connect(self.running.addr).await.expect("ws");
        let hello = ws.next().await.expect("hello").expect("a frame");
        assert_eq!(hello["type"], "server.hello", "{hello}");
        let mut mirror = Mirror::new();
        assert_eq!(mirror.apply(&hello).unwrap(), None);
        assert!(mirror.epoch.is_some());
        mirror.boot(&self.http).await.expect("boot");
        (ws, mirror)
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        let (status, value) = self.http.post(path, &body).await.expect("request");
        assert_eq!(status, 200, "POST {path} {body}: {value}");
        assert_eq!(value["ok"], true, "{value}");
        value
    }

    async fn get(&self, path: &str) -> Value {
        let (status, value) = self.http.get(path).await.expect("request");
        assert_eq!(status, 200, "GET {path}: {value}");
        value
    }

    async fn task(&self, title: &str) -> String {
        let v = self
            .post("/api/dev/sim/tasks", json!({ "title": title }))
            .await;
        v["task_id"].as_str().unwrap().to_owned()
    }

    async fn session(&self, task: &str, primary: bool) -> String {
        let v = self
            .post(
                &format!("/api/dev/sim/tasks/{task}/sessions"),
                json!({ "primary": primary }),
            )
            .await;
        v["session_id"].as_str().unwrap().to_owned()
    }

    async fn turn(&self, session: &str) -> String {
        let v = self
            .post(&format!("/api/dev/sim/sessions/{session}/turns"), json!({}))
            .await;
        v["turn_id"].as_str().unwrap().to_owned()
    }

    async fn ask(&self, session: &str, questions: usize, live: bool) -> (String, Vec<String>) {
        let questions: Vec<String> = (0..questions).map(|i| format!("Question {i}?")).collect();
        let v = self
            .post(
                &format!("/api/dev/sim/sessions/{session}/clarification"),
                json!({ "questions": questions, "live": live }),
            )
            .await;
        let ids = v["message_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_str().unwrap().to_owned())
            .collect();
        (v["pending_id"].as_str().unwrap().to_owned(), ids)
    }

    async fn respond(&self, pending: &str, body: Value) -> (u16, Value) {
        self.http
            .post(&format!("/api/v1/clarification/{pending}/respond"), &body)
            .await
            .expect("respond")
    }

    async fn sessions(&self, task: &str) -> Vec<Value> {
        self.get(&format!("/api/v1/tasks/{task}/task-sessions"))
            .await["sessions"]
            .as_array()
            .unwrap()
            .clone()
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

    /// Frames until a marker frame (sent through the simulator's replay), applied in order.
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

/// Frames without their `offset` (for comparing events by content).
fn bare(frames: &[Value]) -> Vec<Value> {
    frames
        .iter()
        .map(|frame| {
            let mut frame = frame.clone();
            if let Some(map) = frame.as_object_mut() {
                map.remove("offset");
            }
            frame
        })
        .collect()
}

/// Applies frames to a mirror, asserting every one decodes and none is rejected as misrouted.
fn apply_all(mirror: &mut Mirror, frames: &[Value]) {
    for frame in frames {
        let reason = mirror
            .apply(frame)
            .unwrap_or_else(|e| panic!("{e}\nframe: {frame}"));
        assert_ne!(reason, Some(Reason::TaskMismatchRejected), "{frame}");
    }
}

// ---- REST shapes and error codes ----------------------------------------------------------------

async fn rest_shapes(db: Db, _: Kind) {
    let mut config = config();
    config.seed_demo = true;
    let srv = Srv::with(db, config).await;

    let health = srv.get("/healthz").await;
    assert_eq!(health["ok"], true);
    let epoch = health["epoch"]
        .as_str()
        .expect("epoch is a string")
        .to_owned();
    assert!(epoch.bytes().all(|b| b.is_ascii_digit()), "{epoch}");

    // Tasks: the three demo tasks, newest first, with summary and legacy fields.
    let tasks = srv.get("/api/v1/tasks").await["tasks"].clone();
    let tasks = tasks.as_array().unwrap();
    assert_eq!(tasks.len(), 3);
    let titles: Vec<&str> = tasks.iter().map(|t| t["title"].as_str().unwrap()).collect();
    assert_eq!(
        titles,
        [
            "Deploy preview environment",
            "Upgrade the CI pipeline",
            "Refactor the billing module"
        ]
    );
    let actions: Vec<&Value> = tasks.iter().map(|t| &t["task_pending_action"]).collect();
    assert_eq!(
        actions,
        [
            &json!("permission"),
            &json!("clarification"),
            &json!("clarification")
        ]
    );
    for task in tasks {
        let summary = &task["status_summary"];
        assert!(summary["revision"].as_u64().unwrap() >= 1, "{task}");
        assert_eq!(
            summary["pending_action"], task["task_pending_action"],
            "{task}"
        );
        assert!(task.get("status_summary_invalidated").is_none(), "{task}");
        assert!(
            task.get("primary_session_pending_action").is_some(),
            "{task}"
        );
        assert_eq!(task["workspace_id"], "ws-demo");
    }
    // The CI task: the current question is the secondary session's; the primary is clean.
    let ci = &tasks[1];
    assert_eq!(ci["primary_session_pending_action"], Value::Null);
    let ci_id = ci["id"].as_str().unwrap();

    // Sessions: newest first, each with its projection and revision.
    let sessions = srv.sessions(ci_id).await;
    assert_eq!(sessions.len(), 2);
    assert!(sessions[0]["started_at"].as_str() > sessions[1]["started_at"].as_str());
    assert_eq!(sessions[0]["is_primary"], false);
    assert_eq!(sessions[0]["pending_action"], "clarification");
    assert_eq!(sessions[1]["is_primary"], true);
    assert_eq!(sessions[1]["pending_action"], Value::Null);
    for s in &sessions {
        for key in ["id", "task_id", "state", "started_at", "updated_at"] {
            assert!(s[key].is_string(), "{key} in {s}");
        }
        assert_eq!(s["pending_action_revision"]["epoch"], epoch.as_str());
        assert!(s["pending_action_revision"]["sequence"].is_u64(), "{s}");
    }

    // Turns (ascending) and messages (creation order) of the primary session.
    let primary = sessions[1]["id"].as_str().unwrap();
    let turns = srv
        .get(&format!("/api/v1/task-sessions/{primary}/turns"))
        .await["turns"]
        .clone();
    let turns = turns.as_array().unwrap();
    assert_eq!(turns.len(), 2);
    assert!(turns[0]["started_at"].as_str() < turns[1]["started_at"].as_str());
    assert!(
        turns[0]["completed_at"].is_string(),
        "the first turn completed"
    );
    assert!(turns[1]["completed_at"].is_null(), "the second is open");
    for t in turns {
        assert_eq!(t["session_id"], primary);
        for key in ["id", "task_id", "started_at", "created_at", "updated_at"] {
            assert!(t[key].is_string(), "{key} in {t}");
        }
    }
    let messages = srv
        .get(&format!("/api/v1/task-sessions/{primary}/messages"))
        .await["messages"]
        .clone();
    let messages = messages.as_array().unwrap();
    let kinds: Vec<&str> = messages
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["message", "clarification_request", "message", "message"]
    );
    let question = &messages[1];
    assert_eq!(question["turn_id"], turns[0]["id"]);
    assert_eq!(question["metadata"]["status"], "pending");
    assert_eq!(question["metadata"]["agent_disconnected"], true);
    for m in messages {
        for key in [
            "id",
            "session_id",
            "task_id",
            "author_type",
            "type",
            "created_at",
        ] {
            assert!(m[key].is_string(), "{key} in {m}");
        }
    }
    let created: Vec<&str> = messages
        .iter()
        .map(|m| m["created_at"].as_str().unwrap())
        .collect();
    assert!(created.windows(2).all(|w| w[0] <= w[1]), "{created:?}");

    // The superseded detached question answers 409 (SPEC §8); the secondary's live one 200.
    let pending = question["metadata"]["pending_id"].as_str().unwrap();
    let (status, body) = srv.respond(pending, json!({ "reject": true })).await;
    assert_eq!(
        (status, body["outcome"].as_str()),
        (409, Some("conflict")),
        "{body}"
    );
    assert_eq!(body["state"], "superseded_history");

    // 404s.
    for path in [
        "/api/v1/tasks/nope/task-sessions",
        "/api/v1/task-sessions/nope/turns",
        "/api/v1/task-sessions/nope/messages",
        "/api/v1/unknown",
    ] {
        let (status, body) = srv.http.get(path).await.unwrap();
        assert_eq!(status, 404, "{path}: {body}");
        assert_eq!(body["error"]["code"], "not_found", "{path}: {body}");
        assert!(body["error"]["message"].is_string());
    }
    let (status, body) = srv.respond("nope", json!({ "reject": true })).await;
    assert_eq!((status, &body["error"]["code"]), (404, &json!("not_found")));
    for (path, body) in [
        ("/api/dev/sim/tasks/nope/sessions", json!({})),
        ("/api/dev/sim/sessions/nope/turns", json!({})),
        ("/api/dev/sim/turns/nope/complete", json!({})),
        (
            "/api/dev/sim/permissions/nope/resolve",
            json!({ "status": "approved" }),
        ),
    ] {
        let (status, reply) = srv.http.post(path, &body).await.unwrap();
        assert_eq!(status, 404, "{path}: {reply}");
    }

    // 400s: bodies that are not JSON, not an object, or not a respond body.
    let pending_live = {
        let secondary = sessions[0]["id"].as_str().unwrap();
        let messages = srv
            .get(&format!("/api/v1/task-sessions/{secondary}/messages"))
            .await;
        let last = messages["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        last["metadata"]["pending_id"].as_str().unwrap().to_owned()
    };
    let path = format!("/api/v1/clarification/{pending_live}/respond");
    let (status, _, _) = srv
        .http
        .request(hyper::Method::POST, &path, Some(b"{not json".to_vec()))
        .await
        .unwrap();
    assert_eq!(status, 400);
    for bad in [
        json!([1]),
        json!({}),
        json!({ "answers": [] }),
        json!({ "answers": [{ "question_id": "q1" }] }),
        json!({ "answers": [{ "question_id": "q1", "answer": "x" }], "reject": true }),
        json!({ "reject": false }),
    ] {
        let (status, body) = srv.http.post(&path, &bad).await.unwrap();
        assert_eq!(status, 400, "{bad}: {body}");
        assert_eq!(body["error"]["code"], "bad_request");
    }
    let (status, _) = srv
        .http
        .post(
            &format!("/api/dev/sim/sessions/{primary}/state"),
            &json!({ "state": "SLEEPING" }),
        )
        .await
        .unwrap();
    assert_eq!(status, 400);
    // The bad requests changed nothing: the live bundle still answers.
    let (status, body) = srv
        .respond(
            &pending_live,
            json!({ "answers": [{ "question_id": "q1", "answer": "yes" }] }),
        )
        .await;
    assert_eq!(
        (status, body["state"].as_str()),
        (200, Some("active_live")),
        "{body}"
    );
    assert_eq!(body["outcome"], "success");
    srv.stop().await;
}
both!(rest_shapes);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulator_is_off_by_default() {
    let db = server_support::fresh(Kind::Sqlite).await.unwrap();
    let mut config = config();
    config.simulator = false;
    let srv = Srv::with(db, config).await;
    let (status, body) = srv
        .http
        .post("/api/dev/sim/tasks", &json!({ "title": "x" }))
        .await
        .unwrap();
    assert_eq!(status, 404, "{body}");
    let (status, body) = srv.http.get("/api/dev/sim").await.unwrap();
    assert_eq!(status, 404, "the probe says no simulator: {body}");
    let listed = srv.get("/api/v1/tasks").await;
    assert_eq!(listed["tasks"], json!([]), "{listed}");
    srv.stop().await;
}

// ---- the demo page's simulator controls -------------------------------------------------------

/// What the demo page's "Play the agent" panel calls: the probe; asking in an open turn (one is
/// started when the current turn is completed or missing); a new turn that completes the open
/// ones first (their question becomes superseded history); a session's pending permission
/// resolved; a resumed detached answer written as the user's text; and reset (every task
/// deleted, the demo tasks written again), which a client's store follows frame by frame.
async fn simulator_controls(db: Db, _: Kind) {
    let srv = Srv::start(db).await;
    assert_eq!(srv.get("/api/dev/sim").await, json!({ "ok": true }));
    let (mut ws, mut mirror) = srv.client().await;
    let task = srv.task("controls").await;
    let session = srv.session(&task, true).await;
    let ask = |questions: Value| json!({ "questions": questions, "open_turn": true, "prompt": "Fix the build." });
    let clarification = format!("/api/dev/sim/sessions/{session}/clarification");

    // No turn yet: open_turn starts one (the user's prompt), then asks in it.
    let asked = srv
        .post(&clarification, ask(json!(["Which branch?"])))
        .await;
    assert_eq!(asked["turn_started"], true, "{asked}");
    let first = asked["turn_id"].as_str().unwrap().to_owned();
    let old = asked["pending_id"].as_str().unwrap().to_owned();
    let messages = srv
        .get(&format!("/api/v1/task-sessions/{session}/messages"))
        .await;
    assert_eq!(messages["messages"][0]["content"], "Fix the build.");
    assert_eq!(messages["messages"][0]["author_type"], "user");

    // The current turn is open: asked in it, no new turn.
    let permission = format!("/api/dev/sim/sessions/{session}/permission");
    let again = srv
        .post(
            &permission,
            json!({ "text": "May I push?", "open_turn": true }),
        )
        .await;
    assert_eq!(
        (again["turn_started"].as_bool(), again["turn_id"].as_str()),
        (Some(false), Some(first.as_str())),
        "{again}"
    );

    // A new turn after the open ones: the first turn completes, its question is history.
    let turn = srv
        .post(
            &format!("/api/dev/sim/sessions/{session}/turns"),
            json!({ "close_open": true }),
        )
        .await;
    assert_eq!(turn["completed"], json!([first]), "{turn}");
    let one = json!({ "answers": [{ "question_id": "q1", "answer": "main" }] });
    let (status, body) = srv.respond(&old, one.clone()).await;
    assert_eq!(
        (status, body["state"].as_str()),
        (409, Some("superseded_history")),
        "{body}"
    );

    // The session's pending permission, resolved by session (newest pending first).
    let asked = srv.post(&permission, json!({ "open_turn": true })).await;
    assert_eq!(
        asked["turn_started"], false,
        "the new turn is open: {asked}"
    );
    let resolve = format!("/api/dev/sim/sessions/{session}/permission/resolve");
    let resolved = srv.post(&resolve, json!({ "status": "approved" })).await;
    assert_eq!(resolved["message_id"], asked["message_id"]);
    let resolved = srv.post(&resolve, json!({ "status": "rejected" })).await;
    assert_eq!(resolved["message_id"], again["message_id"]);
    let (status, body) = srv
        .http
        .post(&resolve, &json!({ "status": "approved" }))
        .await
        .unwrap();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("nothing_pending")),
        "{body}"
    );
    let (status, body) = srv
        .http
        .post(&resolve, &json!({ "status": "maybe" }))
        .await
        .unwrap();
    assert_eq!(status, 400, "{body}");
    let rows = srv
        .get(&format!("/api/v1/task-sessions/{session}/messages"))
        .await;
    let statuses: Vec<&str> = rows["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["type"] == "permission_request")
        .map(|m| m["metadata"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["rejected", "approved"]);

    // A detached answer resumes the session: the successor turn opens with the answers as the
    // user's text (not the respond body's JSON), naming the bundle it answers.
    let asked = srv
        .post(&clarification, ask(json!(["Tag it?", "Notes?"])))
        .await;
    let pending = asked["pending_id"].as_str().unwrap().to_owned();
    srv.post(
        &format!("/api/dev/sim/sessions/{session}/detach"),
        json!({}),
    )
    .await;
    let answers = json!({ "answers": [
        { "question_id": "q1", "answer": "Yes, v2" }, { "question_id": "q2", "answer": "None" }
    ] });
    let (status, body) = srv.respond(&pending, answers).await;
    assert_eq!(status, 200, "{body}");
    let rows = srv
        .get(&format!("/api/v1/task-sessions/{session}/messages"))
        .await;
    let resumed = rows["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metadata"]["response_to"] == pending.as_str())
        .cloned()
        .expect("the resumed turn's prompt");
    assert_eq!(resumed["author_type"], "user");
    assert_eq!(resumed["content"], "1. Yes, v2\n2. None");
    // The resumed turn completed (the session rests): asking again starts a turn first.
    let asked = srv
        .post(&clarification, ask(json!(["Anything else?"])))
        .await;
    assert_eq!(asked["turn_started"], true, "{asked}");
    assert_eq!(srv.sessions(&task).await[0]["state"], "WAITING_FOR_INPUT");
    apply_all(&mut mirror, &srv.frames_until_marker(&mut ws).await);
    check_converged(&mirror, &srv.http).await.unwrap();

    // Reset: the old task is deleted, the demo tasks are back (newest first).
    let reset = srv.post("/api/dev/sim/reset", json!({})).await;
    assert_eq!(reset["deleted"], json!([task]), "{reset}");
    let tasks = srv.get("/api/v1/tasks").await;
    let listed: Vec<Value> = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| json!([t["id"], t["title"], t["task_pending_action"]]))
        .collect();
    let ids = reset["task_ids"].as_array().unwrap();
    assert_eq!(
        listed,
        [
            json!([ids[0], "Deploy preview environment", "permission"]),
            json!([ids[1], "Upgrade the CI pipeline", "clarification"]),
            json!([ids[2], "Refactor the billing module", "clarification"]),
        ]
    );
    let frames = srv.frames_until_marker(&mut ws).await;
    assert!(
        bare(&frames).contains(&json!({ "type": "task.deleted", "payload": { "task_id": task } })),
        "{frames:?}"
    );
    apply_all(&mut mirror, &frames);
    check_converged(&mirror, &srv.http).await.unwrap();
    let action = |a: Option<Option<task_projection::rules::model::PendingAction>>| {
        a.map(|a| a.map(|a| a.as_str()))
    };
    assert_eq!(
        action(mirror.store.task_pending_action(&task).0),
        Some(None)
    );
    for (id, expected) in ids
        .iter()
        .zip(["permission", "clarification", "clarification"])
    {
        let id = id.as_str().unwrap();
        assert_eq!(
            action(mirror.store.task_pending_action(id).0),
            Some(Some(expected))
        );
    }
    ws.close().await;
    srv.stop().await;
}
both!(simulator_controls);

// ---- respond outcomes (SPEC §8) -----------------------------------------------------------------

async fn respond_outcomes(db: Db, _: Kind) {
    let srv = Srv::start(db).await;
    let task = srv.task("respond").await;
    let session = srv.session(&task, true).await;
    let first_turn = srv.turn(&session).await;

    // Live: 200, delivered to the waiter; the agent continues and completes its turn.
    let (live, _) = srv.ask(&session, 2, true).await;
    assert_eq!(
        srv.task_json(&task).await["task_pending_action"],
        "clarification"
    );
    let answers = json!({ "answers": [
        { "question_id": "q1", "answer": "a" }, { "question_id": "q2", "answer": "b" }
    ] });
    let (status, body) = srv.respond(&live, answers.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["outcome"].as_str(), body["state"].as_str()),
        (Some("success"), Some("active_live"))
    );
    let sessions = srv.sessions(&task).await;
    assert_eq!(sessions[0]["pending_action"], Value::Null);
    assert_eq!(sessions[0]["state"], "IDLE", "the agent completed its turn");
    let turns = srv
        .get(&format!("/api/v1/task-sessions/{session}/turns"))
        .await;
    assert_eq!(turns["turns"][0]["id"], first_turn.as_str());
    assert!(turns["turns"][0]["completed_at"].is_string());
    let messages = srv
        .get(&format!("/api/v1/task-sessions/{session}/messages"))
        .await;
    let rows = messages["messages"].as_array().unwrap();
    assert_eq!(rows[1]["metadata"]["status"], "answered");
    assert_eq!(rows[2]["metadata"]["status"], "answered");
    assert_eq!(rows.last().unwrap()["author_type"], "agent");
    let task_json = srv.task_json(&task).await;
    assert_eq!(task_json["task_pending_action"], Value::Null);
    assert!(task_json["status_summary"].get("pending_action").is_none());

    // Answering again: nothing written; 200 with `claimed: false` and the winner's status (the
    // respond envelope: server/tests/server_actions.rs).
    let (status, body) = srv.respond(&live, answers.clone()).await;
    assert_eq!(
        (status, body["state"].as_str(), body["claimed"].as_bool()),
        (200, Some("terminal"), Some(false)),
        "{body}"
    );
    assert_eq!(body["outcome"], "conflict");

    // Live reject (skip): 200.
    srv.turn(&session).await;
    let (skip, _) = srv.ask(&session, 1, true).await;
    let (status, body) = srv.respond(&skip, json!({ "reject": true })).await;
    assert_eq!(
        (status, body["state"].as_str()),
        (200, Some("active_live")),
        "{body}"
    );

    // Detached (the agent left): the answer succeeds after one acknowledged resume, which runs
    // a successor turn.
    srv.turn(&session).await;
    let (detached, _) = srv.ask(&session, 1, true).await;
    srv.post(
        &format!("/api/dev/sim/sessions/{session}/detach"),
        json!({}),
    )
    .await;
    let turns_before = srv
        .get(&format!("/api/v1/task-sessions/{session}/turns"))
        .await["turns"]
        .as_array()
        .unwrap()
        .len();
    let one = json!({ "answers": [{ "question_id": "q1", "answer": "a" }] });
    let (status, body) = srv.respond(&detached, one.clone()).await;
    assert_eq!(
        (status, body["state"].as_str()),
        (200, Some("active_detached")),
        "{body}"
    );
    let turns_after = srv
        .get(&format!("/api/v1/task-sessions/{session}/turns"))
        .await["turns"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(
        turns_after,
        turns_before + 1,
        "the resume ran a successor turn"
    );

    // Detached, the resume is not accepted: 503 retryable, the bundle is restored (still
    // pending); then an ambiguous resume: 500 non-retryable, the bundle stays terminal.
    srv.turn(&session).await;
    let (refused, ids) = srv.ask(&session, 1, false).await;
    srv.post(
        &format!("/api/dev/sim/sessions/{session}/detach"),
        json!({ "resume": "not_accepted" }),
    )
    .await;
    let (status, body) = srv.respond(&refused, one.clone()).await;
    assert_eq!(
        (status, body["outcome"].as_str()),
        (503, Some("retryable_error")),
        "{body}"
    );
    let messages = srv
        .get(&format!("/api/v1/task-sessions/{session}/messages"))
        .await;
    let row = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == ids[0].as_str())
        .unwrap()
        .clone();
    assert_eq!(row["metadata"]["status"], "pending", "restored: {row}");
    assert_eq!(
        srv.sessions(&task).await[0]["pending_action"],
        "clarification"
    );
    srv.post(
        &format!("/api/dev/sim/sessions/{session}/detach"),
        json!({ "resume": "ambiguous" }),
    )
    .await;
    let (status, body) = srv.respond(&refused, one.clone()).await;
    assert_eq!(
        (status, body["outcome"].as_str()),
        (500, Some("non_retryable_error")),
        "{body}"
    );
    let (status, body) = srv.respond(&refused, one.clone()).await;
    assert_eq!(
        (status, body["state"].as_str(), body["claimed"].as_bool()),
        (200, Some("terminal"), Some(false)),
        "terminal after an ambiguous dispatch, its answer the winner: {body}"
    );

    // Superseded: a newer turn is current.
    let (old, _) = {
        srv.post(
            &format!("/api/dev/sim/sessions/{session}/detach"),
            json!({ "resume": "accepted" }),
        )
        .await;
        srv.ask(&session, 1, true).await
    };
    srv.turn(&session).await;
    let (status, body) = srv.respond(&old, one).await;
    assert_eq!(
        (status, body["state"].as_str()),
        (409, Some("superseded_history")),
        "{body}"
    );
    srv.stop().await;
}
both!(respond_outcomes);

// ---- a projection failure is a 500, never a clean list ------------------------------------------

async fn session_list_fails_closed(db: Db, _: Kind) {
    let srv = Srv::start(db.clone()).await;
    let task = srv.task("corrupt").await;
    let session = srv.session(&task, true).await;
    srv.turn(&session).await;
    srv.ask(&session, 1, true).await;
    assert_eq!(
        srv.sessions(&task).await[0]["pending_action"],
        "clarification"
    );
    // A row the rules cannot read (the way server/tests/server_storage.rs injects it).
    task_projection_server::db::query(
        "UPDATE messages SET metadata = 'not json' WHERE message_type = 'clarification_request'",
    )
    .execute(&db)
    .await
    .unwrap();
    let (status, body) = srv
        .http
        .get(&format!("/api/v1/tasks/{task}/task-sessions"))
        .await
        .unwrap();
    assert_eq!(status, 500, "{body}");
    assert_eq!(body["error"]["code"], "projection_failed");
    assert!(body.get("sessions").is_none());
    // The details (the row, the parse error) are in the log only, under the body's error id.
    let id = body["error"]["id"].as_str().unwrap_or_default();
    assert_eq!(id.len(), 32, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(id), "{body}");
    assert!(
        !message.contains("msg") && !message.contains("json") && !message.contains("metadata"),
        "{body}"
    );
    let (status, body) = srv.http.get("/api/v1/tasks").await.unwrap();
    assert_eq!(status, 500, "{body}");
    assert!(body.get("tasks").is_none());
    srv.stop().await;
}
both!(session_list_fails_closed);

// ---- WebSocket frames in the native store converge to REST -------------------------------------

async fn websocket_converges(db: Db, _: Kind) {
    let srv = Srv::start(db).await;
    let (mut ws, mut mirror) = srv.client().await;

    // A task with two sessions: clarification on the secondary, permission on the primary.
    let task = srv.task("converge").await;
    let primary = srv.session(&task, true).await;
    let secondary = srv.session(&task, false).await;
    let turn = srv.turn(&primary).await;
    srv.post(
        &format!("/api/dev/sim/sessions/{primary}/messages"),
        json!({ "type": "message", "text": "working" }),
    )
    .await;
    srv.turn(&secondary).await;
    let (pending, _) = srv.ask(&secondary, 3, true).await;
    let frames = srv.frames_until_marker(&mut ws).await;
    // Frames broadcast to this socket: each round's frames and its marker (server.hello is
    // written on its own, before).
    let mut sent = frames.len() + 1;
    apply_all(&mut mirror, &frames);
    check_converged(&mirror, &srv.http).await.unwrap();
    assert_eq!(
        mirror
            .store
            .task_pending_action(&task)
            .0
            .flatten()
            .map(|a| a.as_str()),
        Some("clarification")
    );
    assert_eq!(
        mirror.store.pending_owner(&task, None).0,
        Some(Some(secondary.as_str()))
    );
    let (bundle, _) = mirror.store.pending_clarification(&secondary);
    assert_eq!(bundle.flatten().unwrap().message_ids.len(), 3);
    let kinds: std::collections::BTreeSet<&str> =
        frames.iter().map(|f| f["type"].as_str().unwrap()).collect();
    for kind in [
        "task.updated",
        "session.created",
        "turn.started",
        "session.message.added",
        "session.state_changed",
        "task.status_summary.updated",
    ] {
        assert!(kinds.contains(kind), "{kind} among {kinds:?}");
    }
    for frame in &frames {
        if frame["type"] == "session.message.added" {
            assert!(
                frame["payload"]["pending_action_revision"]["epoch"].is_string(),
                "{frame}"
            );
        }
    }

    // Permission wins at task level; then everything resolves.
    srv.post(
        &format!("/api/dev/sim/sessions/{primary}/permission"),
        json!({}),
    )
    .await;
    let frames = srv.frames_until_marker(&mut ws).await;
    sent += frames.len() + 1;
    apply_all(&mut mirror, &frames);
    check_converged(&mirror, &srv.http).await.unwrap();
    assert_eq!(
        mirror
            .store
            .task_pending_action(&task)
            .0
            .flatten()
            .map(|a| a.as_str()),
        Some("permission")
    );
    let permission = srv
        .get(&format!("/api/v1/task-sessions/{primary}/messages"))
        .await["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    srv.post(
        &format!("/api/dev/sim/permissions/{permission}/resolve"),
        json!({ "status": "approved" }),
    )
    .await;
    let answers: Vec<Value> = (1..=3)
        .map(|i| json!({ "question_id": format!("q{i}"), "answer": "ok" }))
        .collect();
    let (status, body) = srv.respond(&pending, json!({ "answers": answers })).await;
    assert_eq!(status, 200, "{body}");
    srv.post(&format!("/api/dev/sim/turns/{turn}/complete"), json!({}))
        .await;
    // A third session created primary, a state change, a lifecycle turn.
    let third = srv.session(&task, true).await;
    srv.post(
        &format!("/api/dev/sim/sessions/{third}/turns"),
        json!({ "lifecycle_only": true }),
    )
    .await;
    srv.post(
        &format!("/api/dev/sim/sessions/{secondary}/state"),
        json!({ "state": "COMPLETED" }),
    )
    .await;
    let frames = srv.frames_until_marker(&mut ws).await;
    sent += frames.len() + 1;
    apply_all(&mut mirror, &frames);
    check_converged(&mirror, &srv.http).await.unwrap();
    assert_eq!(mirror.store.task_pending_action(&task).0, Some(None));
    assert_eq!(
        mirror.store.pending_owner(&task, None).0,
        Some(Some(third.as_str())),
        "a clean task opens its primary session"
    );
    // The hub counts one write per batch: at least one per round (the client waited for each
    // round's marker before the next), at most one per frame.
    let writes = srv.running.app.hub.socket_writes();
    assert!(
        (3..=u64::try_from(sent).unwrap()).contains(&writes),
        "{writes} writes for {sent} frames"
    );
    ws.close().await;
    srv.stop().await;
}
both!(websocket_converges);

/// Concurrent writers on one session and across sessions: every client still converges (the
/// server publishes each session's events in revision order, so no state change is dropped as
/// older than an event the client already applied).
async fn concurrent_writers_converge(db: Db, _: Kind) {
    let srv = Srv::start(db).await;
    let (mut ws, mut mirror) = srv.client().await;
    let task = srv.task("concurrent").await;
    let a = srv.session(&task, true).await;
    let b = srv.session(&task, false).await;
    srv.turn(&a).await;
    srv.turn(&b).await;
    let addr = srv.running.addr;
    let mut writers = Vec::new();
    for w in 0..6 {
        let (a, b) = (a.clone(), b.clone());
        writers.push(tokio::spawn(async move {
            let http = HttpClient::new(addr);
            for i in 0..4 {
                let session = if (w + i) % 2 == 0 { &a } else { &b };
                let (path, body) = match (w + i) % 3 {
                    0 => (
                        format!("/api/dev/sim/sessions/{session}/state"),
                        json!({ "state": if i % 2 == 0 { "WAITING_FOR_INPUT" } else { "RUNNING" } }),
                    ),
                    1 => (
                        format!("/api/dev/sim/sessions/{session}/messages"),
                        json!({ "type": "message", "text": format!("{w}/{i}") }),
                    ),
                    _ => (
                        format!("/api/dev/sim/sessions/{session}/permission"),
                        json!({}),
                    ),
                };
                let (status, reply) = http.post(&path, &body).await.unwrap();
                assert_eq!(status, 200, "{path}: {reply}");
            }
        }));
    }
    for writer in writers {
        writer.await.unwrap();
    }
    apply_all(&mut mirror, &srv.frames_until_marker(&mut ws).await);
    check_converged(&mirror, &srv.http).await.unwrap();
    ws.close().await;
    srv.stop().await;
}
both!(concurrent_writers_converge);

// ---- restart: a new epoch; delayed frames of the old epoch are rejected -------------------------

async fn restart_rejects_old_epoch(db: Db, kind: Kind) {
    let srv = Srv::start(db).await;
    let (mut ws, mut mirror) = srv.client().await;
    let epoch_before = srv.get("/healthz").await["epoch"].clone();

    let task = srv.task("restart").await;
    let session = srv.session(&task, true).await;
    srv.turn(&session).await;
    // Several messages: their events carry old-epoch sequences larger than the new epoch's
    // first ones.
    for i in 0..6 {
        srv.post(
            &format!("/api/dev/sim/sessions/{session}/messages"),
            json!({ "type": "message", "text": format!("step {i}") }),
        )
        .await;
    }
    let (pending, _) = srv.ask(&session, 1, true).await;
    let old_frames = srv.frames_until_marker(&mut ws).await;
    apply_all(&mut mirror, &old_frames);
    check_converged(&mirror, &srv.http).await.unwrap();
    // A clean projection of the old epoch, to be replayed late.
    let stale = old_frames
        .iter()
        .rev()
        .find(|f| {
            f["type"] == "session.message.added"
                && f["payload"]["type"] == "message"
                && f["payload"]["pending_action"].is_null()
        })
        .cloned()
        .expect("an old clean projection");
    let stale_sequence = stale["payload"]["pending_action_revision"]["sequence"]
        .as_u64()
        .unwrap();

    let restarted = srv.post("/api/dev/sim/restart", json!({})).await;
    assert_ne!(restarted["epoch"], epoch_before);
    assert_eq!(srv.get("/healthz").await["epoch"], restarted["epoch"]);
    let frames = srv.frames_until_marker(&mut ws).await;
    let hello = frames
        .iter()
        .find(|f| f["type"] == "server.hello")
        .expect("server.hello after the restart");
    assert_eq!(hello["payload"]["epoch"], restarted["epoch"]);
    apply_all(&mut mirror, &frames);
    assert!(
        mirror.needs_refetch,
        "a new epoch asks the client to refetch"
    );
    mirror.boot(&srv.http).await.unwrap();
    let (_, revision) = mirror.store.session_projection(&session).unwrap();
    let revision = revision.unwrap().clone();
    assert_eq!(Some(revision.epoch.as_str()), restarted["epoch"].as_str());
    // SQLite restarts the sequence with each epoch; PostgreSQL's sequence never resets. Either
    // way the epoch decides.
    assert!(
        kind == Kind::Postgres || revision.sequence < stale_sequence,
        "the new epoch restarted its sequence ({} vs {stale_sequence}): the epoch must decide",
        revision.sequence
    );

    // The delayed old-epoch frame is rejected: the question stays pending.
    srv.post("/api/dev/sim/replay", json!({ "frames": [stale] }))
        .await;
    let replayed = srv.frames_until_marker(&mut ws).await;
    assert_eq!(replayed.len(), 1);
    let reason = mirror.apply(&replayed[0]).unwrap();
    assert_eq!(reason, Some(Reason::OlderRevisionRejected));
    assert_eq!(
        mirror
            .store
            .session_pending_action(&session)
            .0
            .flatten()
            .map(|a| a.as_str()),
        Some("clarification")
    );
    check_converged(&mirror, &srv.http).await.unwrap();

    // The waiter died with the restart: the bundle is detached and answers through a resume.
    let (status, body) = srv
        .respond(
            &pending,
            json!({ "answers": [{ "question_id": "q1", "answer": "a" }] }),
        )
        .await;
    assert_eq!(
        (status, body["state"].as_str()),
        (200, Some("active_detached")),
        "{body}"
    );
    apply_all(&mut mirror, &srv.frames_until_marker(&mut ws).await);
    check_converged(&mirror, &srv.http).await.unwrap();
    assert_eq!(mirror.store.task_pending_action(&task).0, Some(None));
    ws.close().await;
    srv.stop().await;
}
both!(restart_rejects_old_epoch);

// ---- stall sweep --------------------------------------------------------------------------------

async fn stall_sweep_heals_orphans(db: Db, _: Kind) {
    let mut config = config();
    config.stall_threshold = Duration::from_millis(150);
    let srv = Srv::with(db, config).await;
    let (mut ws, mut mirror) = srv.client().await;
    let task = srv.task("stall").await;
    let orphan = srv.session(&task, true).await;
    srv.turn(&orphan).await;
    srv.ask(&orphan, 1, false).await; // detached: no live execution
    let report = srv.post("/api/dev/sim/stall-sweep", json!({})).await;
    assert_eq!(report["cancelled"], json!([]), "not silent yet: {report}");
    tokio::time::sleep(Duration::from_millis(400)).await;
    let report = srv.post("/api/dev/sim/stall-sweep", json!({})).await;
    assert_eq!(report["stalled"][0]["task_id"], task.as_str(), "{report}");
    assert_eq!(report["cancelled"], json!([orphan]), "{report}");
    let frames = srv.frames_until_marker(&mut ws).await;
    let kinds: Vec<&str> = frames.iter().map(|f| f["type"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"task.stalled"), "{kinds:?}");
    let change = frames
        .iter()
        .find(|f| f["type"] == "session.state_changed" && f["payload"]["state"] == "CANCELLED")
        .expect("the heal's state change");
    assert_eq!(change["payload"]["reason"], "orphaned session");
    assert_eq!(change["payload"]["pending_action"], Value::Null, "{change}");
    apply_all(&mut mirror, &frames);
    check_converged(&mirror, &srv.http).await.unwrap();
    assert_eq!(mirror.store.task_pending_action(&task).0, Some(None));
    ws.close().await;
    srv.stop().await;
}
both!(stall_sweep_heals_orphans);

// ---- task deletion ------------------------------------------------------------------------------

/// The simulator's delete archives the task and publishes `task.deleted`: the mirror forgets the
/// task and its sessions, REST no longer lists it, and an unknown (or already deleted) task is a
/// 404 that publishes nothing.
async fn task_deleted(db: Db, _: Kind) {
    let srv = Srv::start(db).await;
    let (mut ws, mut mirror) = srv.client().await;
    let doomed = srv.task("doomed").await;
    let kept = srv.task("kept").await;
    let session = srv.session(&doomed, true).await;
    srv.turn(&session).await;
    srv.ask(&session, 1, true).await;
    apply_all(&mut mirror, &srv.frames_until_marker(&mut ws).await);
    check_converged(&mirror, &srv.http).await.unwrap();
    let action = |a: Option<Option<task_projection::rules::model::PendingAction>>| {
        a.flatten().map(|a| a.as_str())
    };
    assert_eq!(
        action(mirror.store.task_pending_action(&doomed).0),
        Some("clarification")
    );
    assert_eq!(
        action(mirror.store.session_pending_action(&session).0),
        Some("clarification")
    );

    let reply = srv
        .post(&format!("/api/dev/sim/tasks/{doomed}/delete"), json!({}))
        .await;
    assert_eq!(reply, json!({ "ok": true }));
    let frames = srv.frames_until_marker(&mut ws).await;
    assert_eq!(
        bare(&frames),
        [json!({ "type": "task.deleted", "payload": { "task_id": doomed } })]
    );
    assert_eq!(mirror.apply(&frames[0]).unwrap(), Some(Reason::Applied));
    let (held, reason) = mirror.store.task_pending_action(&doomed);
    // Removed: known and clean (SPEC §11), not unknown.
    assert_eq!((held, reason), (Some(None), Reason::TaskRemoved));
    let (held, reason) = mirror.store.session_pending_action(&session);
    assert_eq!((held, reason), (Some(None), Reason::TaskRemoved));
    assert_eq!(mirror.store.session_state(&session), None);
    assert!(
        mirror.answers().get(&doomed).is_none(),
        "{}",
        mirror.answers()
    );
    assert_eq!(
        mirror.apply(&frames[0]).unwrap(),
        Some(Reason::Unchanged),
        "a repeat changes nothing"
    );

    let listed: Vec<Value> = srv.get("/api/v1/tasks").await["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].clone())
        .collect();
    assert_eq!(listed, [json!(kept)]);
    check_converged(&mirror, &srv.http).await.unwrap();

    for id in [doomed.as_str(), "nope"] {
        let path = format!("/api/dev/sim/tasks/{id}/delete");
        let (status, body) = srv.http.post(&path, &json!({})).await.unwrap();
        assert_eq!(status, 404, "{path}: {body}");
        assert_eq!(body["error"]["code"], "not_found", "{path}: {body}");
    }
    assert_eq!(srv.frames_until_marker(&mut ws).await, Vec::<Value>::new());
    ws.close().await;
    srv.stop().await;
}
both!(task_deleted);

// ---- a stale status summary over HTTP -----------------------------------------------------------

/// Makes the task's stored summary stale the way server/tests/server_summary.rs does (another
/// writer's newer revision that says clean and carries fields of its own); returns its revision.
async fn stale_summary(storage: &Storage, task: &str) -> i64 {
    let row = storage.summary(task).await.unwrap().expect("a summary");
    let mut stale = row.summary.clone();
    stale.as_object_mut().unwrap().remove("pending_action");
    let revision = row.revision + 1;
    stale["revision"] = json!(revision);
    stale["queued_prompt_count"] = json!(2);
    stale["git"] = json!({ "branch": "main", "ahead": 1 });
    assert!(storage
        .cas_summary(task, row.revision, revision, &stale, "2026-11-29T13:00:00Z")
        .await
        .unwrap());
    revision
}

/// `GET /api/v1/tasks` repairs a stale summary (compare-and-set, the other writer's fields kept,
/// one `task.status_summary.updated`); when the repair cannot be written it answers
/// `status_summary_invalidated: true` without a summary, the legacy action still authoritative.
async fn stale_summary_over_http(db: Db, _: Kind) {
    let srv = Srv::start(db.clone()).await;
    let storage = Storage::new(db.clone());
    let task = srv.task("stale").await;
    let session = srv.session(&task, true).await;
    srv.turn(&session).await;
    srv.ask(&session, 1, true).await;
    let (mut ws, mut mirror) = srv.client().await;
    let before = storage.summary(&task).await.unwrap().unwrap();
    assert_eq!(before.summary["pending_action"], "clarification");

    // Repaired on read.
    let stale = stale_summary(&storage, &task).await;
    let listed = srv.task_json(&task).await;
    let summary = listed["status_summary"].clone();
    assert_eq!(summary["pending_action"], "clarification", "{listed}");
    assert_eq!(summary["revision"], json!(stale + 1));
    assert_eq!(summary["queued_prompt_count"], 2);
    assert_eq!(summary["git"], json!({ "branch": "main", "ahead": 1 }));
    assert!(
        listed.get("status_summary_invalidated").is_none(),
        "{listed}"
    );
    assert_eq!(listed["task_pending_action"], "clarification");
    let stored = storage.summary(&task).await.unwrap().unwrap();
    assert_eq!((stored.revision, &stored.summary), (stale + 1, &summary));
    let frames = srv.frames_until_marker(&mut ws).await;
    assert_eq!(
        bare(&frames),
        [json!({
            "type": "task.status_summary.updated",
            "payload": { "task_id": task, "workspace_id": "ws-demo", "status_summary": summary },
        })]
    );
    apply_all(&mut mirror, &frames);
    check_converged(&mirror, &srv.http).await.unwrap();
    // A repaired summary is not written again.
    assert_eq!(srv.task_json(&task).await["status_summary"], summary);
    assert_eq!(
        storage.summary(&task).await.unwrap().unwrap().revision,
        stale + 1
    );
    assert_eq!(srv.frames_until_marker(&mut ws).await, Vec::<Value>::new());

    // Stale again, and summary writes fail: invalidated, nothing written or published.
    let stale = stale_summary(&storage, &task).await;
    server_support::reject_summary_writes(&db).await;
    let listed = srv.task_json(&task).await;
    assert_eq!(listed["status_summary_invalidated"], true, "{listed}");
    assert!(listed.get("status_summary").is_none(), "{listed}");
    assert_eq!(listed["task_pending_action"], "clarification");
    assert_eq!(listed["primary_session_pending_action"], "clarification");
    let stored = storage.summary(&task).await.unwrap().unwrap();
    assert_eq!(stored.revision, stale);
    assert!(stored.summary.get("pending_action").is_none());
    assert_eq!(srv.frames_until_marker(&mut ws).await, Vec::<Value>::new());
    ws.close().await;
    srv.stop().await;
}
both!(stale_summary_over_http);

// ---- a socket that never reads is closed with 1013 ----------------------------------------------

/// A client that never reads while the server publishes far more than its socket buffers hold
/// and more than the hub's buffer (lowered to 16 frames through `Config::ws_buffer`) is closed
/// with code 1013 after the frames it was sent; the server keeps serving new sockets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lagging_socket_closed_1013() {
    // Batches of 4 frames (a quarter of the hub's buffer) of 64 KiB, ≈ 20 MB in all (about five
    // times what Linux's default loopback socket buffers hold): the server's writer drains each
    // batch into the socket until the buffers are full, then blocks while later batches overflow
    // the hub's buffer behind it; it sees the overflow once the client reads again.
    const BATCHES: usize = 80;
    const PER_BATCH: usize = 4;
    let db = server_support::fresh(Kind::Sqlite).await.unwrap();
    let mut config = config();
    config.ws_buffer = 16;
    let srv = Srv::with(db, config).await;
    let mut ws = WsClient::connect(srv.running.addr).await.unwrap();
    let hello = ws.next().await.unwrap().expect("hello");
    assert_eq!(hello["type"], "server.hello");

    let pad = "x".repeat(64 * 1024);
    let frames: Vec<Value> = (0..PER_BATCH)
        .map(|i| {
            let payload = json!({ "task_id": "lag", "i": i, "pad": pad });
            json!({ "type": "task.stalled", "payload": payload })
        })
        .collect();
    let body = json!({ "frames": frames });
    for _ in 0..BATCHES {
        let sent = srv.post("/api/dev/sim/replay", body.clone()).await;
        assert_eq!(sent["sent"], PER_BATCH);
    }

    let (read, code) = tokio::time::timeout(Duration::from_secs(10), ws.read_until_close())
        .await
        .expect("the server closes the lagging socket")
        .expect("read");
    assert_eq!(code, Some(1013), "after {read} frames");
    // The frames that reached the socket before it fell behind come first (≈ 4 MB of them with
    // Linux's default socket buffers), then the close instead of a silent gap.
    assert!(
        read > 0 && read < BATCHES * PER_BATCH,
        "read {read} of {} frames",
        BATCHES * PER_BATCH
    );

    // The server still serves: a new socket starts with server.hello and gets new frames.
    let mut again = WsClient::connect(srv.running.addr).await.unwrap();
    let hello = again.next().await.unwrap().expect("hello");
    assert_eq!(hello["type"], "server.hello");
    assert_eq!(
        srv.frames_until_marker(&mut again).await,
        Vec::<Value>::new()
    );
    again.close().await;
    srv.stop().await;
}

/// The total bound: with a large per-socket buffer, a socket that never reads holds frames until
/// the hub's byte budget (lowered to 2 MiB through `Config::ws_buffer_bytes`) is reached; then it
/// is dropped and what it held is released. The simulator's replay endpoint once let one paused
/// socket hold 2.3 GB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buffered_frames_are_bounded_in_total() {
    const BATCHES: usize = 80;
    const PER_BATCH: usize = 4;
    const BUDGET: usize = 2 << 20;
    let db = server_support::fresh(Kind::Sqlite).await.unwrap();
    let mut config = config();
    config.ws_buffer = 8192;
    config.ws_buffer_bytes = BUDGET;
    let srv = Srv::with(db, config).await;
    let mut paused = WsClient::connect(srv.running.addr).await.unwrap();
    let hello = paused.next().await.unwrap().expect("hello");
    assert_eq!(hello["type"], "server.hello");

    let pad = "x".repeat(64 * 1024);
    let frames: Vec<Value> = (0..PER_BATCH)
        .map(|i| json!({ "type": "task.stalled", "payload": { "task_id": "lag", "i": i, "pad": pad } }))
        .collect();
    let body = json!({ "frames": frames });
    let mut most = 0;
    for _ in 0..BATCHES {
        let sent = srv.post("/api/dev/sim/replay", body.clone()).await;
        assert_eq!(sent["sent"], PER_BATCH);
        most = most.max(srv.running.app.hub.buffered_bytes());
    }
    // ≈ 20 MB were published; the socket buffers hold ≈ 4 MB, the hub at most its budget plus
    // what was published before the socket saw the signal.
    assert!(most <= BUDGET + (1 << 20), "held {most} bytes");
    // Stuck mid-write, it is dropped without a close frame (one cannot follow a partial frame).
    match tokio::time::timeout(Duration::from_secs(10), paused.read_until_close())
        .await
        .expect("the paused socket is closed")
    {
        Ok((read, code)) => assert!(read < BATCHES * PER_BATCH, "read {read}, close {code:?}"),
        Err(error) => assert!(error.0.contains("without closing handshake"), "{error}"),
    }
    let released = async {
        while srv.running.app.hub.buffered_bytes() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), released)
        .await
        .expect("everything released once the socket is gone");

    // A socket that reads keeps everything: the budget closes only the ones behind.
    let mut reader = WsClient::connect(srv.running.addr).await.unwrap();
    let _hello = reader.next().await.unwrap().expect("hello");
    for _ in 0..8 {
        srv.post("/api/dev/sim/replay", body.clone()).await;
    }
    let mut got = 0;
    while got < 8 * PER_BATCH {
        let frame = reader.next().await.unwrap().expect("still open");
        assert_eq!(frame["type"], "task.stalled");
        got += 1;
    }
    reader.close().await;
    srv.stop().await;
}

// ---- resuming from an offset ---------------------------------------------------------------------

/// A reconnecting client gives its last offset and stream: resumed, it gets exactly the events
/// after that offset (what it missed), in order, then the live ones; another stream or an
/// offset the server never handed out is not resumed (the client refetches). On SQLite the
/// history is the hub's memory; on PostgreSQL the outbox (server/tests/server_instances.rs covers
/// several instances).
async fn resume_from_an_offset(db: Db, _: Kind) {
    let srv = Srv::with(db, config()).await;
    let mut first = WsClient::connect(srv.running.addr).await.unwrap();
    let hello = first.next().await.unwrap().expect("hello");
    let stream = hello["payload"]["stream"]
        .as_str()
        .expect("a stream")
        .to_owned();
    assert_eq!(hello["payload"]["resumed"], false, "{hello}");
    let task = srv
        .post("/api/dev/sim/tasks", json!({ "title": "resume" }))
        .await;
    let task = task["task_id"].as_str().unwrap().to_owned();
    let session = srv
        .post(
            &format!("/api/dev/sim/tasks/{task}/sessions"),
            json!({ "primary": true }),
        )
        .await;
    let session = session["session_id"].as_str().unwrap().to_owned();
    srv.post(&format!("/api/dev/sim/sessions/{session}/turns"), json!({}))
        .await;
    let seen = srv.frames_until_marker(&mut first).await;
    let offsets: Vec<u64> = seen.iter().filter_map(|f| f["offset"].as_u64()).collect();
    assert_eq!(
        offsets.len(),
        seen.len(),
        "every event has an offset: {seen:?}"
    );
    assert!(offsets.windows(2).all(|w| w[0] < w[1]), "{offsets:?}");
    assert!(offsets.len() >= 3, "{offsets:?}");

    // The client "lost" everything after its first event; more happens while it is away.
    let since = offsets[0];
    srv.post(
        &format!("/api/dev/sim/sessions/{session}/messages"),
        json!({ "type": "message", "text": "while away" }),
    )
    .await;
    let mut later = srv.frames_until_marker(&mut first).await;
    // A REST read says where it stands in the stream: at or after every event delivered before
    // it (a client gives it to `applyStreamPosition` and resumes after it).
    let listed = srv.http.get_ok("/api/v1/tasks").await.unwrap();
    assert_eq!(listed["stream"], stream.as_str(), "{listed}");
    let last_seen = later
        .iter()
        .chain(&seen)
        .filter_map(|f| f["offset"].as_u64())
        .max();
    assert!(
        listed["offset"].as_u64() >= last_seen,
        "{listed} after {last_seen:?}"
    );
    let mut expected: Vec<Value> = seen[1..].to_vec();
    expected.append(&mut later);
    let query = format!("?since={since}&stream={stream}");
    let mut resumed = WsClient::connect_with(srv.running.addr, &query, None)
        .await
        .unwrap();
    let hello = resumed.next().await.unwrap().expect("hello");
    assert_eq!(hello["payload"]["resumed"], true, "{hello}");
    assert_eq!(hello["payload"]["offset"], since);
    let got = srv.frames_until_marker(&mut resumed).await;
    assert_eq!(
        got, expected,
        "exactly the events after its offset, in order"
    );

    // Live events follow, once each.
    srv.post(
        &format!("/api/dev/sim/sessions/{session}/messages"),
        json!({ "type": "message", "text": "live" }),
    )
    .await;
    let live = srv.frames_until_marker(&mut resumed).await;
    assert!(
        !live.is_empty()
            && live
                .iter()
                .all(|f| f["offset"].as_u64() > expected.last().and_then(|f| f["offset"].as_u64()))
    );

    // Not resumed: another stream, a future offset, a malformed query.
    let latest = live.last().and_then(|f| f["offset"].as_u64()).unwrap();
    for query in [
        format!("?since={since}&stream=another"),
        format!("?since={}&stream={stream}", latest + 100),
        format!("?since=-1&stream={stream}"),
        format!("?since={since}"),
    ] {
        let mut ws = WsClient::connect_with(srv.running.addr, &query, None)
            .await
            .unwrap();
        let hello = ws.next().await.unwrap().expect("hello");
        assert_eq!(hello["payload"]["resumed"], false, "{query}: {hello}");
        assert_eq!(hello["payload"]["offset"], latest, "{query}");
        assert_eq!(
            srv.frames_until_marker(&mut ws).await,
            Vec::<Value>::new(),
            "{query}"
        );
    }
    // Up to date: resumed with nothing to send.
    let mut ws = WsClient::connect_with(
        srv.running.addr,
        &format!("?since={latest}&stream={stream}"),
        None,
    )
    .await
    .unwrap();
    let hello = ws.next().await.unwrap().expect("hello");
    assert_eq!(hello["payload"]["resumed"], true, "{hello}");
    assert_eq!(srv.frames_until_marker(&mut ws).await, Vec::<Value>::new());
    srv.stop().await;
}
both!(resume_from_an_offset);

// ---- static files -------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_files() {
    let root = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("static-{}", uuid::Uuid::new_v4().simple()));
    let (www, pkg) = (root.join("www"), root.join("pkg"));
    std::fs::create_dir_all(&www).unwrap();
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(www.join("index.html"), "<!doctype html><title>demo</title>").unwrap();
    std::fs::write(pkg.join("engine_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
    std::fs::write(pkg.join("engine.js"), "export {}").unwrap();
    let db = server_support::fresh(Kind::Sqlite).await.unwrap();
    let mut config = config();
    config.www = www;
    config.pkg = pkg;
    let srv = Srv::with(db, config).await;
    let (status, body, content_type) = srv
        .http
        .request(hyper::Method::GET, "/", None)
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert!(content_type.starts_with("text/html"), "{content_type}");
    assert!(String::from_utf8_lossy(&body).contains("demo"));
    let (status, body, content_type) = srv
        .http
        .request(hyper::Method::GET, "/pkg/engine_bg.wasm", None)
        .await
        .unwrap();
    assert_eq!((status, content_type.as_str()), (200, "application/wasm"));
    assert_eq!(&body[..4], b"\0asm");
    let (_, _, content_type) = srv
        .http
        .request(hyper::Method::GET, "/pkg/engine.js", None)
        .await
        .unwrap();
    assert!(content_type.contains("javascript"), "{content_type}");
    let (status, _, _) = srv
        .http
        .request(hyper::Method::GET, "/pkg/../www/index.html", None)
        .await
        .unwrap();
    assert_ne!(status, 200, "no path traversal");
    srv.stop().await;
    let _ = std::fs::remove_dir_all(root);
}

// ---- flags and the binary -----------------------------------------------------------------------

fn parse(args: &[&str]) -> Result<Config, String> {
    match parse_args(args.iter().map(|s| s.to_string()))? {
        Args::Run(config) => Ok(*config),
        Args::Help => Err("help".into()),
    }
}

#[test]
fn flags_parse() {
    let c = parse(&[
        "--port",
        "0",
        "--host=0.0.0.0",
        "--simulator",
        "--database",
        "sqlite:/tmp/x.db",
        "--stall-interval",
        "0.5",
        "--stall-threshold=30",
        "--www",
        "site",
    ])
    .unwrap();
    assert_eq!((c.port, c.host.as_str()), (0, "0.0.0.0"));
    assert!(c.simulator && !c.seed_demo);
    assert_eq!(c.database, "sqlite:/tmp/x.db?mode=rwc");
    assert_eq!(c.stall_interval, Duration::from_millis(500));
    assert_eq!(c.stall_threshold, Duration::from_secs(30));
    assert_eq!(c.www, std::path::PathBuf::from("site"));
    let defaults = parse(&[]).unwrap();
    assert_eq!(defaults.database, "sqlite:task-projection.db?mode=rwc");
    assert_eq!((defaults.port, defaults.host.as_str()), (8080, "127.0.0.1"));
    assert_eq!(defaults.stall_threshold, Duration::from_secs(7200));
    assert!(!defaults.simulator && !defaults.seed_demo);
    for bad in [
        &["--port", "x"][..],
        &["--port", "70000"],
        &["--port"],
        &["--nope"],
        &["--database", "mysql://x"],
        &["--database", "sqlite:"],
        &["--stall-threshold", "0"],
        &["--stall-interval", "-1"],
        &["--simulator=1"],
    ] {
        assert!(parse(bad).is_err(), "{bad:?}");
    }
    assert_eq!(parse(&["--help"]).unwrap_err(), "help");
    assert_eq!(
        database_url("sqlite:a.db?cache=shared").unwrap(),
        "sqlite:a.db?cache=shared&mode=rwc"
    );
    assert_eq!(database_url("sqlite::memory:").unwrap(), "sqlite::memory:");
    assert_eq!(
        database_url("postgres://u@h:1/db").unwrap(),
        "postgres://u@h:1/db"
    );
}

fn run_binary(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run the binary");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn bad_flags_exit_2() {
    for args in [
        &["--port", "eighty"][..],
        &["--bogus"],
        &["--port"],
        &["--database", "mysql://localhost/db"],
        &["--stall-interval", "soon"],
    ] {
        let (code, stderr) = run_binary(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        let first = stderr.lines().next().unwrap_or_default();
        assert!(first.starts_with("task-projection-server: "), "{first}");
        assert!(stderr.contains("usage:"), "{stderr}");
    }
    let (code, _) = run_binary(&["--help"]);
    assert_eq!(code, Some(0));
}

#[test]
fn unreachable_database_exits_2() {
    // Port 1 on loopback refuses connections; a SQLite file in a missing directory cannot open.
    let missing = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("no-such-dir")
        .join("x.db");
    for url in [
        "postgres://tp:secret@127.0.0.1:1/nope".to_owned(),
        format!("sqlite:{}", missing.display()),
    ] {
        let (code, stderr) = run_binary(&["--database", &url, "--port", "0"]);
        assert_eq!(code, Some(2), "{url}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one clear line: {stderr}");
        assert!(stderr.contains("cannot open database"), "{stderr}");
        assert!(
            !stderr.contains("secret"),
            "the password is not printed: {stderr}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_prints_its_address() {
    let url = fresh_url(Kind::Sqlite).await.unwrap();
    let mut child = Command::new(BIN)
        .args(["--database", &url, "--port", "0", "--seed-demo"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the binary");
    let stdout = child.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).map(|_| line)
    })
    .await
    .unwrap()
    .unwrap();
    let addr = line
        .trim_end()
        .strip_prefix("task-projection-server listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    let http = HttpClient::new(addr.parse().expect("HOST:PORT"));
    let health = http.get_ok("/healthz").await;
    let tasks = http.get_ok("/api/v1/tasks").await;
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(health.unwrap()["ok"], true);
    assert_eq!(tasks.unwrap()["tasks"].as_array().unwrap().len(), 3);
}
