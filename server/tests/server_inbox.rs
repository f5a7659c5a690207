//! The needs-you inbox (docs/server-api.md, "Needs-you inbox"; `rules::inbox`,
//! `server/src/inbox.rs`, `server/src/http/inbox.rs`) over a running server, on SQLite and on
//! PostgreSQL: every validation case, the rows the task page would show and their order,
//! truncation and a cursor round trip, the hidden list and `hidden_count`, snooze expiry by the
//! server's clock, two requesters, the boot seed, two instances on one PostgreSQL, and the
//! request guard in front of the new writes.
#![cfg(feature = "test-client")]

#[path = "server_support/mod.rs"]
mod server_support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use server_support::{t, Fx, Kind};
use task_projection_server::clock::ManualClock;
use task_projection_server::http::{serve_db, Config, Running};
use task_projection_server::storage::NewTask;
use task_projection_server::Db;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const INBOX: &str = "/api/v1/clarification-inbox";

struct Srv {
    running: Running,
    clock: Arc<ManualClock>,
}

fn config(clock: &Arc<ManualClock>) -> Config {
    Config {
        port: 0,
        stall_interval: Duration::ZERO,
        clock: clock.clone(),
        www: std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-www"),
        pkg: std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-pkg"),
        ..Config::default()
    }
}

/// One answer: status, headers (lower-case names), JSON body (`Null` when empty).
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The requester id the answer issued, if it did.
    fn issued(&self) -> Option<String> {
        let cookie = self.header("set-cookie")?;
        let value = cookie.strip_prefix("tp_requester=")?;
        Some(value.split(';').next()?.to_owned())
    }
}

impl Srv {
    async fn start(db: Db) -> Srv {
        let clock = Arc::new(ManualClock::at(&t("12:00")).unwrap());
        Srv::with(db, clock.clone(), config(&clock)).await
    }

    async fn with(db: Db, clock: Arc<ManualClock>, config: Config) -> Srv {
        let running = serve_db(db, config).await.expect("server starts");
        Srv { running, clock }
    }

