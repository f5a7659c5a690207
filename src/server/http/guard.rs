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

use super::app::ApiError;

/// The policy the demo page passes: everything from this origin, wasm compiled from it, nothing
/// inline, no framing.
const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; \
                   img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
                   form-action 'self'; frame-ancestors 'none'";

/// Who may talk to the server (see the module docs).
#[derive(Debug, Clone)]
pub struct Guard {
    /// The `Host` values accepted; `None`: any (bound to a non-loopback address).
    hosts: Option<Vec<String>>,
    origins: Vec<String>,
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
            roots: Vec::new(),
        }
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

    /// Why the request is refused, if it is.
    pub fn check(&self, method: &Method, path: &str, headers: &HeaderMap) -> Option<ApiError> {
        let text = |name: header::HeaderName| headers.get(name).map(HeaderValue::to_str);
        if let Some(hosts) = &self.hosts {
            let host = text(header::HOST).and_then(Result::ok).unwrap_or_default();
            if !hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
                return Some(refused(
                    StatusCode::FORBIDDEN,
                    "host_not_allowed",
                    "this server answers to localhost only",
                ));
            }
        }
        let changes_state = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
        if changes_state || path == "/api/v1/ws" {
            if let Some(origin) = text(header::ORIGIN) {
                let origin = origin.unwrap_or_default().to_ascii_lowercase();
                if !self.origins.contains(&origin) {
                    return Some(refused(
                        StatusCode::FORBIDDEN,
                        "origin_not_allowed",
                        "requests from this origin are not allowed (see --allow-origin)",
                    ));
                }
            }
        }
        if !changes_state {
            if let Some(refusal) = self.static_refusal(path) {
                return Some(refusal);
            }
        }
        if changes_state {
            let json = text(header::CONTENT_TYPE)
                .and_then(Result::ok)
                .and_then(|t| t.split(';').next())
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
            if !json {
                return Some(refused(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    "send the body as Content-Type: application/json",
                ));
            }
        }
        None
    }
}

fn refused(status: StatusCode, code: &'static str, message: &str) -> ApiError {
    ApiError::new(status, code, message)
}

/// The middleware: refuses what [`Guard::check`] refuses, and adds the security headers to every
/// response (refusals included).
pub async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let refusal = guard.check(request.method(), request.uri().path(), request.headers());
    let mut response = match refusal {
        Some(error) => {
            tracing::debug!(
                code = error.code,
                path = request.uri().path(),
                "request refused"
            );
            error.into_response()
        }
        None => next.run(request).await,
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
