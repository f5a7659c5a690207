//! The REST routes (SPEC §1 shapes), the WebSocket upgrade, static files, and the route table.

use std::cmp::Ordering;
use std::sync::Arc;

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use axum::routing::{any, delete, get, post, put};
use axum::Router;
use serde_json::{json, Value};
use tower_http::services::ServeDir;

use crate::projection::load_snapshot;
use crate::storage::TaskRow;
use task_projection::rules::model::MessageRecord;
use task_projection::rules::time::Timestamp;
use task_projection::rules::turn::visible_turn_history;

use super::actions;
use super::app::App;
use super::config::Config;
use super::error::{ok, ApiError, ApiResult};
use super::hub::Resume;
use super::inbox;
use super::sim::routes::routes as simulator_routes;
use super::wire::task_wire;

/// The whole route table.
pub fn router(app: Arc<App>, config: &Config) -> Router {
    let mut api = Router::new()
        .route("/api/v1/tasks", get(list_tasks))
        .route("/api/v1/tasks/{task_id}/task-sessions", get(task_sessions))
        .route("/api/v1/task-sessions/{session_id}/turns", get(turns))
        .route("/api/v1/task-sessions/{session_id}/messages", get(messages))
        .route(
            "/api/v1/task-sessions/{session_id}",
            delete(actions::delete_session),
        )
        .route(
            "/api/v1/clarification/{pending_id}/respond",
            post(actions::respond),
        )
        .route(
            "/api/v1/permissions/respond",
            post(actions::respond_permission),
        )
        .route("/api/v1/clarification-inbox", get(inbox::list))
        .route("/api/v1/clarification-inbox/hidden", get(inbox::hidden))
        .route("/api/v1/clarification-inbox/boot", get(inbox::boot))
        .route(
            "/api/v1/clarification-inbox/sidecar/{pending_id}",
            put(inbox::put_sidecar).delete(inbox::delete_sidecar),
        )
        .route("/api/v1/ws", get(websocket))
        .route("/healthz", get(health));
    if config.simulator {
        api = api.merge(simulator_routes());
    }
    api.route("/api/{*rest}", any(unknown_api))
        .with_state(app)
        .nest_service("/pkg", ServeDir::new(&config.pkg))
        .fallback_service(ServeDir::new(&config.www))
}

async fn unknown_api() -> ApiError {
    ApiError::not_found("no such endpoint")
}

async fn health(State(app): State<Arc<App>>) -> Response {
    let core = app.core().await;
    ok(json!({ "ok": true, "epoch": core.epoch() }))
}

async fn websocket(
    State(app): State<Arc<App>>,
    RawQuery(query): RawQuery,
    upgrade: WebSocketUpgrade,
) -> Response {
    let resume = resume_of(query.as_deref());
    // Clients send nothing but control frames: a small read buffer (tungstenite zeroes the
    // read buffer's free space before each read, 128 KiB by default) and small messages.
    let upgrade = upgrade
        .read_buffer_size(CLIENT_READ_BUFFER)
        .max_message_size(CLIENT_MESSAGE_MAX)
        .max_frame_size(CLIENT_MESSAGE_MAX);
    upgrade.on_upgrade(move |socket| async move { app.hub.serve_socket(socket, resume).await })
}

/// The socket's read buffer: what a client sends fits.
const CLIENT_READ_BUFFER: usize = 4 << 10;
/// The largest message a client may send (it has nothing to send but control frames).
const CLIENT_MESSAGE_MAX: usize = 64 << 10;

/// `?since=<offset>&stream=<stream>`: where a reconnecting client was. Anything else (missing,
/// malformed) is no resume: the hello says `resumed: false` and the client refetches.
fn resume_of(query: Option<&str>) -> Option<Resume> {
    let (mut since, mut stream) = (None, None);
    for pair in query?.split('&') {
        match pair.split_once('=') {
            Some(("since", value)) => since = value.parse::<u64>().ok(),
            Some(("stream", value)) if !value.is_empty() && value.len() <= 128 => {
                stream = Some(value.to_owned());
            }
            _ => {}
        }
    }
    Some(Resume {
        since: since?,
        stream: stream?,
    })
}

/// Newest first by `created_at` (the rules' timestamp order), then id.
fn newest_task_first(a: &TaskRow, b: &TaskRow) -> Ordering {
    Timestamp::parse(&b.created_at)
        .cmp(&Timestamp::parse(&a.created_at))
        .then_with(|| a.id.cmp(&b.id))
}

/// `GET /api/v1/tasks`: unarchived tasks, newest first, with where in the event stream the read
/// stands (`stream`, `offset`: the last event delivered before it; every event up to it is
/// committed, so the tasks read after it reflect them, and a client resumes after it). A
/// projection failure is a 500.
async fn list_tasks(State(app): State<Arc<App>>) -> ApiResult {
    let (stream, offset) = (app.hub.stream().to_owned(), app.hub.latest());
    let core = app.core().await;
    let mut rows = app.storage.unarchived_tasks().await?;
    rows.sort_by(newest_task_first);
    let mut tasks = Vec::with_capacity(rows.len());
    for row in &rows {
        tasks.push(
            task_wire(&app.storage, &core.summaries, &core.projector, row)
                .await
                .map_err(ApiError::projection)?,
        );
    }
    Ok(ok(
        json!({ "tasks": tasks, "stream": stream, "offset": offset }),
    ))
}

/// `GET /api/v1/tasks/:task_id/task-sessions`: newest first with the authoritative projection;
/// 500 (never a falsely clean list) when the projection fails.
async fn task_sessions(State(app): State<Arc<App>>, Path(task_id): Path<String>) -> ApiResult {
    let core = app.core().await;
    app.storage.task(&task_id).await?;
    let sessions = core
        .projector
        .task_sessions(&task_id)
        .await
        .map_err(ApiError::projection)?;
    let sessions: Vec<Value> = sessions.iter().map(|s| s.to_wire()).collect();
    Ok(ok(json!({ "sessions": sessions })))
}

/// `GET /api/v1/task-sessions/:session_id/turns`: the visible turn history (SPEC §2: published
/// turns, ascending), read in one snapshot with the messages that publish reservations.
async fn turns(State(app): State<Arc<App>>, Path(session_id): Path<String>) -> ApiResult {
    let _core = app.core().await;
    let snapshot = load_snapshot(&app.storage, &session_id).await?;
    let referenced = |turn: &str| snapshot.messages.iter().any(|m| m.turn_id() == Some(turn));
    let turns: Vec<Value> = visible_turn_history(&snapshot.turns, referenced)
        .into_iter()
        .filter_map(|i| snapshot.turns.get(i).map(|t| t.to_wire()))
        .collect();
    Ok(ok(json!({ "turns": turns })))
}

/// `GET /api/v1/task-sessions/:session_id/messages`: in creation (insertion) order.
async fn messages(State(app): State<Arc<App>>, Path(session_id): Path<String>) -> ApiResult {
    let _core = app.core().await;
    app.storage.session(&session_id).await?;
    let rows = app.storage.messages_of_session(&session_id).await?;
    let messages: Vec<Value> = rows.iter().map(|m| m.to_wire()).collect();
    Ok(ok(json!({ "messages": messages })))
}
