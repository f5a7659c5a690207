//! The request guard: what another site's page open in the user's browser must not be able to
//! do, checked on every request before any route runs, and the security headers of every
//! response (docs/server-api.md, "Security model").
//!
//! - **Host.** While bound to a loopback address, the `Host` header must name this server
//!   (`localhost`, `127.0.0.1` or `[::1]` with its port): a page that reaches it through a DNS
//!   name rebound to 127.0.0.1 is refused (403 `host_not_allowed`).
//! - **Origin.** The WebSocket upgrade and every state-changing request (any method but `GET`,
//!   `HEAD`, `OPTIONS`) carrying an `Origin` must come from an allowed origin: the server's own
//!   (`http://localhost:PORT` and the loopback addresses) and those given with
//!   `--allow-origin` (403 `origin_not_allowed`). A request without `Origin` is not a browser's
//!   cross-site request (browsers send it on every cross-origin request and WebSocket) and passes.
//! - **Content type.** A state-changing request must say `Content-Type: application/json` (415
//!   `unsupported_media_type`): an HTML form can only send `text/plain`, form-urlencoded or
//!   multipart, and a cross-site `fetch` with JSON needs a CORS preflight this server never grants.
//! - **Access token.** Bound to a non-loopback address the server refuses to start without an
//!   access token (`--access-token` or `TASK_PROJECTION_ACCESS_TOKEN`); with one, every request
//!   and socket must present it (401 `unauthorized`): `Authorization: Bearer <token>`, the
//!   `tp_access` cookie, or `?access_token=<token>`. A page navigation carrying it in the query is
//!   answered with the cookie (`HttpOnly; SameSite=Strict`, so another site's page never sends it)
//!   and a redirect to the same URL without it. Off loopback a page's own origin
//!   (`http(s)://<Host>`) is accepted besides `--allow-origin`.
//! - **Static files.** No path with a segment starting with `.` (dotfiles, `.env`, `.git`), and
//!   no file reached through a link that leads out of its root (`--www`, `--pkg`): 404.
//! - **Headers.** Every response carries a Content-Security-Policy (same-origin scripts, styles,
//!   connections and wasm; no framing), `X-Content-Type-Options: nosniff`,
//!   `Referrer-Policy: no-referrer` and `X-Frame-Options: DENY`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

/// The policy the demo page passes: everything from this origin, wasm compiled from it, nothing
/// inline, no framing.
const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; \
                   img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
                   form-action 'self'; frame-ancestors 'none'";

/// The cookie that carries the access token for a page opened with it.
pub const COOKIE: &str = "tp_access";

/// Why a configured access token is unusable (`None`: fine). At least 16 characters of
/// `A–Z a–z 0–9 - . _ ~ + /` (`=` at the end): it travels in a header, a cookie and a URL.
pub fn token_problem(token: &str) -> Option<&'static str> {
    let body = token.trim_end_matches('=');
    if token.len() < 16 {
        return Some("must be at least 16 characters");
    }
    if !body
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
    {
        return Some("may hold only A-Z a-z 0-9 - . _ ~ + / (and = at the end)");
    }
    None
}

/// Who may talk to the server (see the module docs).
#[derive(Debug, Clone)]
pub struct Guard {
    /// The `Host` values accepted; `None`: any (bound to a non-loopback address).
    hosts: Option<Vec<String>>,
    origins: Vec<String>,
    /// The access token every request must present, when configured.
    token: Option<String>,
    /// The static roots: URL prefix and directory (canonical), the longest prefix first.
    roots: Vec<(String, PathBuf)>,
}

