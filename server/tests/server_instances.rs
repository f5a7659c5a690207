//! Several instances on one PostgreSQL behave as one (docs/server-api.md, "Several instances";
//! `server/src/outbox.rs`): two `task-projection-server` processes on one throwaway database,
//! writes through either, clients on either. Every client receives every event in one offset
//! order and ends equal to the REST answers of both instances, across a restart of either
//! instance and a resume from an offset. PostgreSQL only (`scripts/test.sh` runs it in its
//! PostgreSQL stage); skipped without `TASK_PROJECTION_TEST_PG_URL`.
#![cfg(feature = "test-client")]

#[path = "server_support/mod.rs"]
mod server_support;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use server_support::Kind;
use task_projection_server::http::client::{check_converged, HttpClient, Mirror, WsClient};
use task_projection_server::storage;

/// A server process on `url`, stopped (SIGKILL) when dropped.
struct Instance {
    child: Child,
    addr: SocketAddr,
}

impl Instance {
    async fn start(url: &str) -> Instance {
        let url = url.to_owned();
        tokio::task::spawn_blocking(move || {
            let empty = std::env::temp_dir();
            let mut child = Command::new(env!("CARGO_BIN_EXE_task-projection-server"))
                .args(["--database", &url, "--port", "0", "--simulator"])
                .args(["--stall-interval", "0"])
                .arg("--www")
                .arg(&empty)
                .arg("--pkg")
                .arg(&empty)
                .env("RUST_LOG", "warn")
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("start task-projection-server");
            let mut line = String::new();
            BufReader::new(child.stdout.take().expect("stdout"))
                .read_line(&mut line)
                .expect("read its first line");
            let url = line
                .trim()
                .strip_prefix("task-projection-server listening on http://")
                .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
            let addr = url.parse().expect("an address");
            Instance { child, addr }
        })
        .await
        .unwrap()
    }

    fn http(&self) -> HttpClient {
        HttpClient::new(self.addr)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn post(http: &HttpClient, path: &str, body: Value) -> Value {
    http.post_ok(path, &body).await.expect(path)
}

fn text(value: &Value, key: &str) -> String {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("no {key} in {value}"))
        .to_owned()
}

/// A task with a primary session, written through `http`; returns the session id.
async fn new_session(http: &HttpClient, title: &str) -> String {
    let task = text(
        &post(http, "/api/dev/sim/tasks", json!({ "title": title })).await,
        "task_id",
    );
    let session = post(
        http,
        &format!("/api/dev/sim/tasks/{task}/sessions"),
        json!({ "primary": true }),
    )
    .await;
    text(&session, "session_id")
}

/// One agent cycle on `session` through `http`: a turn with a message and a clarification
/// answered through the respond endpoint, then a turn with a permission, resolved and completed.
async fn cycle(http: &HttpClient, session: &str) {
    post(
        http,
        &format!("/api/dev/sim/sessions/{session}/turns"),
        json!({}),
    )
    .await;
    post(
        http,
        &format!("/api/dev/sim/sessions/{session}/messages"),
        json!({ "type": "message", "text": "working on it" }),
    )
    .await;
    let asked = post(
        http,
        &format!("/api/dev/sim/sessions/{session}/clarification"),
        json!({ "questions": ["Which option?"] }),
    )
    .await;
    let pending = text(&asked, "pending_id");
    let answers = json!({ "answers": [{ "question_id": "q1", "answer": "the first" }] });
    let (status, body) = http
        .post(
            &format!("/api/v1/clarification/{pending}/respond"),
            &answers,
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "respond: {body}");
    let turn = text(
        &post(
            http,
            &format!("/api/dev/sim/sessions/{session}/turns"),
            json!({}),
        )
        .await,
        "turn_id",
    );
    let permission = text(
        &post(
            http,
            &format!("/api/dev/sim/sessions/{session}/permission"),
            json!({}),
        )
        .await,
        "message_id",
    );
    post(
        http,
        &format!("/api/dev/sim/permissions/{permission}/resolve"),
        json!({ "status": "approved" }),
    )
    .await;
    post(
        http,
        &format!("/api/dev/sim/turns/{turn}/complete"),
        json!({}),
    )
    .await;
}

/// A client: a mirror store fed by one socket.
struct Client {
    mirror: Mirror,
    ws: WsClient,
    /// Every offset received, in arrival order.
    offsets: Vec<u64>,
    hellos: Vec<Value>,
}

impl Client {
    /// Boots from `instance`'s REST, then follows its socket.
    async fn boot(instance: &Instance) -> Client {
        let mut ws = WsClient::connect(instance.addr).await.unwrap();
        let mut mirror = Mirror::new();
        let hello = ws.next().await.unwrap().expect("hello");
        mirror.apply(&hello).unwrap();
        mirror.boot(&instance.http()).await.unwrap();
        Client {
            mirror,
            ws,
            offsets: Vec::new(),
            hellos: vec![hello],
        }
    }

