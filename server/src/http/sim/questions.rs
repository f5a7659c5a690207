//! The agent's questions and presence as the simulator writes them (see [`super`]): asking a
//! clarification bundle (live, with a waiter, or detached) or a permission, resolving a
//! permission (the simulator's, and the write the user's answer makes: [`write_permission`]),
//! the agent leaving a session (`detach`), and what the agent does after a successful response ([`continue_after_response`]: the bundle's turn or a successor turn goes
//! on). Built on [`sessions`](super::sessions) and [`turns`](super::turns).

use serde_json::{json, Map, Value};

use crate::http::agent::{Continuation, ResumeMode};
use crate::http::app::{App, Core};
use crate::http::error::{ApiError, ApiResult};
use crate::projection::{load_pending_snapshot, MessageEventKind};
use crate::storage::MessageRow;
use task_projection::rules::model::{
    MessageKind, MessageRecord, RequestStatus, SessionState, TurnRecord,
};
use task_projection::rules::respond::Response as ResponseKind;

use super::sessions::{new_id, repair, set_state_from};
use super::turns::{
    add_message, complete_turn, complete_turn_row, current_turn_id, current_turn_read,
    publish_message, require_live_turn, start_turn_with, Msg,
};

/// Asks a clarification bundle (one message per question, shared `pending_id`) in the current
/// turn. Live: a waiter is registered before the rows exist. Detached: no waiter, the rows
/// carry `agent_disconnected`, the agent's execution ends. The session waits for input.
pub async fn ask_clarification(
    app: &App,
    core: &Core,
    session_id: &str,
    questions: &[String],
    live: bool,
) -> ApiResult<(String, Vec<String>)> {
    let (session, turn) = require_live_turn(app, session_id).await?;
    let task_id = session.task_id.clone();
    let pending_id = new_id("pending");
    if live {
        app.agent.add_waiter(&pending_id, session_id);
    } else {
        app.agent.detach(session_id);
    }
    let total = questions.len();
    let mut ids = Vec::with_capacity(total);
    for (index, question) in questions.iter().enumerate() {
        let mut metadata = Map::new();
        metadata.insert("pending_id".into(), Value::from(pending_id.as_str()));
        metadata.insert(
            "question_id".into(),
            Value::from(format!("q{}", index.saturating_add(1))),
        );
        metadata.insert("question_index".into(), Value::from(index));
        metadata.insert("question_total".into(), Value::from(total));
        metadata.insert("status".into(), Value::from("pending"));
        if !live {
            metadata.insert("agent_disconnected".into(), Value::Bool(true));
        }
        let metadata = Value::Object(metadata);
        let row = add_message(
            app,
            core,
            Msg {
                session_id,
                task_id: &task_id,
                turn_id: &turn,
                author_type: "agent",
                message_type: "clarification_request",
                content: question,
                metadata,
            },
        )
        .await?;
        ids.push(row.id().to_owned());
    }
    set_state_from(
        app,
        core,
        Some(session),
        session_id,
        "WAITING_FOR_INPUT",
        "clarification asked",
    )
    .await?;
    repair(core, &task_id).await;
    Ok((pending_id, ids))
}

/// The options every simulated permission offers (`option_id`, `name`, `kind`, as the
/// reference client's backend relays an agent's).
fn permission_options() -> Value {
    json!([
        { "option_id": "allow_once", "name": "Allow once", "kind": "allow_once" },
        { "option_id": "allow_always", "name": "Always allow", "kind": "allow_always" },
        { "option_id": "reject_once", "name": "Reject", "kind": "reject_once" },
    ])
}

/// A permission the simulator asked: its message id and the identity the user answers it with
/// (`metadata.pending_id`, `metadata.request_id`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AskedPermission {
    pub message_id: String,
    pub pending_id: String,
    pub request_id: String,
}