    /// One raw request (`Connection: close`) with this server's `Host`.
    async fn raw(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
        let mut stream = TcpStream::connect(self.running.addr).await.unwrap();
        let mut request = format!(
            "{method} {path} HTTP/1.1\r\nhost: {}\r\nconnection: close\r\n",
            self.running.addr
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await.unwrap();
        let text = String::from_utf8_lossy(&response).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let mut lines = head.lines();
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let body = serde_json::from_str(body).unwrap_or(Value::Null);
        Answer {
            status,
            headers,
            body,
        }
    }

    async fn get_as(&self, who: &str, path: &str) -> Answer {
        let cookie = format!("tp_requester={who}");
        self.raw("GET", path, &[("cookie", &cookie)], "").await
    }

    async fn list(&self, who: &str, query: &str) -> Value {
        let answer = self.get_as(who, &format!("{INBOX}?{query}")).await;
        assert_eq!(answer.status, 200, "{query}: {}", answer.body);
        answer.body
    }

    async fn put(&self, who: &str, pending_id: &str, body: &str) -> Answer {
        let cookie = format!("tp_requester={who}");
        let path = format!("{INBOX}/sidecar/{pending_id}");
        let headers = [
            ("cookie", cookie.as_str()),
            ("content-type", "application/json"),
        ];
        self.raw("PUT", &path, &headers, body).await
    }

    async fn restore(&self, who: &str, pending_id: &str) -> Answer {
        let cookie = format!("tp_requester={who}");
        let path = format!("{INBOX}/sidecar/{pending_id}");
        let headers = [
            ("cookie", cookie.as_str()),
            ("content-type", "application/json"),
        ];
        self.raw("DELETE", &path, &headers, "").await
    }
}

/// A request's extra headers.
type Headers<'a> = Vec<(&'a str, &'a str)>;

const ALICE: &str = "0123456789abcdef0123456789abcdef";
const BOB: &str = "fedcba9876543210fedcba9876543210";

/// The workspace: in `ws-1`, task-1 (s1 asks p1 at 10:02, s2 asks p2 at 10:01 with two
/// questions and a context) and task-2 (s3 asks p3 at 10:02, s4's bundle was answered, s5's is a
/// superseded turn's, s6 is completed); in `ws-2`, task-3 (s7 asks p7).
async fn seed(db: &Db) -> Fx {
    let fx = Fx::new(db);
    fx.task("task-1").await;
    fx.task("task-2").await;
    fx.storage
        .set_task_title("task-1", "Ship the release")
        .await
        .unwrap();
    fx.storage
        .insert_task(&NewTask {
            id: "task-3",
            workspace_id: "ws-2",
            created_at: &t("10:00"),
        })
        .await
        .unwrap();
    let sessions = [
        ("s1", "task-1"),
        ("s2", "task-1"),
        ("s3", "task-2"),
        ("s4", "task-2"),
        ("s5", "task-2"),
        ("s6", "task-2"),
        ("s7", "task-3"),
    ];
    for (session, task) in sessions {
        let state = if session == "s6" {
            "COMPLETED"
        } else {
            "WAITING_FOR_INPUT"
        };
        fx.session(session, task, state).await;
        fx.turn(&format!("{session}-t1"), session, "10:00", None, json!({}))
            .await;
    }
    fx.question("m1", "s1", "s1-t1", "p1", "pending", "10:02")
        .await;
    fx.message(
        "m2a",
        "s2",
        Some("s2-t1"),
        "clarification_request",
        json!({ "pending_id": "p2", "status": "pending", "context": "Release notes",
                "question_total": 2 }),
        "10:01",
    )
    .await;
    fx.question("m2b", "s2", "s2-t1", "p2", "pending", "10:01:30")
        .await;
    fx.question("m3", "s3", "s3-t1", "p3", "pending", "10:02")
        .await;
    fx.question("m4", "s4", "s4-t1", "p4", "answered", "10:02")
        .await;
    // s5: the question is in an older turn; a newer open turn is current.
    fx.question("m5", "s5", "s5-t1", "p5", "pending", "10:01")
        .await;
    fx.turn("s5-t2", "s5", "10:30", None, json!({})).await;
    fx.question("m6", "s6", "s6-t1", "p6", "pending", "10:02")
        .await;
    fx.question("m7", "s7", "s7-t1", "p7", "pending", "10:03")
        .await;
    fx
}

fn ids(page: &Value) -> Vec<&str> {
    page["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["pending_id"].as_str().unwrap())
        .collect()
}

async fn validation(db: Db, _kind: Kind) {
    seed(&db).await;
    let srv = Srv::start(db).await;
    for path in [INBOX, &format!("{INBOX}/hidden"), &format!("{INBOX}/boot")] {
        for query in ["", "?workspace_id=", "?workspace_id=%20%20", "?limit=5"] {
            let answer = srv.get_as(ALICE, &format!("{path}{query}")).await;
            assert_eq!(answer.status, 400, "{path}{query}");
            assert_eq!(answer.body["error"]["code"], "bad_request");
            assert_eq!(
                answer.body["error"]["message"], "workspace_id is required",
                "{path}{query}"
            );
        }
    }
    for path in [INBOX, &format!("{INBOX}/hidden")] {
        for limit in ["0", "-1", "abc", "1.5", "%2B", "99999999999999999999"] {
            let answer = srv
                .get_as(ALICE, &format!("{path}?workspace_id=ws-1&limit={limit}"))
                .await;
            assert_eq!(answer.status, 400, "limit={limit}");
            assert_eq!(
                answer.body["error"]["message"],
                "limit must be a positive integer"
            );
        }
        for cursor in ["zz", "abc", "%2B1", "7c70", "79657374657264617c70"] {
            let answer = srv
                .get_as(ALICE, &format!("{path}?workspace_id=ws-1&cursor={cursor}"))
                .await;
            assert_eq!(answer.status, 400, "cursor={cursor}");
            assert_eq!(answer.body["error"]["message"], "cursor: malformed cursor");
        }
    }
    // Above the cap: clamped, not refused. An unknown workspace: an empty inbox.
    let page = srv.list(ALICE, "workspace_id=ws-1&limit=500").await;
    assert_eq!(page["count"], 3);
    // An empty limit or cursor is an absent one, as the reference client reads them.
    let page = srv.list(ALICE, "workspace_id=ws-1&limit=&cursor=").await;
    assert_eq!(page["count"], 3);
    let page = srv.list(ALICE, "workspace_id=nowhere").await;
    assert_eq!(
        (page["count"].clone(), page["hidden_count"].clone()),
        (json!(0), json!(0))
    );
    // Sidecar writes.
    let cases = [
        (
            "{\"state\":\"gone\"}",
            "state must be \"dismissed\" or \"snoozed\"",
        ),
        ("{}", "state must be \"dismissed\" or \"snoozed\""),
        (
            "{\"state\":\"snoozed\",\"snooze_duration\":\"2h\"}",
            "snooze_duration must be one of \"1h\", \"4h\", \"24h\"",
        ),
        ("{\"state\":1}", "state must be a string"),
        (
            "{\"state\":\"snoozed\",\"snooze_duration\":4}",
            "snooze_duration must be a string",
        ),
        ("[1]", "body must be a JSON object"),
    ];
    for (body, message) in cases {
        let answer = srv.put(ALICE, "p1", body).await;
        assert_eq!(answer.status, 400, "{body}");
        assert_eq!(answer.body["error"]["message"], message, "{body}");
    }
    let answer = srv.put(ALICE, "p1", "{not json").await;
    assert_eq!(answer.status, 400);
    let answer = srv.put(ALICE, "nope", "{\"state\":\"dismissed\"}").await;
    assert_eq!(
        (answer.status, answer.body["error"]["code"].clone()),
        (404, json!("not_found"))
    );
    assert_eq!(srv.restore(ALICE, "nope").await.status, 404);
    // Nothing was written.
    let page = srv.list(ALICE, "workspace_id=ws-1").await;
    assert_eq!(page["hidden_count"], 0);
}
both!(validation);

async fn rows_order_and_pages(db: Db, _kind: Kind) {
    seed(&db).await;
    let srv = Srv::start(db).await;
    let page = srv.list(ALICE, "workspace_id=ws-1").await;
    // created_at, then pending_id: p2 (10:01), p1 and p3 (10:02).
    assert_eq!(ids(&page), ["p2", "p1", "p3"], "{page}");
    assert_eq!(page["count"], 3);
    assert_eq!(page["hidden_count"], 0);
    assert_eq!(page["next_snooze_expiry"], Value::Null);
    assert!(page.get("next_cursor").is_none(), "{page}");
    let p2 = &page["bundles"][0];
    assert_eq!(p2["task_id"], "task-1");
    assert_eq!(p2["session_id"], "s2");
    assert_eq!(p2["session_state"], "WAITING_FOR_INPUT");
    assert_eq!(p2["task_title"], "Ship the release");
    assert_eq!(p2["created_at"], t("10:01"));
    assert_eq!(p2["context"], "Release notes");
    let messages: Vec<&str> = p2["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["m2a", "m2b"]);
    assert_eq!(page["bundles"][1]["context"], "");
    // The stream position as GET /tasks gives it.
    let tasks = srv.get_as(ALICE, "/api/v1/tasks").await.body;
    assert_eq!(page["stream"], tasks["stream"]);
    assert!(page["offset"].is_u64());
    // The task page agrees: exactly the inbox's sessions are waiting on a clarification.
    for (task, asking) in [("task-1", vec!["s1", "s2"]), ("task-2", vec!["s3"])] {
        let sessions = srv
            .get_as(ALICE, &format!("/api/v1/tasks/{task}/task-sessions"))
            .await
            .body;
        let mut got: Vec<&str> = sessions["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["pending_action"] == "clarification")
            .map(|s| s["id"].as_str().unwrap())
            .collect();
        got.sort_unstable();
        assert_eq!(got, asking, "{sessions}");
    }
    // Truncation and a cursor round trip.
    let first = srv.list(ALICE, "workspace_id=ws-1&limit=2").await;
    assert_eq!(ids(&first), ["p2", "p1"]);
    assert_eq!(first["count"], 2);
    let cursor = first["next_cursor"].as_str().expect("truncated").to_owned();
    let second = srv
        .list(ALICE, &format!("workspace_id=ws-1&limit=2&cursor={cursor}"))
        .await;
    assert_eq!(ids(&second), ["p3"]);
    assert!(second.get("next_cursor").is_none());
    let exact = srv.list(ALICE, "workspace_id=ws-1&limit=3").await;
    assert!(
        exact.get("next_cursor").is_none(),
        "not truncated at exactly the limit"
    );
    let other = srv.list(ALICE, "workspace_id=ws-2").await;
    assert_eq!(ids(&other), ["p7"]);
    // Answering a bundle removes its row; archiving a task removes its rows.
    let fx = Fx::new(&srv.running.app.db);
    fx.storage.set_task_archived("task-2", true).await.unwrap();
    let page = srv.list(ALICE, "workspace_id=ws-1").await;
    assert_eq!(ids(&page), ["p2", "p1"]);
    let boot = srv
        .get_as(ALICE, &format!("{INBOX}/boot?workspace_id=ws-1"))
        .await;
    assert_eq!(
        boot.body,
        json!({ "workspaceId": "ws-1", "count": 2, "hasMore": false, "nextSnoozeExpiry": null })
    );
}
both!(rows_order_and_pages);

async fn sidecar_snooze_and_two_requesters(db: Db, _kind: Kind) {
    seed(&db).await;
    let srv = Srv::start(db).await;
    assert_eq!(
        srv.put(ALICE, "p1", "{\"state\":\"dismissed\"}")
            .await
            .status,
        204
    );
    let answer = srv
        .put(
            ALICE,
            "p2",
            "{\"state\":\"snoozed\",\"snooze_duration\":\"1h\"}",
        )
        .await;
    assert_eq!((answer.status, answer.issued()), (204, None));
    let page = srv.list(ALICE, "workspace_id=ws-1").await;
    assert_eq!(ids(&page), ["p3"]);
    assert_eq!(page["hidden_count"], 2);
    assert_eq!(page["next_snooze_expiry"], t("13:00"));
    // Bob sees every row.
    let page = srv.list(BOB, "workspace_id=ws-1").await;
    assert_eq!(ids(&page), ["p2", "p1", "p3"]);
    assert_eq!(page["hidden_count"], 0);
    // Alice's hidden list.
    let hidden = srv
        .get_as(ALICE, &format!("{INBOX}/hidden?workspace_id=ws-1"))
        .await
        .body;
    assert_eq!(ids(&hidden), ["p2", "p1"]);
    assert_eq!(
        (hidden["count"].clone(), hidden["total"].clone()),
        (json!(2), json!(2))
    );
    assert_eq!(hidden["bundles"][0]["state"], "snoozed");
    assert_eq!(hidden["bundles"][0]["snooze_until"], t("13:00"));
    assert_eq!(hidden["bundles"][1]["state"], "dismissed");
    assert_eq!(hidden["bundles"][1]["snooze_until"], Value::Null);
    let first = srv
        .get_as(ALICE, &format!("{INBOX}/hidden?workspace_id=ws-1&limit=1"))
        .await
        .body;
    assert_eq!(
        (ids(&first), first["total"].clone()),
        (vec!["p2"], json!(2))
    );
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    let rest = srv
        .get_as(
            ALICE,
            &format!("{INBOX}/hidden?workspace_id=ws-1&cursor={cursor}"),
        )
        .await
        .body;
    assert_eq!(ids(&rest), ["p1"]);
    let boot = srv
        .get_as(ALICE, &format!("{INBOX}/boot?workspace_id=ws-1"))
        .await;
    assert_eq!(
        boot.body,
        json!({ "workspaceId": "ws-1", "count": 1, "hasMore": false,
                "nextSnoozeExpiry": t("13:00") })
    );
    // The snooze ends by the server's clock: a second before, still hidden; at the end, back.
    srv.clock.advance_secs(3599);
    assert_eq!(
        srv.list(ALICE, "workspace_id=ws-1").await["hidden_count"],
        2
    );
    srv.clock.advance_secs(1);
    let page = srv.list(ALICE, "workspace_id=ws-1").await;
    assert_eq!(ids(&page), ["p2", "p3"]);
    assert_eq!(page["hidden_count"], 1);
    assert_eq!(page["next_snooze_expiry"], Value::Null);
    // The default snooze is 4h from the server's time; a later write replaces an earlier one.
    assert_eq!(
        srv.put(BOB, "p3", "{\"state\":\"snoozed\"}").await.status,
        204
    );
    assert_eq!(
        srv.list(BOB, "workspace_id=ws-1").await["next_snooze_expiry"],
        t("17:00")
    );
    assert_eq!(
        srv.put(BOB, "p3", "{\"state\":\"dismissed\"}").await.status,
        204
    );
    let page = srv.list(BOB, "workspace_id=ws-1").await;
    assert_eq!(
        (
            page["hidden_count"].clone(),
            page["next_snooze_expiry"].clone()
        ),
        (json!(1), Value::Null)
    );
    // Restore is idempotent; Alice's p1 is back, Bob's sidecar untouched.
    assert_eq!(srv.restore(ALICE, "p1").await.status, 204);
    assert_eq!(srv.restore(ALICE, "p1").await.status, 204);
    assert_eq!(
        ids(&srv.list(ALICE, "workspace_id=ws-1").await),
        ["p2", "p1", "p3"]
    );
    assert_eq!(ids(&srv.list(BOB, "workspace_id=ws-1").await), ["p2", "p1"]);
    // A bundle that is gone leaves the hidden count.
    assert!(srv.running.app.storage.delete_session("s3").await.unwrap());
    let page = srv.list(BOB, "workspace_id=ws-1").await;
    assert_eq!(
        (ids(&page), page["hidden_count"].clone()),
        (vec!["p2", "p1"], json!(0))
    );
}
both!(sidecar_snooze_and_two_requesters);

async fn the_requester_cookie(db: Db, _kind: Kind) {
    seed(&db).await;
    let srv = Srv::start(db).await;
    // No cookie, or one the server could not have issued: a fresh requester, issued.
    let answer = srv
        .raw("GET", &format!("{INBOX}?workspace_id=ws-1"), &[], "")
        .await;
    assert_eq!(answer.status, 200);
    let cookie = answer.header("set-cookie").unwrap().to_owned();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    assert!(
        cookie.contains("Path=/api/v1/clarification-inbox"),
        "{cookie}"
    );
    let id = answer.issued().unwrap();
    assert_eq!(id.len(), 32);
    for bad in [
        "tp_requester=short",
        "tp_requester=0123456789ABCDEF0123456789ABCDEF",
    ] {
        let answer = srv
            .raw(
                "GET",
                &format!("{INBOX}?workspace_id=ws-1"),
                &[("cookie", bad)],
                "",
            )
            .await;
        let fresh = answer.issued().unwrap();
        assert!(fresh != id && fresh.len() == 32);
    }
    // A write without a cookie acts as the requester it issues.
    let answer = srv
        .raw(
            "PUT",
            &format!("{INBOX}/sidecar/p1"),
            &[("content-type", "application/json"), ("cookie", "other=1")],
            "{\"state\":\"dismissed\"}",
        )
        .await;
    assert_eq!(answer.status, 204);
    let writer = answer.issued().unwrap();
    assert_eq!(
        srv.list(&writer, "workspace_id=ws-1").await["hidden_count"],
        1
    );
    // The presented cookie is kept (not reissued); among other cookies.
    let cookies = format!("tp_access=x; tp_requester={id}; theme=dark");
    let answer = srv
        .raw(
            "GET",
            &format!("{INBOX}?workspace_id=ws-1"),
            &[("cookie", &cookies)],
            "",
        )
        .await;
    assert_eq!((answer.status, answer.issued()), (200, None));
    assert_eq!(answer.body["hidden_count"], 0);
}
both!(the_requester_cookie);

/// The request guard refuses cross-site and token-less inbox writes, and the database is
/// unchanged after each refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_refuses_cross_site_and_unauthorized_writes() {
    let db = server_support::fresh(Kind::Sqlite).await.unwrap();
    seed(&db).await;
    let clock = Arc::new(ManualClock::at(&t("12:00")).unwrap());
    let token = "inbox-token-0123456789";
    let mut config = config(&clock);
    config.access_token = Some(token.to_owned());
    let srv = Srv::with(db, clock, config).await;
    let bearer = format!("Bearer {token}");
    let cookie = format!("tp_requester={ALICE}");
    let path = format!("{INBOX}/sidecar/p1");
    let body = "{\"state\":\"dismissed\"}";
    let refusals: Vec<(Headers<'_>, u16, &str)> = vec![
        // no token
        (
            vec![("content-type", "application/json"), ("cookie", &cookie)],
            401,
            "unauthorized",
        ),
        // another site's page
        (
            vec![
                ("content-type", "application/json"),
                ("cookie", &cookie),
                ("authorization", &bearer),
                ("origin", "https://evil.example"),
            ],
            403,
            "origin_not_allowed",
        ),
        // a form's content type
        (
            vec![
                ("content-type", "text/plain"),
                ("cookie", &cookie),
                ("authorization", &bearer),
            ],
            415,
            "unsupported_media_type",
        ),
    ];
    for (headers, status, code) in &refusals {
        for method in ["PUT", "DELETE"] {
            let answer = srv.raw(method, &path, headers, body).await;
            assert_eq!(
                answer.status, *status,
                "{method} {headers:?}: {}",
                answer.body
            );
            assert_eq!(answer.body["error"]["code"], *code);
        }
    }
    let auth = [
        ("cookie", cookie.as_str()),
        ("authorization", bearer.as_str()),
    ];
    let list = format!("{INBOX}?workspace_id=ws-1");
    assert_eq!(srv.raw("GET", &list, &auth[..1], "").await.status, 401);
    let page = srv.raw("GET", &list, &auth, "").await;
    assert_eq!(
        (page.status, page.body["hidden_count"].clone()),
        (200, json!(0))
    );
    // The page's own origin, with the token: accepted.
    let origin = format!("http://{}", srv.running.addr);
    let answer = srv
        .raw(
            "PUT",
            &path,
            &[
                ("content-type", "application/json"),
                ("cookie", &cookie),
                ("authorization", &bearer),
                ("origin", &origin),
            ],
            body,
        )
        .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    let page = srv.raw("GET", &list, &auth, "").await;
    assert_eq!(page.body["hidden_count"], 1);
}

/// Two instances on one PostgreSQL answer alike: a dismissal written through one is the other's
/// too, for the same requester, and the rows are the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_postgres_answer_alike() {
    let Some(url) = server_support::fresh_url(Kind::Postgres).await else {
        eprintln!("skipped: {} is not set", server_support::PG_ENV);
        return;
    };
    let db = task_projection_server::storage::connect(&url)
        .await
        .unwrap();
    seed(&db).await;
    let clock = Arc::new(ManualClock::at(&t("12:00")).unwrap());
    let one = Srv::with(db, clock.clone(), config(&clock)).await;
    let db2 = task_projection_server::storage::connect(&url)
        .await
        .unwrap();
    let two = Srv::with(db2, clock.clone(), config(&clock)).await;
    assert_eq!(
        one.put(ALICE, "p1", "{\"state\":\"dismissed\"}")
            .await
            .status,
        204
    );
    assert_eq!(
        two.put(
            ALICE,
            "p2",
            "{\"state\":\"snoozed\",\"snooze_duration\":\"24h\"}"
        )
        .await
        .status,
        204
    );
    for who in [ALICE, BOB] {
        for query in ["workspace_id=ws-1", "workspace_id=ws-1&limit=1"] {
            let mut a = one.list(who, query).await;
            let mut b = two.list(who, query).await;
            assert_eq!(a["stream"], b["stream"], "one stream on one database");
            for page in [&mut a, &mut b] {
                page.as_object_mut().unwrap().remove("offset");
            }
            assert_eq!(a, b, "{who} {query}");
        }
        let a = one
            .get_as(who, &format!("{INBOX}/hidden?workspace_id=ws-1"))
            .await;
        let b = two
            .get_as(who, &format!("{INBOX}/hidden?workspace_id=ws-1"))
            .await;
        assert_eq!(a.body["bundles"], b.body["bundles"]);
    }
    assert_eq!(
        one.list(ALICE, "workspace_id=ws-1").await["hidden_count"],
        2
    );
    assert_eq!(restore_on(&two, "p1").await, 204);
    assert_eq!(
        one.list(ALICE, "workspace_id=ws-1").await["hidden_count"],
        1
    );
}

async fn restore_on(srv: &Srv, pending_id: &str) -> u16 {
    srv.restore(ALICE, pending_id).await.status
}

/// The demo data (`--seed-demo`): the inbox of `ws-demo` is exactly the sessions whose task page
/// waits on a clarification, with their bundles' ids.
async fn the_demo_inbox_agrees_with_the_task_pages(db: Db, _kind: Kind) {
    let clock = Arc::new(ManualClock::at(&t("12:00")).unwrap());
    let mut config = config(&clock);
    config.seed_demo = true;
    config.simulator = true;
    let srv = Srv::with(db, clock, config).await;
    let page = srv.list(ALICE, "workspace_id=ws-demo&limit=200").await;
    assert!(page["count"].as_u64().unwrap() > 0, "the demo asks: {page}");
    let mut from_inbox: Vec<String> = page["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["session_id"].as_str().unwrap().to_owned())
        .collect();
    from_inbox.sort_unstable();
    let tasks = srv.get_as(ALICE, "/api/v1/tasks").await.body;
    let mut from_pages = Vec::new();
    for task in tasks["tasks"].as_array().unwrap() {
        let id = task["id"].as_str().unwrap();
        let sessions = srv
            .get_as(ALICE, &format!("/api/v1/tasks/{id}/task-sessions"))
            .await
            .body;
        for session in sessions["sessions"].as_array().unwrap() {
            if session["pending_action"] == "clarification" {
                from_pages.push(session["id"].as_str().unwrap().to_owned());
            }
        }
    }
    from_pages.sort_unstable();
    assert_eq!(from_inbox, from_pages);
    for bundle in page["bundles"].as_array().unwrap() {
        let messages = bundle["messages"].as_array().unwrap();
        assert!(!messages.is_empty());
        for m in messages {
            assert_eq!(m["metadata"]["pending_id"], bundle["pending_id"]);
        }
    }
}
both!(the_demo_inbox_agrees_with_the_task_pages);

/// A `limit` above 200 is clamped to 200, and the default is 50: 205 bundles.
async fn the_limit_is_clamped_and_defaults(db: Db, _kind: Kind) {
    let fx = Fx::new(&db);
    fx.task("task-1").await;
    for i in 0..205 {
        let session = format!("s{i:03}");
        let turn = format!("{session}-t1");
        fx.session(&session, "task-1", "WAITING_FOR_INPUT").await;
        fx.turn(&turn, &session, "10:00", None, json!({})).await;
        let at = format!("10:{:02}:{:02}", i / 60, i % 60);
        fx.question(
            &format!("m{i:03}"),
            &session,
            &turn,
            &format!("p{i:03}"),
            "pending",
            &at,
        )
        .await;
    }
    let srv = Srv::start(db).await;
    let page = srv.list(ALICE, "workspace_id=ws-1").await;
    assert_eq!(page["count"], 50);
    assert!(page["next_cursor"].is_string());
    let page = srv.list(ALICE, "workspace_id=ws-1&limit=1000").await;
    assert_eq!(page["count"], 200);
    assert_eq!(ids(&page)[199], "p199");
    let cursor = page["next_cursor"].as_str().unwrap().to_owned();
    let rest = srv
        .list(
            ALICE,
            &format!("workspace_id=ws-1&limit=1000&cursor={cursor}"),
        )
        .await;
    assert_eq!(ids(&rest), ["p200", "p201", "p202", "p203", "p204"]);
    assert!(rest.get("next_cursor").is_none());
    let boot = srv
        .get_as(ALICE, &format!("{INBOX}/boot?workspace_id=ws-1"))
        .await;
    assert_eq!(
        (boot.body["count"].clone(), boot.body["hasMore"].clone()),
        (json!(50), json!(true))
    );
}
both!(the_limit_is_clamped_and_defaults);
