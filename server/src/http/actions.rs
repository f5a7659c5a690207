//! The user's actions (docs/server-api.md "REST"), shaped as the reference client's backend
//! answers them: responding to a clarification ([`respond`]: SPEC §8 outcomes with the
//! `success` / `claimed` / `status` / `response` envelope), answering a permission
//! ([`respond_permission`]) and deleting a session ([`delete_session`]). Every reply that is not
//! a 5xx carries the server's position after handling ([`position`]): the session's
//! authoritative projection, read after the writes with its revision reserved before the read
//! (SPEC §5), and the task's status summary.
//!
//! It decides nothing: the rules decide ([`respond_standing`], [`bundle_winner`],
//! [`permission_verdict`], [`permission_outcome`]); this module gathers what they read, performs
//! the writes through the services and the simulator's permission write
//! ([`write_permission`]), and translates the answers into HTTP.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde_json::{json, Map, Value};

use crate::events::{SESSION_DELETED, TASK_SESSION_ERROR_CHANGED, TASK_UPDATED};
use crate::projection::{action_json, load_bundle_snapshot, load_snapshot, revision_json};
use crate::respond::{reply_json, reply_text, ResponseInput};
use crate::storage::MessageRow;
use crate::summary::RepairOutcome;
use crate::ServerError;
use task_projection::rules::model::{MessageRecord, SessionState};
use task_projection::rules::respond::{
    bundle_winner, permission_outcome, permission_verdict, respond_standing, PermissionVerdict,
    RespondReply, RespondStanding, Response as ResponseKind, WinnerStatus,
};

use super::app::{App, Core};
use super::error::{ok, ApiError, ApiResult};
use super::sim::questions::{continue_after_response, write_permission};
use super::wire::{body_json, opt_bool, opt_str, task_wire};

/// The server's position after handling a request of one session: `session` (`id`, `task_id`,
/// `pending_action`, `pending_action_revision`: the projection the WebSocket events carry, its
/// revision reserved before the read) and `status_summary` (the task's summary after a repair;
/// omitted when the task has none, `status_summary_invalidated: true` instead when the repair
/// could not be persisted). `session` is omitted when the projection fails (as an event omits
/// it: keep what you hold), and when `session_id` is `None` (the session is gone).
pub async fn position(core: &Core, session_id: Option<&str>, task_id: &str) -> Map<String, Value> {
    let mut map = Map::new();
    if let Some(session_id) = session_id {
        match core.projector.project_sessions(&[session_id]).await {
            Ok(projections) => {
                if let Some(p) = projections.first() {
                    let session = json!({
                        "id": p.session.id,
                        "task_id": p.session.task_id,
                        "pending_action": action_json(p.pending_action),
                        "pending_action_revision": revision_json(&p.revision),
                    });
                    map.insert("session".into(), session);
                }
            }
            Err(error) => {
                tracing::warn!(session_id, %error, "projection failed; the reply omits it");
            }
        }
    }
    match core.summaries.repair(task_id).await {
        Ok(RepairOutcome::Unchanged(summary) | RepairOutcome::Repaired(summary)) => {
            map.insert("status_summary".into(), summary);
        }
        Ok(RepairOutcome::Invalidated { .. }) => {
            map.insert("status_summary_invalidated".into(), Value::Bool(true));
        }
        Ok(RepairOutcome::NoSummary) => {}
        Err(error) => tracing::warn!(task_id, %error, "summary repair failed; the reply omits it"),
    }
    map
}

/// `{"error": {"code", "message"}}` as a map (for replies that carry more than the error).
fn error_object(code: &str, message: &str) -> Value {
    json!({ "code": code, "message": message })
}

// ---- clarification respond --------------------------------------------------------------------

/// The respond body: `{"answers": [{"question_id", "answer"}, ...]}` or `{"reject": true}`.
fn response_input(body: Value) -> ApiResult<ResponseInput> {
    let reject = body.get("reject");
    let answers = body.get("answers");
    match (reject, answers) {
        (Some(Value::Bool(true)), None) => Ok(ResponseInput {
            kind: ResponseKind::Reject,
            payload: body,
        }),
        (None, Some(Value::Array(items))) if !items.is_empty() => {
            let well_formed = items.iter().all(|item| {
                item.get("question_id").is_some_and(Value::is_string)
                    && item.get("answer").is_some_and(Value::is_string)
            });
            if !well_formed {
                return Err(ApiError::bad_request(
                    "each answer needs a string question_id and a string answer",
                ));
            }
            Ok(ResponseInput {
                kind: ResponseKind::Answer,
                payload: body,
            })
        }
        _ => Err(ApiError::bad_request(
            "expected {\"answers\": [{\"question_id\", \"answer\"}, ...]} or {\"reject\": true}",
        )),
    }
}