/// Asks a permission in the current turn (metadata `status: "pending"`, a fresh `pending_id` and
/// `request_id`, the [`permission_options`]); the session waits for input.
pub async fn ask_permission(
    app: &App,
    core: &Core,
    session_id: &str,
    text: &str,
) -> ApiResult<AskedPermission> {
    let (session, turn) = require_live_turn(app, session_id).await?;
    let task_id = session.task_id.clone();
    let pending_id = new_id("perm");
    let request_id = new_id("req");
    let row = add_message(
        app,
        core,
        Msg {
            session_id,
            task_id: &task_id,
            turn_id: &turn,
            author_type: "agent",
            message_type: "permission_request",
            content: text,
            metadata: json!({
                "status": "pending",
                "pending_id": pending_id,
                "request_id": request_id,
                "options": permission_options(),
            }),
        },
    )
    .await?;
    set_state_from(
        app,
        core,
        Some(session),
        session_id,
        "WAITING_FOR_INPUT",
        "permission asked",
    )
    .await?;
    repair(core, &task_id).await;
    Ok(AskedPermission {
        message_id: row.id().to_owned(),
        pending_id,
        request_id,
    })
}

/// 400 unless `status` resolves a permission (`approved` or `rejected`).
fn permission_status(status: &str) -> ApiResult<()> {
    if status != "approved" && status != "rejected" {
        return Err(ApiError::bad_request(
            "status must be \"approved\" or \"rejected\"",
        ));
    }
    Ok(())
}

/// Resolves a pending permission, a message row as the caller read it (a row that changed since
/// is not written: 409 `already_resolved`); a session left with nothing pending runs again.
pub async fn resolve_permission(
    app: &App,
    core: &Core,
    row: &MessageRow,
    status: &str,
) -> ApiResult<()> {
    permission_status(status)?;
    let message_id = row.id();
    if row.kind() != MessageKind::PermissionRequest {
        return Err(ApiError::bad_request(format!(
            "message {message_id:?} is not a permission_request"
        )));
    }
    if row.status() != RequestStatus::Pending {
        return Err(ApiError::conflict(
            "already_resolved",
            format!("permission {message_id:?} is already resolved"),
        ));
    }
    if write_permission(app, core, row, status, true)
        .await?
        .is_none()
    {
        return Err(ApiError::conflict(
            "already_resolved",
            format!("permission {message_id:?} changed meanwhile"),
        ));
    }
    Ok(())
}

