//! The needs-you inbox's routes (docs/server-api.md, "Needs-you inbox"), shaped as the reference
//! client's (`/api/v1/clarification-inbox`): the list, the hidden list, the sidecar write and
//! restore, and the badge's boot seed. Rows, order, page and snooze expiry are decided by
//! [`crate::inbox`] with `rules::inbox`; this module reads the query, the body and the
//! requester, and writes the answers.
//!
//! **The requester** is the browser that holds the `tp_requester` cookie: a random id (122 bits,
//! a v4 UUID's hex) the server issues on the first inbox request without a valid one,
//! `HttpOnly` (no script reads it), `SameSite=Strict` (another site's page never sends it) and
//! scoped to `Path=/api/v1/clarification-inbox`. The sidecar is keyed by it, so two browsers (or
//! two profiles) keep separate dismissals and snoozes. Writes pass the request guard like every
//! other write (Origin, `Content-Type: application/json`, the access token when one is set).

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use percent_encoding::percent_decode_str;
use serde_json::{json, Map, Value};

use crate::clock::wire_time;
use crate::inbox::{candidates, page_of, row_json, sidecar_entries, Candidate};
use task_projection::rules::inbox::{
    decode_cursor, limit, sidecar_write, workspace, List, Problem, RowKey, Sidecar, DEFAULT_LIMIT,
};
use task_projection::rules::time::Timestamp;

use super::app::App;
use super::error::{ApiError, ApiResult};
use super::wire::{body_json, opt_str};

/// The requester cookie.
pub const REQUESTER_COOKIE: &str = "tp_requester";

/// The requester of a request: the cookie's id when it is one the server could have issued
/// (32 lower-case hex digits), and whether a fresh one must be issued with the answer.
fn requester(headers: &HeaderMap) -> (String, bool) {
    let presented = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == REQUESTER_COOKIE)
        .map(|(_, value)| value.trim())
        .filter(|id| id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
    match presented {
        Some(id) => (id.to_owned(), false),
        None => (uuid::Uuid::new_v4().simple().to_string(), true),
    }
}

