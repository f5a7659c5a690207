//! The simulator API under `/api/dev/sim/` (mounted with `--simulator` only; see [`super`]):
//! each route reads its body, takes the session's lock and the current start's services, and
//! calls one of the simulator's writes ([`sessions`](super::sessions), [`turns`](super::turns),
//! [`questions`](super::questions)) or the demo data's [`reset`](super::seed::reset).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Map, Value};

use crate::http::agent::ResumeMode;
use crate::http::app::App;
use crate::http::error::{done, one, ApiError, ApiResult};
use crate::http::hub::Frame;
use crate::http::wire::{body_json, opt_bool, opt_str};

use super::questions::{
    ask_clarification, ask_permission, detach, resolve_permission, resolve_session_permission,
};
use super::seed;
use super::sessions::{
    create_session, create_task, delete_task, known_state, repair, require_live_session, set_state,
};
use super::turns::{complete_open_turns, complete_turn_row, open_turn, post_message, start_turn};

/// The simulator routes (mounted with `--simulator` only).
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/api/dev/sim", get(sim_probe))
        .route("/api/dev/sim/reset", post(sim_reset))
        .route("/api/dev/sim/tasks", post(sim_task))
        .route("/api/dev/sim/tasks/{task_id}/sessions", post(sim_session))
        .route("/api/dev/sim/tasks/{task_id}/delete", post(sim_delete_task))
        .route("/api/dev/sim/sessions/{session_id}/turns", post(sim_turn))
        .route("/api/dev/sim/turns/{turn_id}/complete", post(sim_complete))
        .route(
            "/api/dev/sim/sessions/{session_id}/messages",
            post(sim_message),
        )
        .route(
            "/api/dev/sim/sessions/{session_id}/clarification",
            post(sim_clarification),
        )
        .route(
            "/api/dev/sim/sessions/{session_id}/permission",
            post(sim_permission),
        )
        .route(
            "/api/dev/sim/permissions/{message_id}/resolve",
            post(sim_resolve),
        )
        .route(
            "/api/dev/sim/sessions/{session_id}/permission/resolve",
            post(sim_resolve_session),
        )
        .route(
            "/api/dev/sim/sessions/{session_id}/detach",
            post(sim_detach),
        )
        .route("/api/dev/sim/sessions/{session_id}/state", post(sim_state))
        .route("/api/dev/sim/restart", post(sim_restart))
        .route("/api/dev/sim/stall-sweep", post(sim_sweep))
        .route("/api/dev/sim/replay", post(sim_replay))
}

/// `GET /api/dev/sim`: the simulator is mounted (clients probe it; 404 without `--simulator`).
async fn sim_probe() -> Response {
    done(Map::new())
}

async fn sim_reset(State(app): State<Arc<App>>, body: Bytes) -> ApiResult {
    body_json(&body)?;
    // No core guard here: the deletions take session locks (which come before any core guard),
    // and the seeding takes its own.
    let (deleted, created) = seed::reset(&app).await?;
    let mut map = Map::new();
    map.insert("deleted".into(), Value::from(deleted));
    map.insert("task_ids".into(), Value::from(created));
    Ok(done(map))
}

async fn sim_task(State(app): State<Arc<App>>, body: Bytes) -> ApiResult {
    let body = body_json(&body)?;
    let title = opt_str(&body, "title")?.unwrap_or("Untitled task");
    let core = app.core().await;
    let id = create_task(&app, &core, title).await?;
    Ok(one("task_id", id))
}

async fn sim_delete_task(
    State(app): State<Arc<App>>,
    Path(task_id): Path<String>,
    body: Bytes,
) -> ApiResult {
    body_json(&body)?;
    // No core guard: the deletion uses storage only, and the session locks it takes come
    // before any core guard in every other handler.
    delete_task(&app, &task_id).await?;
    Ok(done(Map::new()))
}

async fn sim_session(
    State(app): State<Arc<App>>,
    Path(task_id): Path<String>,
    body: Bytes,
) -> ApiResult {
    let body = body_json(&body)?;
    let primary = opt_bool(&body, "primary")?.unwrap_or(false);
    let profile = opt_str(&body, "profile")?.unwrap_or("");
    let state = opt_str(&body, "state")?.unwrap_or("RUNNING");
    let core = app.core().await;
    let id = create_session(&app, &core, &task_id, primary, profile, state).await?;
    Ok(one("session_id", id))
}