/// Writes a permission row's `metadata.status` (`approved`, `rejected`, `expired`), a row as the
/// caller read it (compare-and-set on its version: `None`, nothing written, when it changed
/// since), publishes `session.message.updated` with the session's projection and repairs the
/// task's summary. With `run_again`, a session left waiting with nothing pending runs again.
pub async fn write_permission(
    app: &App,
    core: &Core,
    row: &MessageRow,
    status: &str,
    run_again: bool,
) -> ApiResult<Option<MessageRow>> {
    let mut metadata = match &row.metadata {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    metadata.insert("status".into(), Value::from(status));
    let now = app.now();
    let Some(updated) = app
        .storage
        .cas_message_metadata(row, &Value::Object(metadata), &now)
        .await?
    else {
        return Ok(None);
    };
    publish_message(app, core, MessageEventKind::Updated, &updated).await;
    // What the session shows now (no revision: this read labels nothing).
    let snapshot = load_pending_snapshot(&app.storage, &row.session_id).await?;
    let nothing_pending = snapshot.pending_action().0.is_none();
    if run_again && nothing_pending && snapshot.session.state() == SessionState::WaitingForInput {
        set_state_from(
            app,
            core,
            Some(snapshot.session),
            &row.session_id,
            "RUNNING",
            "permission resolved",
        )
        .await?;
    }
    repair(core, &row.task_id).await;
    Ok(Some(updated))
}

/// Resolves the session's newest pending permission (`approved` or `rejected`, as
/// [`resolve_permission`]); 409 `nothing_pending` when it has none. Returns its message id.
pub async fn resolve_session_permission(
    app: &App,
    core: &Core,
    session_id: &str,
    status: &str,
) -> ApiResult<String> {
    permission_status(status)?;
    let pending = app
        .storage
        .messages_of_session(session_id)
        .await?
        .into_iter()
        .rev()
        .find(|m| {
            m.kind() == MessageKind::PermissionRequest && m.status() == RequestStatus::Pending
        });
    let Some(row) = pending else {
        app.storage.session(session_id).await?;
        return Err(ApiError::conflict(
            "nothing_pending",
            format!("session {session_id:?} has no pending permission"),
        ));
    };
    resolve_permission(app, core, &row, status).await?;
    Ok(row.id().to_owned())
}

/// The agent leaves the session: its waiters and execution are dropped, and its pending
/// clarification rows record `agent_disconnected` (published as updates).
pub async fn detach(app: &App, core: &Core, session_id: &str, mode: ResumeMode) -> ApiResult<()> {
    let session = app.storage.session(session_id).await?;
    app.agent.detach(session_id);
    app.agent.set_resume_mode(session_id, mode);
    let now = app.now();
    for row in app.storage.messages_of_session(session_id).await? {
        let marked = row
            .metadata
            .get("agent_disconnected")
            .is_some_and(|v| v == &Value::Bool(true));
        if row.kind() != MessageKind::ClarificationRequest
            || row.status() != RequestStatus::Pending
            || marked
        {
            continue;
        }
        let mut metadata = match &row.metadata {
            Value::Object(map) => map.clone(),
            _ => Map::new(),
        };
        metadata.insert("agent_disconnected".into(), Value::Bool(true));
        if let Some(updated) = app
            .storage
            .cas_message_metadata(&row, &Value::Object(metadata), &now)
            .await?
        {
            publish_message(app, core, MessageEventKind::Updated, &updated).await;
        }
    }
    repair(core, &session.task_id).await;
    Ok(())
}

/// The respond body `{"answers": [{question_id, answer}, ...]}` as the user's text: the answer,
/// or one numbered line per answer. Anything else: its JSON.
fn answer_text(payload: &Value) -> String {
    let answers: Vec<&str> = payload
        .get("answers")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|a| a.get("answer")?.as_str())
                .collect()
        })
        .unwrap_or_default();
    match answers.as_slice() {
        [] => payload.to_string(),
        [one] => (*one).to_owned(),
        many => many
            .iter()
            .enumerate()
            .map(|(i, a)| format!("{}. {a}", i.saturating_add(1)))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// What the agent does after a successful response: a live waiter continues the bundle's turn;
/// a resumed session runs a successor turn. Either way: an agent message, the turn completes.
pub async fn continue_after_response(
    app: &App,
    core: &Core,
    continuation: Continuation,
) -> ApiResult<()> {
    let session_id = continuation.session_id.as_str();
    let skipped = continuation.kind == ResponseKind::Reject;
    let turn = if continuation.resumed {
        // The detached turn ended when its agent went away: close it before the successor, so
        // the successor (then its completion) is what the session's current turn follows.
        if let Some(interrupted) = current_turn_id(app, session_id).await? {
            let interrupted = app.storage.turn(&interrupted).await?;
            if interrupted.is_open() {
                complete_turn_row(app, core, &interrupted).await?;
            }
        }
        // The user's answer opens the successor turn, as text (the payload is the respond
        // body); `response_to` names the bundle it answers.
        let prompt = answer_text(&continuation.payload);
        let metadata = json!({ "response_to": continuation.pending_id });
        start_turn_with(app, core, session_id, false, &prompt, metadata).await?
    } else {
        match current_turn_read(app, session_id).await? {
            (session, Some(turn)) => {
                set_state_from(
                    app,
                    core,
                    Some(session),
                    session_id,
                    "RUNNING",
                    "clarification answered",
                )
                .await?;
                turn
            }
            (_, None) => return Ok(()),
        }
    };
    let text = if skipped {
        "Questions skipped; continuing with my best guess."
    } else {
        "Thanks, continuing with your answers."
    };
    let task_id = app.storage.session(session_id).await?.task_id;
    add_message(
        app,
        core,
        Msg {
            session_id,
            task_id: &task_id,
            turn_id: &turn,
            author_type: "agent",
            message_type: "message",
            content: text,
            metadata: json!({}),
        },
    )
    .await?;
    complete_turn(app, core, &turn).await
}