/// `response` with the requester cookie set when it was issued.
fn with_requester(mut response: Response, id: &str, issued: bool) -> Response {
    if issued {
        let cookie = format!(
            "{REQUESTER_COOKIE}={id}; Path=/api/v1/clarification-inbox; Max-Age=34560000; \
             HttpOnly; SameSite=Strict"
        );
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    response
}

fn refused(problem: Problem) -> ApiError {
    ApiError::bad_request(problem.message())
}

/// The query's parameters, percent-decoded (`+` is a space); a repeated name keeps its first.
fn params(query: Option<&str>) -> Map<String, Value> {
    let mut out = Map::new();
    for pair in query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |s: &str| {
            percent_decode_str(&s.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned()
        };
        out.entry(decode(name))
            .or_insert(Value::String(decode(value)));
    }
    out
}

/// The list query: workspace, limit, cursor (each validated by the rules).
fn list_query(query: Option<&str>) -> ApiResult<(String, usize, Option<RowKey>)> {
    let params = params(query);
    let get = |name: &str| params.get(name).and_then(Value::as_str);
    let workspace_id = workspace(get("workspace_id")).map_err(refused)?.to_owned();
    let limit = limit(get("limit")).map_err(refused)?;
    let cursor = match get("cursor") {
        None | Some("") => None,
        Some(raw) => Some(decode_cursor(raw).map_err(refused)?),
    };
    Ok((workspace_id, limit, cursor))
}

/// What every list answer reads: the stream position first (as `GET /tasks`), the live bundles,
/// the requester's sidecar and the server time.
struct Read {
    stream: String,
    offset: u64,
    candidates: Vec<Candidate>,
    sidecar: HashMap<String, Sidecar>,
    now: Timestamp,
}

async fn read(app: &App, workspace_id: &str, requester: &str) -> ApiResult<Read> {
    let (stream, offset) = (app.hub.stream().to_owned(), app.hub.latest());
    let _core = app.core().await;
    let candidates = candidates(&app.storage, workspace_id)
        .await
        .map_err(ApiError::projection)?;
    let sidecar = sidecar_entries(app.storage.sidecar_of(requester).await?);
    Ok(Read {
        stream,
        offset,
        candidates,
        sidecar,
        now: Timestamp::parse(&wire_time(app.clock.now())),
    })
}

async fn rows_json(app: &App, rows: impl Iterator<Item = &Candidate>) -> ApiResult<Vec<Value>> {
    let mut out = Vec::new();
    for candidate in rows {
        let title = app.storage.task_title(&candidate.session.task_id).await?;
        out.push(row_json(candidate, &title));
    }
    Ok(out)
}

fn time_json(t: Option<&Timestamp>) -> Value {
    t.map_or(Value::Null, |t| Value::from(t.text().into_owned()))
}

/// `GET /api/v1/clarification-inbox?workspace_id=&limit=&cursor=`.
pub async fn list(
    State(app): State<Arc<App>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> ApiResult {
    let (id, issued) = requester(&headers);
    let (workspace_id, limit, cursor) = list_query(query.as_deref())?;
    let read = read(&app, &workspace_id, &id).await?;
    let page = page_of(
        &read.candidates,
        &read.sidecar,
        &read.now,
        List::Visible,
        cursor.as_ref(),
        limit,
    );
    let bundles = rows_json(
        &app,
        page.rows.iter().filter_map(|&i| read.candidates.get(i)),
    )
    .await?;
    let mut body = json!({
        "bundles": bundles,
        "count": bundles.len(),
        "hidden_count": page.hidden_count,
        "next_snooze_expiry": time_json(page.next_snooze_expiry.as_ref()),
        "stream": read.stream,
        "offset": read.offset,
    });
    if let (Some(cursor), Some(map)) = (page.next_cursor, body.as_object_mut()) {
        map.insert("next_cursor".into(), Value::from(cursor));
    }
    Ok(with_requester(Json(body).into_response(), &id, issued))
}

/// `GET /api/v1/clarification-inbox/hidden?workspace_id=&limit=&cursor=`: the live bundles the
/// requester's sidecar hides now, each with `state` and `snooze_until`; `total` is all of them.
pub async fn hidden(
    State(app): State<Arc<App>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> ApiResult {
    let (id, issued) = requester(&headers);
    let (workspace_id, limit, cursor) = list_query(query.as_deref())?;
    let read = read(&app, &workspace_id, &id).await?;
    let page = page_of(
        &read.candidates,
        &read.sidecar,
        &read.now,
        List::Hidden,
        cursor.as_ref(),
        limit,
    );
    let mut bundles = Vec::new();
    for candidate in page.rows.iter().filter_map(|&i| read.candidates.get(i)) {
        let title = app.storage.task_title(&candidate.session.task_id).await?;
        let mut row = row_json(candidate, &title);
        let (state, until) = match read.sidecar.get(&candidate.key.pending_id) {
            Some(Sidecar::Snoozed { until }) => ("snoozed", time_json(Some(until))),
            _ => ("dismissed", Value::Null),
        };
        if let Some(map) = row.as_object_mut() {
            map.insert("state".into(), Value::from(state));
            map.insert("snooze_until".into(), until);
        }
        bundles.push(row);
    }
    let mut body = json!({
        "bundles": bundles,
        "count": bundles.len(),
        "total": page.hidden_count,
        "stream": read.stream,
        "offset": read.offset,
    });
    if let (Some(cursor), Some(map)) = (page.next_cursor, body.as_object_mut()) {
        map.insert("next_cursor".into(), Value::from(cursor));
    }
    Ok(with_requester(Json(body).into_response(), &id, issued))
}

/// `GET /api/v1/clarification-inbox/boot?workspace_id=`: the badge's seed, as the reference
/// client's boot payload carries it (`initialState.needsYouInboxBoot`): `{workspaceId, count,
/// hasMore, nextSnoozeExpiry}` at the default limit.
pub async fn boot(
    State(app): State<Arc<App>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> ApiResult {
    let (id, issued) = requester(&headers);
    let params = params(query.as_deref());
    let workspace_id = workspace(params.get("workspace_id").and_then(Value::as_str))
        .map_err(refused)?
        .to_owned();
    let read = read(&app, &workspace_id, &id).await?;
    let page = page_of(
        &read.candidates,
        &read.sidecar,
        &read.now,
        List::Visible,
        None,
        DEFAULT_LIMIT,
    );
    let body = json!({
        "workspaceId": workspace_id,
        "count": page.rows.len(),
        "hasMore": page.next_cursor.is_some(),
        "nextSnoozeExpiry": time_json(page.next_snooze_expiry.as_ref()),
    });
    Ok(with_requester(Json(body).into_response(), &id, issued))
}

/// The bundle a sidecar write names must exist (404 `not_found` otherwise).
async fn known_bundle(app: &App, pending_id: &str) -> ApiResult<()> {
    if pending_id.is_empty()
        || app
            .storage
            .sessions_with_bundle(pending_id)
            .await?
            .is_empty()
    {
        return Err(ApiError::not_found("clarification request not found"));
    }
    Ok(())
}

/// `PUT /api/v1/clarification-inbox/sidecar/:pending_id` `{state: "dismissed"}` or
/// `{state: "snoozed", snooze_duration?: "1h" | "4h" | "24h"}` (default `4h`, from server time):
/// 204.
pub async fn put_sidecar(
    State(app): State<Arc<App>>,
    Path(pending_id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let (id, issued) = requester(&headers);
    let body = body_json(&body)?;
    let state = opt_str(&body, "state")?.unwrap_or_default();
    let duration = opt_str(&body, "snooze_duration")?;
    let snooze = sidecar_write(state, duration).map_err(refused)?;
    known_bundle(&app, &pending_id).await?;
    let now = app.clock.now();
    let until = snooze.and_then(|secs| now.checked_add_signed(chrono::Duration::seconds(secs)));
    let until = until.map(wire_time);
    let state = if snooze.is_some() {
        "snoozed"
    } else {
        "dismissed"
    };
    app.storage
        .put_sidecar(&id, &pending_id, state, until.as_deref(), &wire_time(now))
        .await?;
    Ok(with_requester(
        StatusCode::NO_CONTENT.into_response(),
        &id,
        issued,
    ))
}

/// `DELETE /api/v1/clarification-inbox/sidecar/:pending_id`: restore (idempotent), 204.
pub async fn delete_sidecar(
    State(app): State<Arc<App>>,
    Path(pending_id): Path<String>,
    headers: HeaderMap,
) -> ApiResult {
    let (id, issued) = requester(&headers);
    known_bundle(&app, &pending_id).await?;
    app.storage.delete_sidecar(&id, &pending_id).await?;
    Ok(with_requester(
        StatusCode::NO_CONTENT.into_response(),
        &id,
        issued,
    ))
}