async fn sim_turn(
    State(app): State<Arc<App>>,
    Path(session_id): Path<String>,
    body: Bytes,
) -> ApiResult {
    let body = body_json(&body)?;
    let lifecycle_only = opt_bool(&body, "lifecycle_only")?.unwrap_or(false);
    let close_open = opt_bool(&body, "close_open")?.unwrap_or(false);
    let prompt = opt_str(&body, "prompt")?.unwrap_or("Continue.");
    let _session = app.lock_session(&session_id).await;
    let core = app.core().await;
    // (`start_turn` checks the session too; an ended session's turns are not closed first.)
    let completed = if close_open {
        require_live_session(&app, &session_id).await?;
        complete_open_turns(&app, &core, &session_id).await?
    } else {
        Vec::new()
    };
    let id = start_turn(&app, &core, &session_id, lifecycle_only, prompt).await?;
    let mut map = Map::new();
    map.insert("turn_id".into(), Value::from(id));
    map.insert("completed".into(), Value::from(completed));
    Ok(done(map))
}

async fn sim_complete(
    State(app): State<Arc<App>>,
    Path(turn_id): Path<String>,
    body: Bytes,
) -> ApiResult {
    body_json(&body)?;
    // Read before the session's lock (it names the lock): whether the turn is still open is
    // decided by the completing write.
    let turn = app.storage.turn(&turn_id).await?;
    let _session = app.lock_session(&turn.session_id).await;
    let core = app.core().await;
    complete_turn_row(&app, &core, &turn).await?;
    Ok(done(Map::new()))
}

async fn sim_message(
    State(app): State<Arc<App>>,
    Path(session_id): Path<String>,
    body: Bytes,
) -> ApiResult {
    let body = body_json(&body)?;
    let message_type = opt_str(&body, "type")?
        .filter(|t| !t.is_empty())
        .ok_or_else(|| ApiError::bad_request("type is required"))?;
    let author_type = opt_str(&body, "author_type")?.unwrap_or("agent");
    let text = opt_str(&body, "text")?.unwrap_or("");
    let _session = app.lock_session(&session_id).await;
    let core = app.core().await;
    let id = post_message(&app, &core, &session_id, message_type, author_type, text).await?;
    Ok(one("message_id", id))
}