/// A question's id: its `metadata.question_id`, else its message id.
fn question_id(row: &MessageRow) -> &str {
    row.metadata
        .get("question_id")
        .and_then(Value::as_str)
        .unwrap_or_else(|| row.id())
}

/// The winning response as the reference client's backend serializes it: `{pending_id, answers:
/// [{question_id, selected_options, custom_text}], rejected, reject_reason, responded_at}`, from
/// the bundle's rows in order (each row's stored `metadata.response`: its question's `answer`
/// is `custom_text`; options are not offered here, so `selected_options` is `[]`).
/// `responded_at` is the `updated_at` of the first row carrying the winner's status.
fn winner_response(pending_id: &str, rows: &[&MessageRow], status: WinnerStatus) -> Value {
    let answers: Vec<Value> = rows
        .iter()
        .filter_map(|row| {
            let id = question_id(row);
            let answer = row
                .metadata
                .get("response")?
                .get("answers")?
                .as_array()?
                .iter()
                .find(|a| a.get("question_id").and_then(Value::as_str) == Some(id))?
                .get("answer")?
                .as_str()?;
            Some(json!({ "question_id": id, "selected_options": [], "custom_text": answer }))
        })
        .collect();
    let responded_at = rows
        .iter()
        .find(|row| row.metadata.get("status").and_then(Value::as_str) == Some(status.as_str()))
        .map(|row| row.updated_at_text.as_str());
    json!({
        "pending_id": pending_id,
        "answers": answers,
        "rejected": status == WinnerStatus::Rejected,
        "reject_reason": "",
        "responded_at": responded_at,
    })
}

/// `POST /api/v1/clarification/:pending_id/respond` (SPEC §8). The standing
/// ([`respond_standing`] over the bundle's rows read after handling) gives the reply: this call
/// won → 200 `claimed: true`; another response had won → 200 `claimed: false` with the winner's
/// `status` and `response`; no longer active (no winner) → 409 `error`; failed after the claim →
/// 503 retryable / 500 non-retryable. After a success the simulated agent continues its turn.
pub async fn respond(
    State(app): State<Arc<App>>,
    Path(pending_id): Path<String>,
    body: Bytes,
) -> ApiResult {
    let input = response_input(body_json(&body)?)?;
    // The bundle's session, when it has exactly one (otherwise respond answers the error).
    let session = match app
        .storage
        .sessions_with_bundle(&pending_id)
        .await?
        .as_slice()
    {
        [one] => Some(one.clone()),
        _ => None,
    };
    let _session = match &session {
        Some(session) => Some(app.lock_session(session).await),
        None => None,
    };
    let core = app.core().await;
    let outcome = core.respond.respond(&pending_id, &input).await;
    let continuation = app.agent.take_continuation(&pending_id);
    let outcome = outcome?;
    if outcome.reply == RespondReply::Success {
        if let Some(continuation) = continuation {
            continue_after_response(&app, &core, continuation).await?;
        }
    }
    let Some(session_id) = session else {
        // Respond found the bundle in one session, so this lookup did too.
        return Err(
            ServerError::Invalid(format!("bundle {pending_id:?} has no one session")).into(),
        );
    };
    // The bundle as this call left it: who won, and with what.
    let snapshot = load_bundle_snapshot(&app.storage, &session_id, &pending_id).await?;
    let observation = snapshot.observe(&pending_id);
    let rows: Vec<&MessageRow> = observation
        .rows
        .iter()
        .filter_map(|&i| snapshot.rows.get(i))
        .collect();
    let winner = bundle_winner(&snapshot.rows, &observation.rows);
    let standing = respond_standing(outcome.reply, input.kind, winner);
    let mut body = match reply_json(&outcome) {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    body.insert("outcome".into(), Value::from(reply_text(outcome.reply)));
    let status = match standing {
        RespondStanding::Claimed(won) | RespondStanding::Lost(won) => {
            let claimed = matches!(standing, RespondStanding::Claimed(_));
            body.insert("success".into(), Value::Bool(true));
            body.insert("claimed".into(), Value::Bool(claimed));
            body.insert("status".into(), Value::from(won.as_str()));
            body.insert("response".into(), winner_response(&pending_id, &rows, won));
            StatusCode::OK
        }
        RespondStanding::NoLongerActive => {
            body.insert("success".into(), Value::Bool(false));
            let message = "clarification request is no longer active";
            body.insert(
                "error".into(),
                error_object("clarification_not_active", message),
            );
            StatusCode::CONFLICT
        }
        RespondStanding::Failed => {
            body.insert("success".into(), Value::Bool(false));
            body.insert("claimed".into(), Value::Bool(true));
            let (status, message) = if outcome.reply == RespondReply::RetryableError {
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the response could not be handed off; the bundle is answerable again",
                )
            } else {
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the response could not be handed off; the bundle stays answered",
                )
            };
            let code = reply_text(outcome.reply);
            body.insert("error".into(), error_object(code, message));
            return Ok((status, Json(Value::Object(body))).into_response());
        }
    };
    body.extend(position(&core, Some(&session_id), &snapshot.session.task_id).await);
    Ok((status, Json(Value::Object(body))).into_response())
}

