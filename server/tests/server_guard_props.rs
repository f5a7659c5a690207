//! The request guard's policy (docs/server-api.md, "Security model"; `server/src/http/guard.rs`)
//! as a property over generated requests: any method, path (dot segments, percent-encoded dots,
//! the socket path), `Host` (ours in any case, another port, a rebound name, none), `Origin`
//! (ours, an allowed one, another site, `null`, garbage, none), content type and access token
//! (header, cookie, query, wrong, none), on a loopback guard and on one bound to every address
//! with a token. The verdict must be the policy's, written out here independently of the
//! implementation, and the guard must never panic. The example-based probes are in
//! server/tests/server_security.rs.

use std::net::SocketAddr;

use axum::http::header::{HeaderMap, HeaderName, HeaderValue};
use axum::http::Method;
use proptest::prelude::*;
use task_projection_server::http::guard::Guard;

const PORT: u16 = 8123;
const TOKEN: &str = "s3cret-token-0123456789abcdef";
const EXTRA: &str = "https://app.example.com";

#[derive(Clone, Debug)]
struct Req {
    method: Method,
    path: String,
    query: Option<String>,
    host: Option<String>,
    origin: Option<String>,
    content_type: Option<String>,
    authorization: Option<String>,
    cookie: Option<String>,
}

fn method() -> impl Strategy<Value = Method> {
    prop_oneof![
        Just(Method::GET),
        Just(Method::HEAD),
        Just(Method::OPTIONS),
        Just(Method::POST),
        Just(Method::PUT),
        Just(Method::DELETE),
        Just(Method::PATCH),
        Just(Method::from_bytes(b"PROPFIND").unwrap()),
    ]
}

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("api".to_owned()),
        Just("v1".to_owned()),
        Just("ws".to_owned()),
        Just("tasks".to_owned()),
        Just("pkg".to_owned()),
        Just("index.html".to_owned()),
        Just(".env".to_owned()),
        Just(".git".to_owned()),
        Just("%2eenv".to_owned()),
        Just("%2Egit".to_owned()),
        Just("..".to_owned()),
        Just(".".to_owned()),
        Just("a.b".to_owned()),
        "[a-z0-9._%-]{0,8}",
    ]
}

fn path() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("/api/v1/ws".to_owned()),
        Just("/api/v1/tasks".to_owned()),
        Just("/healthz".to_owned()),
        prop::collection::vec(segment(), 0..5).prop_map(|s| format!("/{}", s.join("/"))),
    ]
}

fn host() -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop_oneof![
        Just(format!("localhost:{PORT}")),
        Just(format!("LOCALHOST:{PORT}")),
        Just(format!("127.0.0.1:{PORT}")),
        Just(format!("[::1]:{PORT}")),
        Just("localhost".to_owned()),
        Just(format!("localhost:{}", PORT + 1)),
        Just(format!("attacker.example:{PORT}")),
        Just(format!("lan.example:{PORT}")),
        Just(String::new()),
    ])
}

fn origin() -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop_oneof![
        Just(format!("http://localhost:{PORT}")),
        Just(format!("http://127.0.0.1:{PORT}")),
        Just(format!("HTTP://LOCALHOST:{PORT}")),
        Just(EXTRA.to_owned()),
        Just(format!("{EXTRA}/")),
        Just(format!("http://lan.example:{PORT}")),
        Just(format!("https://lan.example:{PORT}")),
        Just("https://attacker.example".to_owned()),
        Just(format!("http://localhost:{}", PORT + 1)),
        Just("null".to_owned()),
        "[ -~]{0,12}",
    ])
}

fn content_type() -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop_oneof![
        Just("application/json".to_owned()),
        Just("application/json; charset=utf-8".to_owned()),
        Just("APPLICATION/JSON".to_owned()),
        Just(" application/json ;x=1".to_owned()),
        Just("text/plain".to_owned()),
        Just("application/x-www-form-urlencoded".to_owned()),
        Just("multipart/form-data; boundary=x".to_owned()),
        Just("application/jsonx".to_owned()),
        "[ -~]{0,12}",
    ])
}

fn credential() -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop_oneof![
        Just(TOKEN.to_owned()),
        Just(format!("{TOKEN}x")),
        Just(TOKEN[1..].to_owned()),
        Just(String::new()),
        "[A-Za-z0-9]{0,30}",
    ])
}