    /// Reconnects to `instance` from the last offset seen.
    async fn reconnect(&mut self, instance: &Instance) {
        self.ws = WsClient::resume(instance.addr, &self.mirror).await.unwrap();
    }

    /// Applies frames until the mirror equals the REST answers of every instance given, or
    /// fails after 20 s.
    async fn converge(&mut self, instances: &[&Instance]) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            while let Some(frame) = self
                .ws
                .next_within(Duration::from_millis(200))
                .await
                .unwrap()
            {
                if frame["type"] == "server.hello" {
                    self.hellos.push(frame.clone());
                } else if let Some(offset) = frame["offset"].as_u64() {
                    self.offsets.push(offset);
                }
                self.mirror.apply(&frame).unwrap();
            }
            let mut differences = Vec::new();
            for instance in instances {
                if let Err(error) = check_converged(&self.mirror, &instance.http()).await {
                    differences.push(error.0);
                }
            }
            if differences.is_empty() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "not converged: {}",
                differences.join("\n")
            );
        }
    }

    fn assert_offsets_increase(&self) {
        for pair in self.offsets.windows(2) {
            assert!(
                pair[0] < pair[1],
                "offsets out of order: {:?}",
                self.offsets
            );
        }
    }
}

/// Writes through both instances at once; a client on each receives every event (its own
/// instance's and the other's) in one increasing offset order and equals both REST answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_on_either_instance_see_writes_through_both_postgres() {
    let Some(url) = server_support::fresh_url(Kind::Postgres).await else {
        eprintln!("skipped: PostgreSQL URL not set");
        return;
    };
    let (a, b) = (Instance::start(&url).await, Instance::start(&url).await);
    let mut on_a = Client::boot(&a).await;
    let mut on_b = Client::boot(&b).await;
    assert_eq!(
        on_a.hellos[0]["payload"]["stream"], on_b.hellos[0]["payload"]["stream"],
        "one stream: the database's"
    );
    assert!(on_a.hellos[0]["payload"]["stream"].is_string());
    let (http_a, http_b) = (a.http(), b.http());
    let (via_a, via_b) = (
        new_session(&http_a, "through A").await,
        new_session(&http_b, "through B").await,
    );
    for _ in 0..3 {
        tokio::join!(cycle(&http_a, &via_a), cycle(&http_b, &via_b));
    }
    // Events too big for a notification's payload reach the other instance by a read.
    let long = "x".repeat(20_000);
    let (path_a, path_b) = (
        format!("/api/dev/sim/sessions/{via_a}/messages"),
        format!("/api/dev/sim/sessions/{via_b}/messages"),
    );
    tokio::join!(
        post(&http_a, &path_a, json!({ "type": "message", "text": long })),
        post(&http_b, &path_b, json!({ "type": "message", "text": long }))
    );
    on_b.converge(&[&a, &b]).await;
    on_a.converge(&[&a, &b]).await;
    on_a.assert_offsets_increase();
    on_b.assert_offsets_increase();
    assert_eq!(
        on_a.offsets, on_b.offsets,
        "the same events in the same order"
    );
    assert!(on_a.offsets.len() >= 60, "{} events", on_a.offsets.len());
    assert_eq!(on_a.mirror.answers(), on_b.mirror.answers());
    assert!(!on_a.mirror.needs_refetch && !on_b.mirror.needs_refetch);
}