// ---- permission respond -----------------------------------------------------------------------

/// A body's required non-empty string field (else 400).
fn required<'a>(body: &'a Value, key: &str) -> ApiResult<&'a str> {
    match opt_str(body, key)? {
        Some(text) if !text.is_empty() => Ok(text),
        _ => Err(ApiError::bad_request(format!("{key} is required"))),
    }
}

/// A permission error: `{"error": {"code", "message"}}`; the message names the code, as the
/// reference client matches it.
fn permission_error(status: StatusCode, code: &'static str, what: &str) -> ApiError {
    ApiError::new(status, code, format!("{code}: {what}"))
}

/// `metadata.request_id` of a row (the rules' accessor).
fn request_id_of(row: &MessageRow) -> Option<&str> {
    row.metadata.get("request_id").and_then(Value::as_str)
}

/// The kind of the option `option_id` among those the request offers (`metadata.options`).
fn offered_kind<'a>(row: &'a MessageRow, option_id: &str) -> Option<&'a str> {
    row.metadata
        .get("options")?
        .as_array()?
        .iter()
        .find(|o| o.get("option_id").and_then(Value::as_str) == Some(option_id))?
        .get("kind")?
        .as_str()
}

/// `POST /api/v1/permissions/respond`: body `{task_id, session_id, request_id, pending_id,
/// option_id?, cancelled?, rejected?}` (the reference client's `permission.respond`; `option_id`
/// is required unless `cancelled`; `rejected` is accepted and ignored: the option's kind
/// decides). [`permission_verdict`] decides whether the request may be answered:
/// 404 `task_or_session_not_found`, 404 `permission_not_found` (a pending row without a
/// `request_id` is recorded `expired` first), 409 `permission_stale`, 409
/// `permission_already_resolved`, 400 `permission_option_not_offered`; otherwise the row is
/// `approved` or `rejected` ([`permission_outcome`]; a cancellation rejects), published as
/// `session.message.updated` with the session's projection, the session runs again when nothing
/// else is pending, the summary is repaired, and the answer is 200 `{success: true, session_id,
/// pending_id, request_id, message_id, status}` with the position keys.
pub async fn respond_permission(State(app): State<Arc<App>>, body: Bytes) -> ApiResult {
    let body = body_json(&body)?;
    let task_id = required(&body, "task_id")?;
    let session_id = required(&body, "session_id")?;
    let request_id = required(&body, "request_id")?;
    let pending_id = required(&body, "pending_id")?;
    let cancelled = opt_bool(&body, "cancelled")?.unwrap_or(false);
    opt_bool(&body, "rejected")?;
    let option_id = opt_str(&body, "option_id")?.unwrap_or("");
    if !cancelled && option_id.is_empty() {
        return Err(ApiError::bad_request(
            "option_id is required when not cancelled",
        ));
    }
    let not_found = || {
        permission_error(
            StatusCode::NOT_FOUND,
            "task_or_session_not_found",
            "no such session of that task",
        )
    };
    let _session = app.lock_session(session_id).await;
    let core = app.core().await;
    let snapshot = match load_snapshot(&app.storage, session_id).await {
        Ok(snapshot) if snapshot.session.task_id == task_id => snapshot,
        Ok(_) | Err(ServerError::NotFound { .. }) => return Err(not_found()),
        Err(error) => return Err(error.into()),
    };
    let (verdict, reason) = permission_verdict(
        Some(snapshot.session.state()),
        &snapshot.turns,
        &snapshot.messages,
        pending_id,
        request_id,
        request_id_of,
    );
    tracing::debug!(
        session_id,
        pending_id,
        ?verdict,
        ?reason,
        "permission respond"
    );
    let row = match verdict {
        PermissionVerdict::Answerable(index) => snapshot.messages.get(index),
        PermissionVerdict::Expired(index) => {
            if let Some(row) = snapshot.messages.get(index) {
                write_permission(&app, &core, row, "expired", false).await?;
            }
            return Err(permission_error(
                StatusCode::NOT_FOUND,
                "permission_not_found",
                "the request has no live request identity (expired)",
            ));
        }
        PermissionVerdict::NotFound => None,
        PermissionVerdict::Stale => {
            return Err(permission_error(
                StatusCode::CONFLICT,
                "permission_stale",
                "the request is not the session's live permission",
            ))
        }
        PermissionVerdict::AlreadyResolved => return Err(already_resolved()),
    };
    let Some(row) = row else {
        return Err(permission_error(
            StatusCode::NOT_FOUND,
            "permission_not_found",
            "no such permission request",
        ));
    };
    let Some(outcome) = permission_outcome(cancelled, offered_kind(row, option_id)) else {
        return Err(permission_error(
            StatusCode::BAD_REQUEST,
            "permission_option_not_offered",
            "the request does not offer that option",
        ));
    };
    if write_permission(&app, &core, row, outcome.as_str(), true)
        .await?
        .is_none()
    {
        return Err(already_resolved());
    }
    let mut reply = Map::new();
    reply.insert("success".into(), Value::Bool(true));
    reply.insert("session_id".into(), Value::from(session_id));
    reply.insert("pending_id".into(), Value::from(pending_id));
    reply.insert("request_id".into(), Value::from(request_id));
    reply.insert("message_id".into(), Value::from(row.id()));
    reply.insert("status".into(), Value::from(outcome.as_str()));
    reply.extend(position(&core, Some(session_id), task_id).await);
    Ok(ok(Value::Object(reply)))
}