fn request() -> impl Strategy<Value = Req> {
    (
        method(),
        path(),
        prop::option::of(prop_oneof![
            credential().prop_map(|t| format!("access_token={}", t.unwrap_or_default())),
            credential().prop_map(|t| format!("x=1&access_token={}&y", t.unwrap_or_default())),
            "[a-z=&]{0,10}",
        ]),
        host(),
        origin(),
        content_type(),
        prop::option::of((prop::bool::ANY, credential())),
        prop::option::of(credential()),
    )
        .prop_map(
            |(method, path, query, host, origin, content_type, authorization, cookie)| Req {
                method,
                path,
                query,
                host,
                origin,
                content_type,
                authorization: authorization.map(|(bearer, t)| {
                    let t = t.unwrap_or_default();
                    if bearer {
                        format!("Bearer {t}")
                    } else {
                        t
                    }
                }),
                cookie: cookie.map(|t| format!("theme=dark; tp_access={}", t.unwrap_or_default())),
            },
        )
}

fn headers(req: &Req) -> HeaderMap {
    let mut map = HeaderMap::new();
    let mut put = |name: &'static str, value: &Option<String>| {
        if let Some(value) = value {
            if let Ok(value) = HeaderValue::from_str(value) {
                map.insert(HeaderName::from_static(name), value);
            }
        }
    };
    put("host", &req.host);
    put("origin", &req.origin);
    put("content-type", &req.content_type);
    put("authorization", &req.authorization);
    put("cookie", &req.cookie);
    map
}

/// The policy, written out: the refusal's code, or `None`.
fn expected(req: &Req, loopback: bool, token: bool) -> Option<&'static str> {
    let headers = headers(req);
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let host = get("host").unwrap_or_default().to_ascii_lowercase();
    if loopback {
        let ours = ["localhost", "127.0.0.1", "[::1]"]
            .iter()
            .any(|name| host == format!("{name}:{PORT}"));
        if !ours {
            return Some("host_not_allowed");
        }
    }
    if token {
        let bearer = get("authorization").and_then(|v| v.strip_prefix("Bearer ")) == Some(TOKEN);
        let cookie = get("cookie").is_some_and(|c| {
            c.split(';')
                .any(|p| p.trim() == format!("tp_access={TOKEN}"))
        });
        let query = req.query.as_deref().is_some_and(|q| {
            q.split('&')
                .find_map(|p| p.strip_prefix("access_token="))
                .is_some_and(|t| t == TOKEN)
        });
        if !(bearer || cookie || query) {
            return Some("unauthorized");
        }
    }
    let writes = !matches!(req.method, Method::GET | Method::HEAD | Method::OPTIONS);
    if writes || req.path == "/api/v1/ws" {
        if let Some(origin) = headers.get("origin") {
            let origin = origin.to_str().unwrap_or_default().to_ascii_lowercase();
            let mut allowed: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
                .iter()
                .map(|name| format!("http://{name}:{PORT}"))
                .collect();
            allowed.push(EXTRA.to_owned());
            let own = !loopback
                && !host.is_empty()
                && (origin == format!("http://{host}") || origin == format!("https://{host}"));
            if !own && !allowed.contains(&origin) {
                return Some("origin_not_allowed");
            }
        }
    }
    if !writes && !req.path.starts_with("/api/") && req.path != "/healthz" {
        let decoded = percent_encoding::percent_decode_str(&req.path).decode_utf8_lossy();
        if decoded.split(['/', '\\']).any(|s| s.starts_with('.')) {
            return Some("not_found");
        }
    }
    if writes {
        let json = get("content-type")
            .and_then(|t| t.split(';').next())
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
        if !json {
            return Some("unsupported_media_type");
        }
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn the_guard_refuses_exactly_what_the_policy_refuses(req in request()) {
        let loopback = Guard::new(SocketAddr::from(([127, 0, 0, 1], PORT)), &[EXTRA.to_owned()]);
        let open = Guard::new(SocketAddr::from(([0, 0, 0, 0], PORT)), &[EXTRA.to_owned()])
            .access_token(Some(TOKEN));
        let headers = headers(&req);
        for (guard, is_loopback, token) in [(&loopback, true, false), (&open, false, true)] {
            let verdict = guard
                .check(&req.method, &req.path, req.query.as_deref(), &headers)
                .map(|error| error.code);
            prop_assert_eq!(verdict, expected(&req, is_loopback, token), "{:?}", req);
        }
    }
}
