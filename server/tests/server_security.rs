//! The reference server's security model (docs/server-api.md, "Security model";
//! `server/src/http/guard.rs`), probed as a hostile page or a DNS-rebinding name would: raw
//! HTTP/1.1 requests over loopback with the headers a browser would send. Each refusal leaves the
//! database unchanged; what a same-origin page, curl and the test client do keeps working.
#![cfg(feature = "test-client")]

#[path = "server_support/mod.rs"]
mod server_support;

use std::path::PathBuf;
use std::time::Duration;

use server_support::Kind;
use task_projection_server::http::client::HttpClient;
use task_projection_server::http::{parse_args, serve_db, Args, Config, Running, StartError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A server on a fresh SQLite file with the simulator and demo data, and static roots holding a
/// dotfile and a link out of the root.
struct Srv {
    running: Running,
    root: PathBuf,
}

impl Srv {
    async fn start(allow: &[&str]) -> Srv {
        let allow: Vec<String> = allow.iter().map(|o| (*o).to_owned()).collect();
        Srv::start_with(move |config| config.allow_origins = allow).await
    }

    /// A server whose configuration `edit` adjusts.
    async fn start_with(edit: impl FnOnce(&mut Config)) -> Srv {
        let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("security-{}", uuid::Uuid::new_v4().simple()));
        let (www, pkg, outside) = (root.join("www"), root.join("pkg"), root.join("outside"));
        for dir in [&www, &pkg, &outside] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(www.join("index.html"), "<!doctype html><title>demo</title>").unwrap();
        std::fs::write(www.join(".env"), "SECRET=1").unwrap();
        std::fs::create_dir_all(www.join(".git")).unwrap();
        std::fs::write(www.join(".git").join("config"), "[core]").unwrap();
        std::fs::write(outside.join("secret.txt"), "outside the root").unwrap();
        std::fs::write(pkg.join("index.js"), "export {}").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outside.join("secret.txt"), www.join("link.txt")).unwrap();
            std::os::unix::fs::symlink(&outside, pkg.join("dir")).unwrap();
            std::fs::write(www.join("inside.txt"), "inside").unwrap();
            std::os::unix::fs::symlink(www.join("inside.txt"), www.join("alias.txt")).unwrap();
        }
        let db = server_support::fresh(Kind::Sqlite).await.unwrap();
        let mut config = Config {
            port: 0,
            simulator: true,
            seed_demo: true,
            stall_interval: Duration::ZERO,
            www,
            pkg,
            ..Config::default()
        };
        edit(&mut config);
        let running = serve_db(db, config).await.expect("server starts");
        Srv { running, root }
    }

    fn port(&self) -> u16 {
        self.running.addr.port()
    }

    fn own_host(&self) -> String {
        format!("127.0.0.1:{}", self.port())
    }

    /// One raw request (`Connection: close`); returns the status, the headers (lower-case names)
    /// and the body.
    async fn raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, Vec<(String, String)>, String) {
        // Bound to every address: reach it over loopback.
        let port = self.port();
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let mut request = format!("{method} {path} HTTP/1.1\r\n");
        if !headers.iter().any(|(name, _)| *name == "connection") {
            request.push_str("connection: close\r\n");
        }
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
        stream.write_all(request.as_bytes()).await.unwrap();
        // To the end of the response: the connection closes, except after a 101 (the socket
        // stays open), which ends with its head.
        let mut response = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let n = stream.read(&mut chunk).await.unwrap();
            response.extend_from_slice(&chunk[..n]);
            if n == 0 || complete(&response) {
                break;
            }
        }
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
        (status, headers, body.to_owned())
    }

    /// A request with this server's own `Host`.
    async fn get(
        &self,
        path: &str,
        extra: &[(&str, &str)],
    ) -> (u16, Vec<(String, String)>, String) {
        let host = self.own_host();
        let mut headers = vec![("host", host.as_str())];
        headers.extend_from_slice(extra);
        self.raw("GET", path, &headers, "").await
    }

    async fn post(&self, path: &str, extra: &[(&str, &str)], body: &str) -> (u16, String) {
        let host = self.own_host();
        let mut headers = vec![("host", host.as_str())];
        headers.extend_from_slice(extra);
        let (status, _, body) = self.raw("POST", path, &headers, body).await;
        (status, body)
    }

    /// The task list as REST returns it (what a refused write must leave unchanged).
    async fn tasks(&self) -> String {
        self.get("/api/v1/tasks", &[]).await.2
    }

    async fn stop(self) {
        self.running.shutdown().await;
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A whole response: its head, then as many body bytes as `content-length` says (none after a
/// 101, whose socket stays open).
fn complete(response: &[u8]) -> bool {
    let Some(end) = response.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&response[..end]).to_ascii_lowercase();
    if head.starts_with("http/1.1 101") {
        return true;
    }
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    length.is_some_and(|n| response.len() >= end + 4 + n)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn code(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["error"]["code"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

const JSON: (&str, &str) = ("content-type", "application/json");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dns_rebinding_hosts_are_refused_while_on_loopback() {
    let srv = Srv::start(&[]).await;
    let port = srv.port();
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
        format!("LOCALHOST:{port}"),
    ] {
        let (status, _, _) = srv.raw("GET", "/healthz", &[("host", &host)], "").await;
        assert_eq!(status, 200, "Host {host}");
    }
    for host in [
        format!("attacker.example:{port}"),
        "attacker.example".to_owned(),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        format!("localhost.attacker.example:{port}"),
        String::new(),
    ] {
        for path in ["/healthz", "/api/v1/tasks", "/", "/api/v1/ws"] {
            let (status, headers, body) = srv.raw("GET", path, &[("host", &host)], "").await;
            assert_eq!(status, 403, "Host {host:?} {path}");
            assert_eq!(code(&body), "host_not_allowed");
            assert!(header(&headers, "content-security-policy").is_some());
        }
    }
    // No Host at all (an HTTP/1.0-style request).
    let (status, _, _) = srv.raw("GET", "/api/v1/tasks", &[], "").await;
    assert_eq!(status, 403);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_site_writes_and_sockets_are_refused() {
    let srv = Srv::start(&["https://app.example.com"]).await;
    let before = srv.tasks().await;
    let own = format!("http://127.0.0.1:{}", srv.port());
    let respond = "/api/v1/clarification/nope/respond";
    let body = r#"{"answers": []}"#;
    // Another site's page: refused before the route runs, whatever the body.
    for origin in [
        "https://attacker.example",
        "null",
        "http://127.0.0.1:1",
        "http://localhost",
    ] {
        let (status, body) = srv.post(respond, &[JSON, ("origin", origin)], body).await;
        assert_eq!(
            (status, code(&body).as_str()),
            (403, "origin_not_allowed"),
            "{origin}"
        );
        let (status, _) = srv
            .post("/api/dev/sim/reset", &[JSON, ("origin", origin)], "{}")
            .await;
        assert_eq!(status, 403, "{origin}");
        let upgrade = [
            ("origin", origin),
            ("connection", "upgrade"),
            ("upgrade", "websocket"),
            ("sec-websocket-version", "13"),
            ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ];
        let (status, _, body) = srv.get("/api/v1/ws", &upgrade).await;
        assert_eq!(
            (status, code(&body).as_str()),
            (403, "origin_not_allowed"),
            "ws {origin}"
        );
    }
    assert_eq!(srv.tasks().await, before, "nothing written");
    // The server's own page, an allowed origin, and a client without Origin get through.
    for origin in [Some(own.as_str()), Some("https://app.example.com"), None] {
        let mut headers = vec![JSON];
        if let Some(origin) = origin {
            headers.push(("origin", origin));
        }
        let (status, body) = srv.post(respond, &headers, r#"{"reject": true}"#).await;
        assert_eq!(status, 404, "{origin:?}: the route ran ({body})");
        let mut upgrade = vec![
            ("connection", "upgrade"),
            ("upgrade", "websocket"),
            ("sec-websocket-version", "13"),
            ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ];
        if let Some(origin) = origin {
            upgrade.push(("origin", origin));
        }
        let (status, _, _) = srv.get("/api/v1/ws", &upgrade).await;
        assert_eq!(status, 101, "ws {origin:?}");
    }
    // Reading is not a write: GET with a foreign Origin is answered (CORS keeps the body from
    // the page: no Access-Control-Allow-Origin is ever sent).
    let (status, headers, _) = srv
        .get("/api/v1/tasks", &[("origin", "https://attacker.example")])
        .await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "access-control-allow-origin"), None);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_must_be_json() {
    let srv = Srv::start(&[]).await;
    let before = srv.tasks().await;
    // What an HTML form or a no-preflight fetch can send, and nothing at all.
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        Some("application/jsonp"),
        None,
    ] {
        let mut headers = vec![];
        if let Some(t) = content_type {
            headers.push(("content-type", t));
        }
        for path in [
            "/api/v1/clarification/p/respond",
            "/api/dev/sim/reset",
            "/api/dev/sim/tasks",
        ] {
            let (status, body) = srv.post(path, &headers, r#"{"answers": []}"#).await;
            assert_eq!(
                (status, code(&body).as_str()),
                (415, "unsupported_media_type"),
                "{content_type:?} {path}"
            );
        }
    }
    assert_eq!(srv.tasks().await, before, "nothing written");
    let (status, _) = srv
        .post(
            "/api/dev/sim/tasks",
            &[("content-type", "application/json; charset=utf-8")],
            "{}",
        )
        .await;
    assert_eq!(status, 200, "JSON with a charset is JSON");
    // The test client (and the load benchmark) send JSON.
    let http = HttpClient::new(srv.running.addr);
    let (status, _) = http
        .post("/api/dev/sim/tasks", &serde_json::json!({}))
        .await
        .unwrap();
    assert_eq!(status, 200);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_response_carries_the_security_headers() {
    let srv = Srv::start(&[]).await;
    for (status, headers) in [
        {
            let (s, h, _) = srv.get("/", &[]).await;
            (s, h)
        },
        {
            let (s, h, _) = srv.get("/api/v1/tasks", &[]).await;
            (s, h)
        },
        {
            let (s, h, _) = srv.get("/api/v1/nope", &[]).await;
            (s, h)
        },
        {
            let (s, h, _) = srv.get("/pkg/index.js", &[]).await;
            (s, h)
        },
        {
            let (s, h, _) = srv
                .raw("POST", "/api/v1/clarification/p/respond", &[], "")
                .await;
            (s, h)
        },
    ] {
        assert!(status > 0);
        let csp = header(&headers, "content-security-policy").unwrap_or_default();
        assert!(csp.contains("default-src 'self'"), "{csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        assert_eq!(header(&headers, "x-content-type-options"), Some("nosniff"));
        assert_eq!(header(&headers, "referrer-policy"), Some("no-referrer"));
        assert_eq!(header(&headers, "x-frame-options"), Some("DENY"));
    }
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_serving_hides_dotfiles_and_never_leaves_its_root() {
    let srv = Srv::start(&[]).await;
    let (status, _, body) = srv.get("/", &[]).await;
    assert_eq!(status, 200);
    assert!(body.contains("demo"));
    for path in [
        "/.env",
        "/%2eenv",
        "/%2Eenv",
        "/.git/config",
        "/.git/",
        "/x/../.env",
        "/pkg/.env",
        "/link.txt",
        "/pkg/dir/secret.txt",
        "/%6cink.txt",
    ] {
        let (status, _, body) = srv.get(path, &[]).await;
        assert_ne!(status, 200, "{path}");
        assert!(
            !body.contains("SECRET") && !body.contains("outside the root"),
            "{path}: {body}"
        );
    }
    // A link that stays inside the root is fine.
    #[cfg(unix)]
    {
        let (status, _, body) = srv.get("/alias.txt", &[]).await;
        assert_eq!((status, body.as_str()), (200, "inside"));
    }
    srv.stop().await;
}

#[test]
fn allow_origin_flags_parse() {
    let parse = |args: &[&str]| match parse_args(args.iter().map(|s| s.to_string())) {
        Ok(Args::Run(config)) => Ok(config.allow_origins),
        Ok(Args::Help) => Err("help".to_owned()),
        Err(e) => Err(e),
    };
    assert_eq!(
        parse(&[
            "--allow-origin",
            "https://a.example",
            "--allow-origin=http://b.example:3000"
        ]),
        Ok(vec![
            "https://a.example".to_owned(),
            "http://b.example:3000".to_owned()
        ])
    );
    assert!(parse(&["--allow-origin", "a.example"]).is_err());
    assert!(parse(&["--allow-origin"]).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn respond_takes_exactly_one_answer_per_question() {
    let srv = Srv::start(&[]).await;
    let http = HttpClient::new(srv.running.addr);
    let post = |path: String, body: serde_json::Value| {
        let http = &http;
        async move {
            let (status, value) = http.post(&path, &body).await.unwrap();
            assert_eq!(status, 200, "{path}: {value}");
            value
        }
    };
    let task = post("/api/dev/sim/tasks".into(), serde_json::json!({})).await;
    let task = task["task_id"].as_str().unwrap().to_owned();
    let session = post(
        format!("/api/dev/sim/tasks/{task}/sessions"),
        serde_json::json!({ "primary": true }),
    )
    .await;
    let session = session["session_id"].as_str().unwrap().to_owned();
    post(
        format!("/api/dev/sim/sessions/{session}/turns"),
        serde_json::json!({}),
    )
    .await;
    let asked = post(
        format!("/api/dev/sim/sessions/{session}/clarification"),
        serde_json::json!({ "questions": ["One?", "Two?"] }),
    )
    .await;
    let pending = asked["pending_id"].as_str().unwrap().to_owned();
    let path = format!("/api/v1/clarification/{pending}/respond");
    let before = srv
        .get(&format!("/api/v1/task-sessions/{session}/messages"), &[])
        .await
        .2;
    let many: Vec<serde_json::Value> = (0..10_000)
        .map(|i| serde_json::json!({ "question_id": format!("q{i}"), "answer": "x" }))
        .collect();
    for (body, says) in [
        (
            serde_json::json!({ "answers": [{ "question_id": "q1", "answer": "a" }] }),
            "\\\"q2\\\" has no answer",
        ),
        (
            serde_json::json!({ "answers": [{ "question_id": "q1", "answer": "a" }, { "question_id": "q7", "answer": "b" }] }),
            "no question \\\"q7\\\"",
        ),
        (
            serde_json::json!({ "answers": [{ "question_id": "q1", "answer": "a" }, { "question_id": "q1", "answer": "a" }] }),
            "answered twice",
        ),
        (
            serde_json::json!({ "answers": [{ "question_id": "", "answer": "a" }] }),
            "no question \\\"\\\"",
        ),
        (
            serde_json::json!({ "answers": many }),
            "no question \\\"q0\\\"",
        ),
    ] {
        let (status, text) = srv.post(&path, &[JSON], &body.to_string()).await;
        assert_eq!(
            (status, code(&text).as_str()),
            (400, "bad_request"),
            "{text}"
        );
        assert!(text.contains(says), "{says}: {text}");
    }
    let after = srv
        .get(&format!("/api/v1/task-sessions/{session}/messages"), &[])
        .await
        .2;
    assert_eq!(after, before, "nothing written");
    let both = serde_json::json!({ "answers": [
        { "question_id": "q2", "answer": "b" }, { "question_id": "q1", "answer": "a" },
    ] });
    let (status, text) = srv.post(&path, &[JSON], &both.to_string()).await;
    assert_eq!(status, 200, "{text}");
    srv.stop().await;
}

const TOKEN: &str = "s3cret-token-0123456789abcdef";

const UPGRADE: [(&str, &str); 4] = [
    ("connection", "upgrade"),
    ("upgrade", "websocket"),
    ("sec-websocket-version", "13"),
    ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn off_loopback_the_server_starts_only_with_an_access_token() {
    for host in ["0.0.0.0", "::"] {
        let db = server_support::fresh(Kind::Sqlite).await.unwrap();
        let config = Config {
            host: host.into(),
            port: 0,
            stall_interval: Duration::ZERO,
            ..Config::default()
        };
        let error = serve_db(db, config).await.err().expect("refused");
        assert!(
            matches!(error, StartError::Insecure { .. }),
            "{host}: {error}"
        );
        assert_eq!(error.exit_code(), 2);
        assert!(error.to_string().contains("access token"), "{error}");
    }
    // A token too short to be one is refused too, on loopback as well.
    let db = server_support::fresh(Kind::Sqlite).await.unwrap();
    let config = Config {
        port: 0,
        stall_interval: Duration::ZERO,
        access_token: Some("short".into()),
        ..Config::default()
    };
    assert!(matches!(
        serve_db(db, config).await.err(),
        Some(StartError::Insecure { .. })
    ));
    let parse = |args: &[&str]| match parse_args(args.iter().map(|s| s.to_string())) {
        Ok(Args::Run(config)) => Ok(config.access_token),
        Ok(Args::Help) => Err("help".to_owned()),
        Err(e) => Err(e),
    };
    assert_eq!(
        parse(&["--access-token", TOKEN]),
        Ok(Some(TOKEN.to_owned()))
    );
    assert!(parse(&["--access-token", "short"]).is_err());
    assert!(parse(&["--access-token", "has;semicolon-and-more-chars"]).is_err());
    assert!(parse(&["--access-token"]).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_and_socket_presents_the_access_token() {
    let srv = Srv::start_with(|config| {
        config.host = "0.0.0.0".into();
        config.access_token = Some(TOKEN.into());
    })
    .await;
    // A LAN name: off loopback any Host is served, the token is what keeps others out.
    let lan = format!("lan.example:{}", srv.port());
    let bearer = format!("Bearer {TOKEN}");
    let cookie = format!("tp_access={TOKEN}");
    let get = |path: &'static str, extra: Vec<(&'static str, String)>| {
        let lan = lan.clone();
        let srv = &srv;
        async move {
            let mut headers: Vec<(&str, &str)> = vec![("host", lan.as_str())];
            headers.extend(extra.iter().map(|(k, v)| (*k, v.as_str())));
            srv.raw("GET", path, &headers, "").await
        }
    };
    // Nothing is served without it: the API, static files, the socket.
    for path in [
        "/api/v1/tasks",
        "/",
        "/index.html",
        "/pkg/index.js",
        "/healthz",
    ] {
        for extra in [
            vec![],
            vec![(
                "authorization",
                "Bearer wrong-token-0123456789abcdef".to_owned(),
            )],
            vec![("authorization", format!("Bearer {TOKEN}x"))],
            vec![(
                "cookie",
                "tp_access=wrong-token-0123456789abcdef".to_owned(),
            )],
            vec![("authorization", TOKEN.to_owned())],
        ] {
            let (status, headers, body) = get(path, extra.clone()).await;
            assert_eq!(
                (status, code(&body).as_str()),
                (401, "unauthorized"),
                "{path} {extra:?}"
            );
            assert!(header(&headers, "www-authenticate").is_some_and(|v| v.starts_with("Bearer")));
            assert!(!body.contains(TOKEN));
        }
    }
    let mut upgrade: Vec<(&str, String)> =
        UPGRADE.iter().map(|(k, v)| (*k, (*v).to_owned())).collect();
    let (status, _, _) = get("/api/v1/ws", upgrade.clone()).await;
    assert_eq!(status, 401, "a socket without the token");
    // With it: the header, the cookie, or the query on an API call.
    let (status, _, body) = get("/api/v1/tasks", vec![("authorization", bearer.clone())]).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, _) = get(
        "/api/v1/tasks",
        vec![("cookie", format!("theme=dark; {cookie}"))],
    )
    .await;
    assert_eq!(status, 200);
    let (status, _, _) = get("/index.html", vec![("cookie", cookie.clone())]).await;
    assert_eq!(status, 200);
    let (status, _, _) = srv
        .raw(
            "GET",
            &format!("/api/v1/tasks?access_token={TOKEN}"),
            &[("host", lan.as_str())],
            "",
        )
        .await;
    assert_eq!(status, 200);
    upgrade.push(("authorization", bearer.clone()));
    let (status, _, _) = get("/api/v1/ws", upgrade.clone()).await;
    assert_eq!(status, 101, "a socket with the token");
    // A page opened with the token in its URL gets the cookie (never sent by another site's
    // page) and the same URL without the token.
    for (path, location) in [
        (format!("/?access_token={TOKEN}"), "/"),
        (
            format!("/index.html?x=1&access_token={TOKEN}&y=2"),
            "/index.html?x=1&y=2",
        ),
    ] {
        let (status, headers, _) = srv.raw("GET", &path, &[("host", lan.as_str())], "").await;
        assert_eq!(status, 303, "{path}");
        assert_eq!(header(&headers, "location"), Some(location));
        let set = header(&headers, "set-cookie").unwrap_or_default();
        assert!(set.starts_with(&format!("{cookie};")), "{set}");
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
            assert!(set.contains(attribute), "{set}");
        }
        assert_eq!(header(&headers, "cache-control"), Some("no-store"));
    }
    let (status, _, _) = srv
        .raw(
            "GET",
            "/?access_token=wrong-token-0123456789abcdef",
            &[("host", lan.as_str())],
            "",
        )
        .await;
    assert_eq!(status, 401);
    // Writes: the page's own origin (the Host it was opened at) passes; another site's page is
    // refused even when it somehow holds the token.
    let before = get("/api/v1/tasks", vec![("authorization", bearer.clone())])
        .await
        .2;
    let respond = "/api/v1/clarification/nope/respond";
    let own = format!("http://{lan}");
    for (origin, expected) in [(own.as_str(), 404), ("https://attacker.example", 403)] {
        let headers = [
            ("host", lan.as_str()),
            JSON,
            ("origin", origin),
            ("authorization", bearer.as_str()),
        ];
        let (status, _, body) = srv
            .raw("POST", respond, &headers, r#"{"reject": true}"#)
            .await;
        assert_eq!(status, expected, "{origin}: {body}");
        let mut upgrade = upgrade.clone();
        upgrade.push(("origin", origin.to_owned()));
        let (status, _, _) = get("/api/v1/ws", upgrade).await;
        assert_eq!(
            status,
            if expected == 404 { 101 } else { 403 },
            "ws {origin}"
        );
    }
    let (status, _, _) = srv
        .raw(
            "POST",
            respond,
            &[("host", lan.as_str()), JSON, ("origin", own.as_str())],
            r#"{"reject": true}"#,
        )
        .await;
    assert_eq!(status, 401, "a write without the token");
    assert_eq!(
        get("/api/v1/tasks", vec![("authorization", bearer.clone())])
            .await
            .2,
        before,
        "nothing written"
    );
    // The test client presents it the same way.
    let port = srv.port();
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let http = HttpClient::new(addr).with_token(Some(TOKEN));
    assert!(http.get_ok("/api/v1/tasks").await.is_ok());
    assert!(HttpClient::new(addr).get_ok("/api/v1/tasks").await.is_err());
    let mut ws =
        task_projection_server::http::client::WsClient::connect_with_token(addr, Some(TOKEN))
            .await
            .expect("socket with the token");
    let hello = ws.next().await.unwrap().unwrap();
    assert_eq!(hello["type"], "server.hello");
    assert!(
        task_projection_server::http::client::WsClient::connect(addr)
            .await
            .is_err()
    );
    srv.stop().await;
}

/// The demo's pending permission: its session and the body that answers it.
async fn demo_permission(srv: &Srv) -> (String, String) {
    let tasks: serde_json::Value = serde_json::from_str(&srv.tasks().await).unwrap();
    let task = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task_pending_action"] == "permission")
        .expect("the demo's permission task")
        .clone();
    let task_id = task["id"].as_str().unwrap();
    let (_, _, sessions) = srv
        .get(&format!("/api/v1/tasks/{task_id}/task-sessions"), &[])
        .await;
    let sessions: serde_json::Value = serde_json::from_str(&sessions).unwrap();
    let session = sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["pending_action"] == "permission")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, _, messages) = srv
        .get(&format!("/api/v1/task-sessions/{session}/messages"), &[])
        .await;
    let messages: serde_json::Value = serde_json::from_str(&messages).unwrap();
    let row = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["type"] == "permission_request")
        .unwrap()
        .clone();
    let body = serde_json::json!({
        "task_id": task_id,
        "session_id": session,
        "request_id": row["metadata"]["request_id"],
        "pending_id": row["metadata"]["pending_id"],
        "option_id": "allow_once",
    });
    (session, body.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_actions_are_guarded_as_every_write() {
    let srv = Srv::start(&[]).await;
    let before = srv.tasks().await;
    let (session, body) = demo_permission(&srv).await;
    let permission = "/api/v1/permissions/respond";
    let delete = format!("/api/v1/task-sessions/{session}");
    let host = srv.own_host();
    for origin in ["https://attacker.example", "null", "http://127.0.0.1:1"] {
        let headers = [JSON, ("origin", origin)];
        let (status, reply) = srv.post(permission, &headers, &body).await;
        assert_eq!(
            (status, code(&reply).as_str()),
            (403, "origin_not_allowed"),
            "{origin}"
        );
        let (status, _, reply) = srv
            .raw(
                "DELETE",
                &delete,
                &[("host", &host), JSON, ("origin", origin)],
                "{}",
            )
            .await;
        assert_eq!(
            (status, code(&reply).as_str()),
            (403, "origin_not_allowed"),
            "{origin}"
        );
    }
    for content_type in [Some("text/plain"), None] {
        let mut headers = vec![("host", host.as_str())];
        headers.extend(content_type.map(|t| ("content-type", t)));
        let (status, _, reply) = srv.raw("POST", permission, &headers, &body).await;
        assert_eq!(
            (status, code(&reply).as_str()),
            (415, "unsupported_media_type")
        );
        let (status, _, reply) = srv.raw("DELETE", &delete, &headers, "{}").await;
        assert_eq!(
            (status, code(&reply).as_str()),
            (415, "unsupported_media_type")
        );
    }
    assert_eq!(srv.tasks().await, before, "nothing written");
    // The server's own page gets through: the permission is answered, then the (now running)
    // session is refused by the route itself.
    let own = format!("http://{host}");
    let (status, reply) = srv
        .post(permission, &[JSON, ("origin", own.as_str())], &body)
        .await;
    assert_eq!(status, 200, "{reply}");
    let (status, _, reply) = srv
        .raw(
            "DELETE",
            &delete,
            &[("host", &host), JSON, ("origin", own.as_str())],
            "",
        )
        .await;
    assert_eq!(
        (status, code(&reply).as_str()),
        (409, "session_running"),
        "{reply}"
    );
    srv.stop().await;
}