impl Guard {
    /// The guard of a server listening on `addr`, with `extra` allowed origins.
    pub fn new(addr: SocketAddr, extra: &[String]) -> Guard {
        let port = addr.port();
        let names = ["localhost", "127.0.0.1", "[::1]"];
        let mut hosts: Vec<String> = names.iter().map(|n| format!("{n}:{port}")).collect();
        if port == 80 {
            hosts.extend(names.iter().map(|n| (*n).to_owned()));
        }
        let mut origins: Vec<String> = hosts.iter().map(|h| format!("http://{h}")).collect();
        origins.extend(
            extra
                .iter()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase()),
        );
        Guard {
            hosts: addr.ip().is_loopback().then_some(hosts),
            origins,
            token: None,
            roots: Vec::new(),
        }
    }

    /// Every request must present `token` (see the module docs).
    pub fn access_token(mut self, token: Option<&str>) -> Guard {
        self.token = token.map(str::to_owned);
        self
    }

    /// Whether the request presents the access token (always, when none is configured), and
    /// whether it did so in the query (a navigation to answer with the cookie).
    fn authorized(&self, query: Option<&str>, headers: &HeaderMap) -> Authorization {
        let Some(token) = &self.token else {
            return Authorization::Open;
        };
        let matches = |candidate: &str| constant_time_eq(candidate.as_bytes(), token.as_bytes());
        let bearer = headers
            .get_all(header::AUTHORIZATION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| v.strip_prefix("Bearer "))
            .any(|v| matches(v.trim()));
        let cookie = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().strip_prefix(COOKIE)?.strip_prefix('='))
            .any(matches);
        if bearer || cookie {
            return Authorization::Presented;
        }
        if token_in_query(query).is_some_and(|t| matches(&t)) {
            return Authorization::InQuery;
        }
        Authorization::Missing
    }

    /// Static files under `prefix` (`"/pkg/"`, `"/"`) come from `dir`: a path that resolves out
    /// of it (a symbolic link) is refused. Longer prefixes are checked first.
    pub fn static_root(mut self, prefix: &str, dir: &Path) -> Guard {
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        self.roots.push((prefix.to_owned(), dir));
        self.roots
            .sort_by_key(|(prefix, _)| std::cmp::Reverse(prefix.len()));
        self
    }

    /// A static path that names a dotfile (any segment starting with `.`, percent-encoded or
    /// not) or resolves out of its root through a link: refused as not found.
    fn static_refusal(&self, path: &str) -> Option<ApiError> {
        if path.starts_with("/api/") || path == "/healthz" {
            return None;
        }
        // Decoded as ServeDir decodes it, so both see the same path.
        let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
        let hidden = decoded
            .split(['/', '\\'])
            .any(|segment| segment.starts_with('.'));
        let not_found = || Some(refused(StatusCode::NOT_FOUND, "not_found", "no such file"));
        if hidden {
            return not_found();
        }
        let (prefix, root) = self
            .roots
            .iter()
            .find(|(p, _)| decoded.starts_with(p.as_str()))?;
        let relative = decoded.get(prefix.len()..).unwrap_or_default();
        let file = root.join(relative.trim_start_matches('/'));
        match file.canonicalize() {
            Ok(real) if !real.starts_with(root) => not_found(),
            _ => None,
        }
    }

    /// Why the request is refused, if it is (`query`: the URI's query, where an access token
    /// may be).
    pub fn check(
        &self,
        method: &Method,
        path: &str,
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Option<ApiError> {
        self.verdict(method, path, query, headers).err()
    }

    /// What to do with a request: serve it (and whether it brought the token in its query) or
    /// refuse it.
    fn verdict(
        &self,
        method: &Method,
        path: &str,
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Result<Authorization, ApiError> {
        let text = |name: header::HeaderName| headers.get(name).map(HeaderValue::to_str);
        let host = text(header::HOST).and_then(Result::ok).unwrap_or_default();
        if let Some(hosts) = &self.hosts {
            if !hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
                return Err(refused(
                    StatusCode::FORBIDDEN,
                    "host_not_allowed",
                    "this server answers to localhost only",
                ));
            }
        }
        let authorization = self.authorized(query, headers);
        if authorization == Authorization::Missing {
            return Err(refused(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "present the access token (Authorization: Bearer …)",
            ));
        }
        let changes_state = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
        if changes_state || path == "/api/v1/ws" {
            if let Some(origin) = text(header::ORIGIN) {
                let origin = origin.unwrap_or_default().to_ascii_lowercase();
                // Off loopback the page's own origin is the one its Host names (the token, not
                // the Host, keeps rebound names out there).
                let own = self.hosts.is_none()
                    && !host.is_empty()
                    && ["http://", "https://"].iter().any(|scheme| {
                        origin.strip_prefix(scheme) == Some(host.to_ascii_lowercase().as_str())
                    });
                if !own && !self.origins.contains(&origin) {
                    return Err(refused(
                        StatusCode::FORBIDDEN,
                        "origin_not_allowed",
                        "requests from this origin are not allowed (see --allow-origin)",
                    ));
                }
            }
        }
        if !changes_state {
            if let Some(refusal) = self.static_refusal(path) {
                return Err(refusal);
            }
        }
        if changes_state {
            let json = text(header::CONTENT_TYPE)
                .and_then(Result::ok)
                .and_then(|t| t.split(';').next())
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
            if !json {
                return Err(refused(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    "send the body as Content-Type: application/json",
                ));
            }
        }
        Ok(authorization)
    }
}

/// How a request stands with the access token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Authorization {
    /// No token is configured.
    Open,
    /// In a header or the cookie.
    Presented,
    /// In the query (`access_token=`) only.
    InQuery,
    Missing,
}

/// The `access_token` query parameter, decoded.
fn token_in_query(query: Option<&str>) -> Option<String> {
    query?.split('&').find_map(|pair| {
        let value = pair.strip_prefix("access_token=")?;
        Some(
            percent_encoding::percent_decode_str(&value.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned(),
        )
    })
}

/// The query without its `access_token` parameter.
fn query_without_token(query: &str) -> String {
    query
        .split('&')
        .filter(|pair| !pair.is_empty() && !pair.starts_with("access_token="))
        .collect::<Vec<_>>()
        .join("&")
}

/// Byte equality in time independent of where the first difference is.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn refused(status: StatusCode, code: &'static str, message: &str) -> ApiError {
    ApiError::new(status, code, message)
}

/// The middleware: refuses what [`Guard::check`] refuses, and adds the security headers to every
/// response (refusals included).
pub async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let uri = request.uri().clone();
    let verdict = guard.verdict(request.method(), uri.path(), uri.query(), request.headers());
    let mut response = match verdict {
        Err(error) => {
            tracing::debug!(code = error.code, path = uri.path(), "request refused");
            let unauthorized = error.status == StatusCode::UNAUTHORIZED;
            let mut response = error.into_response();
            if unauthorized {
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"task-projection\""),
                );
            }
            response
        }
        // A page opened with the token in its URL: the cookie, and the same URL without it (so
        // it stays out of the history and of anything the page links to).
        Ok(Authorization::InQuery)
            if request.method() == Method::GET && !uri.path().starts_with("/api/") =>
        {
            let rest = query_without_token(uri.query().unwrap_or_default());
            let location = if rest.is_empty() {
                uri.path().to_owned()
            } else {
                format!("{}?{rest}", uri.path())
            };
            let mut response = StatusCode::SEE_OTHER.into_response();
            let token = guard.token.as_deref().unwrap_or_default();
            let cookie = format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict");
            if let (Ok(location), Ok(cookie)) = (
                HeaderValue::from_str(&location),
                HeaderValue::from_str(&cookie),
            ) {
                response.headers_mut().insert(header::LOCATION, location);
                response.headers_mut().insert(header::SET_COOKIE, cookie);
                response
                    .headers_mut()
                    .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            }
            response
        }
        Ok(_) => next.run(request).await,
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}