/// A restart of either instance: a client of the restarted one reconnects from its last offset
/// and is resumed (no refetch, nothing lost while it was down); a client of the other keeps its
/// socket. An offset the outbox no longer holds is not resumed (the client refetches).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_and_resume_from_an_offset_postgres() {
    let Some(url) = server_support::fresh_url(Kind::Postgres).await else {
        eprintln!("skipped: PostgreSQL URL not set");
        return;
    };
    let a = Instance::start(&url).await;
    let b = Instance::start(&url).await;
    let mut on_b = Client::boot(&b).await;
    let http_a = a.http();
    let session = new_session(&http_a, "restarts").await;
    cycle(&http_a, &session).await;
    on_b.converge(&[&a, &b]).await;

    // B goes away; writes through A continue; a new B process on another port.
    drop(b);
    cycle(&http_a, &session).await;
    let missed_from = on_b.mirror.offset.expect("an offset");
    let b = Instance::start(&url).await;
    on_b.reconnect(&b).await;
    on_b.converge(&[&a, &b]).await;
    let hello = &on_b.hellos.last().unwrap()["payload"];
    assert_eq!(hello["resumed"], true, "{hello}");
    assert_eq!(hello["offset"], missed_from);
    assert!(!on_b.mirror.needs_refetch, "resumed: nothing to refetch");
    assert!(
        on_b.offsets.iter().any(|&o| o > missed_from),
        "the events written while B was down arrived"
    );

    // A restarts; writes through the new A reach the client on B without a reconnection.
    drop(a);
    let a = Instance::start(&url).await;
    cycle(&a.http(), &session).await;
    on_b.converge(&[&a, &b]).await;
    on_b.assert_offsets_increase();

    // An offset the outbox no longer holds: not resumed, so the client refetches.
    let db = storage::connect(&url).await.unwrap();
    let kept = on_b.mirror.offset.unwrap();
    cycle(&a.http(), &session).await;
    on_b.converge(&[&a, &b]).await;
    task_projection_server::db::query("DELETE FROM event_outbox WHERE offset_id <= $1")
        .bind(i64::try_from(kept).unwrap() + 1)
        .execute(&db)
        .await
        .unwrap();
    let mut stale = Mirror::new();
    stale.apply(&on_b.hellos[0]).unwrap();
    stale.offset = Some(kept);
    let mut ws = WsClient::resume(b.addr, &stale).await.unwrap();
    let hello = ws.next().await.unwrap().expect("hello");
    assert_eq!(hello["payload"]["resumed"], false, "{hello}");
    // A stream this database never had: not resumed either.
    stale.stream = Some("another-stream".into());
    stale.offset = Some(1);
    let mut ws = WsClient::resume(b.addr, &stale).await.unwrap();
    let hello = ws.next().await.unwrap().expect("hello");
    assert_eq!(hello["payload"]["resumed"], false, "{hello}");
    db.close().await;
}

/// Migration 8: an insert's notification carries its rows (offset, name, payload text) when they
/// fit, and nothing when they do not (the followers then read them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_carries_the_rows_that_fit_postgres() {
    use task_projection_server::events::Event;
    use task_projection_server::outbox::{insert, CHANNEL};
    let Some(url) = server_support::fresh_url(Kind::Postgres).await else {
        eprintln!("skipped: PostgreSQL URL not set");
        return;
    };
    let db = storage::connect(&url).await.unwrap();
    let mut listener = sqlx::postgres::PgListener::connect(&url).await.unwrap();
    listener.listen(CHANNEL).await.unwrap();
    let small = [
        Event {
            name: "a.small",
            payload: json!({ "text": "one \"quoted\" line" }),
        },
        Event {
            name: "b.small",
            payload: json!({ "n": 2 }),
        },
    ];
    insert(&db, &small).await.unwrap();
    let notification = tokio::time::timeout(Duration::from_secs(5), listener.recv())
        .await
        .unwrap()
        .unwrap();
    let rows: Vec<(u64, String, String)> = serde_json::from_str(notification.payload()).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].0, rows[0].0 + 1, "consecutive offsets, in order");
    assert_eq!(rows[0].1, "a.small");
    assert_eq!(
        serde_json::from_str::<Value>(&rows[0].2).unwrap(),
        small[0].payload
    );
    let big = [Event {
        name: "c.big",
        payload: json!({ "text": "x".repeat(9_000) }),
    }];
    insert(&db, &big).await.unwrap();
    let notification = tokio::time::timeout(Duration::from_secs(5), listener.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        notification.payload(),
        "",
        "too big to carry: the followers read it"
    );
    db.close().await;
}

/// The outbox writer keeps publication order and inserts what queued up together, at most 256
/// events per statement, and counts its statements (the load benchmark's fan-out figure).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_writer_inserts_in_publication_order_in_bounded_batches_postgres() {
    use task_projection_server::events::{Event, EventSink};
    use task_projection_server::outbox::{read_after, OutboxWriter};
    let Some(url) = server_support::fresh_url(Kind::Postgres).await else {
        eprintln!("skipped: PostgreSQL URL not set");
        return;
    };
    let db = storage::connect(&url).await.unwrap();
    let (writer, task) = OutboxWriter::start(db.clone());
    const EVENTS: u64 = 600;
    for n in 0..EVENTS {
        writer
            .publish(Event {
                name: "test.event",
                payload: json!({ "n": n }),
            })
            .unwrap();
    }
    writer.flush().await;
    let rows = read_after(&db, 0, None, 1_000).await.unwrap();
    let order: Vec<u64> = rows
        .iter()
        .map(|row| {
            serde_json::from_str::<Value>(&row.payload).unwrap()["n"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(order, (0..EVENTS).collect::<Vec<_>>(), "publication order");
    let inserts = writer.inserts();
    assert!(
        (EVENTS.div_ceil(256)..=EVENTS).contains(&inserts),
        "{inserts} statements for {EVENTS} events"
    );
    task.abort();
    db.close().await;
}