fn already_resolved() -> ApiError {
    permission_error(
        StatusCode::CONFLICT,
        "permission_already_resolved",
        "the request was answered already",
    )
}

// ---- session delete ---------------------------------------------------------------------------

/// `DELETE /api/v1/task-sessions/:session_id` (the reference client's `session.delete`): a
/// session that is not running is deleted with its turns, messages and intents (404 `not_found`
/// when there is none; 409 `session_running` for a `RUNNING` or `STARTING` one: stop it first).
/// The agent forgets it; `session.deleted` `{session_id, task_id, workspace_id}` and
/// `task_session.error_changed` `{task_id, session_id, active: false}` are published, the task's
/// summary is repaired (its action no longer counts the session) and `task.updated` carries the
/// task. Answer: 200 `{success: true, session_id, task_id}` with `status_summary`.
pub async fn delete_session(
    State(app): State<Arc<App>>,
    Path(session_id): Path<String>,
    body: Bytes,
) -> ApiResult {
    body_json(&body)?;
    let _session = app.lock_session(&session_id).await;
    let core = app.core().await;
    let session = app.storage.session(&session_id).await?;
    if matches!(
        session.state(),
        SessionState::Running | SessionState::Starting
    ) {
        return Err(ApiError::conflict(
            "session_running",
            format!(
                "cannot delete session in {} state: stop it first",
                session.state_text
            ),
        ));
    }
    let task = app.storage.task(&session.task_id).await?;
    app.agent.forget(&session_id);
    if !app.storage.delete_session(&session_id).await? {
        return Err(ApiError::not_found(format!("no session {session_id:?}")));
    }
    app.publish(
        SESSION_DELETED,
        json!({ "session_id": session_id, "task_id": task.id, "workspace_id": task.workspace_id }),
    );
    app.publish(
        TASK_SESSION_ERROR_CHANGED,
        json!({ "task_id": task.id, "session_id": session_id, "active": false }),
    );
    let mut reply = position(&core, None, &task.id).await;
    if !task.archived {
        match task_wire(&app.storage, &core.summaries, &core.projector, &task).await {
            Ok(wire) => app.publish(TASK_UPDATED, wire),
            Err(error) => tracing::warn!(task_id = %task.id, %error, "task.updated not published"),
        }
    }
    reply.insert("success".into(), Value::Bool(true));
    reply.insert("session_id".into(), Value::from(session_id));
    reply.insert("task_id".into(), Value::from(task.id));
    Ok(ok(Value::Object(reply)))
}