async fn sim_clarification(
    State(app): State<Arc<App>>,
    Path(session_id): Path<String>,
    body: Bytes,
) -> ApiResult {
    let body = body_json(&body)?;
    let questions: Vec<String> = match body.get("questions") {
        Some(Value::Array(items)) if !items.is_empty() => items
            .iter()
            .map(|q| q.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(|| ApiError::bad_request("questions must be strings"))?,
        _ => {
            return Err(ApiError::bad_request(
                "questions must be a non-empty array of strings",
            ))
        }
    };
    let live = opt_bool(&body, "live")?.unwrap_or(true);
    let open = opt_bool(&body, "open_turn")?.unwrap_or(false);
    let prompt = opt_str(&body, "prompt")?.unwrap_or("Continue.");
    let _session = app.lock_session(&session_id).await;
    let core = app.core().await;
    let mut map = Map::new();
    if open {
        let (turn, started) = open_turn(&app, &core, &session_id, prompt).await?;
        map.insert("turn_id".into(), Value::from(turn));
        map.insert("turn_started".into(), Value::Bool(started));
    }
    let (pending_id, ids) = ask_clarification(&app, &core, &session_id, &questions, live).await?;
    map.insert("pending_id".into(), Value::from(pending_id));
    map.insert("message_ids".into(), Value::from(ids));
    Ok(done(map))
}

async fn sim_permission(
    State(app): State<Arc<App>>,
    Path(session_id): Path<String>,
    body: Bytes,
) -> ApiResult {
    let body = body_json(&body)?;
    let text = opt_str(&body, "text")?.unwrap_or("May I run a command?");
    let open = opt_bool(&body, "open_turn")?.unwrap_or(false);
    let prompt = opt_str(&body, "prompt")?.unwrap_or("Continue.");
    let _session = app.lock_session(&session_id).await;
    let core = app.core().await;
    let mut map = Map::new();
    if open {
        let (turn, started) = open_turn(&app, &core, &session_id, prompt).await?;
        map.insert("turn_id".into(), Value::from(turn));
        map.insert("turn_started".into(), Value::Bool(started));
    }
    let asked = ask_permission(&app, &core, &session_id, text).await?;
    map.insert("message_id".into(), Value::from(asked.message_id));
    map.insert("pending_id".into(), Value::from(asked.pending_id));
    map.insert("request_id".into(), Value::from(asked.request_id));
    Ok(done(map))
}

async fn sim_resolve_session(
    State(app): State<Arc<App>>,
    Path(session_id): Path<String>,
    body: Bytes,
) -> ApiResult {
    let body = body_json(&body)?;
    let status = opt_str(&body, "status")?.unwrap_or("");
    let _session = app.lock_session(&session_id).await;
    let core = app.core().await;
    let id = resolve_session_permission(&app, &core, &session_id, status).await?;
    Ok(one("message_id", id))
}

async fn sim_resolve(
    State(app): State<Arc<App>>,
    Path(message_id): Path<String>,
    body: Bytes,
) -> ApiResult {
    let body = body_json(&body)?;
    let status = opt_str(&body, "status")?.unwrap_or("");
    // Read before the session's lock (it names the lock): a row that changed since is not
    // written (409).
    let row = app.storage.message(&message_id).await?;
    let _session = app.lock_session(&row.session_id).await;
    let core = app.core().await;
    resolve_permission(&app, &core, &row, status).await?;
    Ok(done(Map::new()))
}

async fn sim_detach(
    State(app): State<Arc<App>>,
    Path(session_id): Path<String>,
    body: Bytes,
) -> ApiResult {
    let body = body_json(&body)?;
    let mode = match opt_str(&body, "resume")? {
        None => ResumeMode::Accepted,
        Some(text) => ResumeMode::parse(text).ok_or_else(|| {
            ApiError::bad_request("resume must be \"accepted\", \"not_accepted\" or \"ambiguous\"")
        })?,
    };
    let _session = app.lock_session(&session_id).await;
    let core = app.core().await;
    detach(&app, &core, &session_id, mode).await?;
    Ok(done(Map::new()))
}

async fn sim_state(
    State(app): State<Arc<App>>,
    Path(session_id): Path<String>,
    body: Bytes,
) -> ApiResult {
    let body = body_json(&body)?;
    let state = opt_str(&body, "state")?.unwrap_or("");
    known_state(state)?;
    let _session = app.lock_session(&session_id).await;
    let core = app.core().await;
    let task_id = app.storage.session(&session_id).await?.task_id;
    let changed = set_state(&app, &core, &session_id, state, "simulator").await?;
    repair(&core, &task_id).await;
    Ok(one("changed", changed))
}

async fn sim_restart(State(app): State<Arc<App>>, body: Bytes) -> ApiResult {
    body_json(&body)?;
    let (epoch, reconciled) = app.restart().await?;
    let reconciled: Vec<Value> = reconciled
        .iter()
        .map(|r| {
            json!({
                "pending_id": r.pending_id,
                "recovery": format!("{:?}", r.recovery),
                "reason": format!("{:?}", r.reason),
            })
        })
        .collect();
    let mut map = Map::new();
    map.insert("epoch".into(), Value::from(epoch));
    map.insert("reconciled".into(), Value::from(reconciled));
    Ok(done(map))
}

async fn sim_sweep(State(app): State<Arc<App>>, body: Bytes) -> ApiResult {
    body_json(&body)?;
    let report = app.sweep().await?;
    let stalled: Vec<Value> = report
        .stalled
        .iter()
        .map(|(task_id, reports)| {
            let sessions: Vec<Value> = reports
                .iter()
                .map(|r| json!({ "session_id": r.session_id, "silence_seconds": r.silence.as_secs() }))
                .collect();
            json!({ "task_id": task_id, "sessions": sessions })
        })
        .collect();
    let mut map = Map::new();
    map.insert(
        "registry_unverifiable".into(),
        Value::Bool(report.registry_unverifiable),
    );
    map.insert("stalled".into(), Value::from(stalled));
    map.insert("unreadable".into(), Value::from(report.unreadable));
    map.insert("cancelled".into(), Value::from(report.cancelled));
    Ok(done(map))
}

async fn sim_replay(State(app): State<Arc<App>>, body: Bytes) -> ApiResult {
    let body = body_json(&body)?;
    let Some(Value::Array(frames)) = body.get("frames") else {
        return Err(ApiError::bad_request("frames must be an array"));
    };
    let mut texts = Vec::with_capacity(frames.len());
    for frame in frames {
        texts.push(match frame {
            Value::String(text) => text.clone(),
            Value::Object(_) => frame.to_string(),
            _ => {
                return Err(ApiError::bad_request(
                    "each frame is a captured frame object or its text",
                ))
            }
        });
    }
    let count = texts.len();
    // After every event published before (with PostgreSQL they travel through the outbox).
    app.settle().await;
    for text in texts {
        app.hub.send(Frame::from(text));
    }
    Ok(one("sent", count))
}
