//! The simulator's writes (see [`super`]): tasks, sessions, turns, messages, questions,
//! permissions, detach, and the agent's continuation after a response. Each writes through the
//! storage and publishes the events a real agent would cause. Shared by the simulator API
//! ([`super::routes`]), the respond route and the demo seeding.

use serde_json::{json, Map, Value};

use crate::events::{
    SESSION_CREATED, SESSION_STATE_CHANGED, TASK_DELETED, TASK_UPDATED, TURN_COMPLETED,
    TURN_STARTED,
};
use crate::http::app::{insert_projection, App, Core};
use crate::http::error::{ApiError, ApiResult};
use crate::http::wire::task_wire;
use crate::projection::{load_pending_snapshot, MessageEventKind, PendingSnapshot};
use crate::storage::{
    ChangedSession, MessageRow, NewMessage, NewSession, NewTask, NewTurn, SessionRow, StateChange,
    TurnRow,
};
use crate::ServerError;
use task_projection::rules::model::{
    MessageKind, MessageRecord, RequestStatus, SessionState, TurnRecord,
};
use task_projection::rules::respond::Response as ResponseKind;
use task_projection::rules::turn::{current_turn, CurrentTurn};

use super::agent::{Continuation, ResumeMode};

/// The workspace of simulated tasks.
pub const WORKSPACE: &str = "ws-demo";

fn new_id(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}

pub(super) fn known_state(text: &str) -> Result<SessionState, ApiError> {
    match SessionState::parse(text) {
        SessionState::Other => Err(ApiError::bad_request(format!(
            "unknown session state {text:?}"
        ))),
        state => Ok(state),
    }
}

/// Refreshes the task's status summary against its authoritative action (publishes
/// `task.status_summary.updated` when it moved).
pub(super) async fn repair(core: &Core, task_id: &str) {
    if let Err(error) = core.summaries.repair(task_id).await {
        tracing::warn!(task_id, %error, "summary repair failed");
    }
}

async fn publish_message(app: &App, core: &Core, kind: MessageEventKind, row: &MessageRow) {
    core.projector
        .publish_message_event(app.events.as_ref(), kind, &row.session_id, row.to_wire())
        .await;
}

/// Publishes `session.state_changed` with the session's projection keys.
async fn publish_state(
    app: &App,
    core: &Core,
    session_id: &str,
    previous: &str,
    reason: &str,
) -> Result<(), ServerError> {
    let row = app.storage.session(session_id).await?;
    let task = app.storage.task(&row.task_id).await?;
    let changed = ChangedSession {
        session: row,
        workspace_id: task.workspace_id,
    };
    publish_changed(app, core, &changed, previous, reason).await;
    Ok(())
}

/// Publishes `session.state_changed` for a row a state change wrote (with its projection keys).
async fn publish_changed(
    app: &App,
    core: &Core,
    changed: &ChangedSession,
    previous: &str,
    reason: &str,
) {
    let row = &changed.session;
    let mut payload = Map::new();
    payload.insert("session_id".into(), Value::from(row.id.as_str()));
    payload.insert("task_id".into(), Value::from(row.task_id.as_str()));
    payload.insert(
        "workspace_id".into(),
        Value::from(changed.workspace_id.as_str()),
    );
    payload.insert("state".into(), Value::from(row.state_text.as_str()));
    payload.insert("previous_state".into(), Value::from(previous));
    payload.insert("reason".into(), Value::from(reason));
    payload.insert("updated_at".into(), Value::from(row.updated_at.as_str()));
    insert_projection(core, &row.id, &mut payload).await;
    app.publish(SESSION_STATE_CHANGED, Value::Object(payload));
}

/// Sets a session's state (compare-and-set on its version, retried) and publishes the change.
/// `Ok(false)`: it already had that state. A terminal state ends the agent's execution.
pub async fn set_state(
    app: &App,
    core: &Core,
    session_id: &str,
    state: &str,
    reason: &str,
) -> Result<bool, ServerError> {
    set_state_from(app, core, None, session_id, state, reason).await
}

/// [`set_state`] whose first compare-and-set uses `read`, the session row as the caller read it
/// (a lost compare-and-set reads it again; a row that already has the state is read again
/// before the answer is `false`).
async fn set_state_from(
    app: &App,
    core: &Core,
    mut read: Option<SessionRow>,
    session_id: &str,
    state: &str,
    reason: &str,
) -> Result<bool, ServerError> {
    for _ in 0..8 {
        let row = match read.take().filter(|row| row.state_text != state) {
            Some(row) => row,
            None => app.storage.session(session_id).await?,
        };
        if row.state_text == state {
            return Ok(false);
        }
        let now = app.now();
        let terminal = SessionState::parse(state).is_terminal();
        let change = StateChange {
            state,
            updated_at: &now,
            completed_at: terminal.then_some(now.as_str()),
            reason: Some(reason),
        };
        if let Some(changed) = app
            .storage
            .cas_session_state_returning(session_id, row.version, &change)
            .await?
        {
            if terminal {
                app.agent.detach(session_id);
            }
            publish_changed(app, core, &changed, &row.state_text, reason).await;
            return Ok(true);
        }
    }
    Err(ServerError::Invalid(format!(
        "session {session_id:?} kept changing; state not set"
    )))
}

/// The session's current turn by the turn rule (SPEC §2; the state is not consulted: the agent
/// writes into its turn whatever the session state).
pub async fn current_turn_id(app: &App, session_id: &str) -> Result<Option<String>, ServerError> {
    Ok(current_turn_read(app, session_id).await?.1)
}

/// [`current_turn_id`] with the session row it was read with.
async fn current_turn_read(
    app: &App,
    session_id: &str,
) -> Result<(SessionRow, Option<String>), ServerError> {
    // The turns and which of them messages reference: no message rows (the transcript grows).
    let snapshot = load_pending_snapshot(&app.storage, session_id).await?;
    let turn = current_turn_of(&snapshot);
    Ok((snapshot.session, turn))
}

/// The current turn of a snapshot's turns, whatever the session's state.
fn current_turn_of(snapshot: &PendingSnapshot) -> Option<String> {
    let referenced = |turn: &str| snapshot.is_referenced(turn);
    let (current, _) = current_turn(Some(&snapshot.turns[..]), None, referenced);
    match current {
        CurrentTurn::Turn(i) => snapshot.turns.get(i).map(|t| t.id.clone()),
        CurrentTurn::None | CurrentTurn::Unknown => None,
    }
}

/// Creates a task (with a status summary at revision 1) and publishes `task.updated`.
pub async fn create_task(app: &App, core: &Core, title: &str) -> Result<String, ServerError> {
    let id = new_id("task");
    let now = app.now();
    app.storage
        .insert_task(&NewTask {
            id: &id,
            workspace_id: WORKSPACE,
            created_at: &now,
        })
        .await?;
    app.storage.set_task_title(&id, title).await?;
    let summary = json!({
        "revision": 1,
        "updated_at": now,
        "primary_session": null,
        "foreground_activity": null,
        "queued_prompt_count": 0,
        "active_error": null,
    });
    app.storage.insert_summary(&id, 1, &summary, &now).await?;
    let task = app.storage.task(&id).await?;
    let wire = task_wire(&app.storage, &core.summaries, &core.projector, &task).await?;
    app.publish(TASK_UPDATED, wire);
    Ok(id)
}

/// Deletes a task: archives it (the task list no longer returns it, the stall sweep skips it)
/// and publishes `task.deleted` with `{task_id}`. An unknown or already deleted task is a 404.
/// The task's sessions are locked meanwhile, so their in-flight writes publish before
/// `task.deleted` (a client does not re-learn the task from a late event).
pub async fn delete_task(app: &App, task_id: &str) -> ApiResult<()> {
    let task = app.storage.task(task_id).await?;
    if task.archived {
        return Err(ApiError::not_found(format!(
            "task {task_id:?} is already deleted"
        )));
    }
    let mut sessions: Vec<String> = app
        .storage
        .sessions_of_task(task_id)
        .await?
        .into_iter()
        .map(|s| s.id)
        .collect();
    // One order for every multi-session locker (other requests hold at most one lock).
    sessions.sort();
    let mut guards = Vec::with_capacity(sessions.len());
    for session in &sessions {
        guards.push(app.lock_session(session).await);
    }
    app.storage.set_task_archived(task_id, true).await?;
    app.publish(TASK_DELETED, json!({ "task_id": task_id }));
    drop(guards);
    Ok(())
}

/// Creates a session and publishes `session.created` (with its projection).
pub async fn create_session(
    app: &App,
    core: &Core,
    task_id: &str,
    primary: bool,
    profile: &str,
    state: &str,
) -> ApiResult<String> {
    let parsed = known_state(state)?;
    app.storage.task(task_id).await?;
    if primary {
        for other in app.storage.sessions_of_task(task_id).await? {
            if other.is_primary {
                app.storage.set_session_primary(&other.id, false).await?;
            }
        }
    }
    let id = new_id("session");
    let now = app.now();
    app.storage
        .insert_session(&NewSession {
            id: &id,
            task_id,
            state,
            agent_profile_id: profile,
            is_primary: primary,
            started_at: &now,
            updated_at: &now,
        })
        .await?;
    if parsed.is_active() {
        app.agent.attach(&id);
    }
    let projection = core.projector.project_sessions(&[id.as_str()]).await?;
    if let Some(session) = projection.first() {
        app.publish(SESSION_CREATED, session.to_wire());
    }
    repair(core, task_id).await;
    Ok(id)
}

/// A message an operation writes.
struct Msg<'a> {
    session_id: &'a str,
    task_id: &'a str,
    turn_id: &'a str,
    author_type: &'a str,
    message_type: &'a str,
    content: &'a str,
    metadata: Value,
}

/// Inserts a message and publishes it (`session.message.added` with the projection).
async fn add_message(app: &App, core: &Core, msg: Msg<'_>) -> Result<MessageRow, ServerError> {
    let id = new_id("msg");
    let row = app
        .storage
        .insert_message(&NewMessage {
            id: &id,
            session_id: msg.session_id,
            task_id: msg.task_id,
            turn_id: Some(msg.turn_id),
            author_type: msg.author_type,
            message_type: msg.message_type,
            content: msg.content,
            metadata: msg.metadata,
            created_at: &app.now(),
        })
        .await?;
    publish_message(app, core, MessageEventKind::Added, &row).await;
    Ok(row)
}

/// 409 `no_turn`: the session has no current turn.
fn no_turn(session_id: &str) -> ApiError {
    ApiError::conflict(
        "no_turn",
        format!("session {session_id:?} has no turn: start one first"),
    )
}

/// 409 `session_terminal` when the session has ended.
fn live(session: &SessionRow) -> ApiResult<()> {
    if session.state().is_terminal() {
        return Err(ApiError::conflict(
            "session_terminal",
            format!("session {:?} is {}", session.id, session.state_text),
        ));
    }
    Ok(())
}

/// [`require_live_session`] and the session's current turn from one read (409
/// `session_terminal`, then 409 `no_turn`).
async fn require_live_turn(app: &App, session_id: &str) -> ApiResult<(SessionRow, String)> {
    let (session, turn) = current_turn_read(app, session_id).await?;
    live(&session)?;
    let turn = turn.ok_or_else(|| no_turn(session_id))?;
    Ok((session, turn))
}

/// The session row, unless it has ended (409 `session_terminal`).
pub(super) async fn require_live_session(app: &App, session_id: &str) -> ApiResult<SessionRow> {
    let session = app.storage.session(session_id).await?;
    live(&session)?;
    Ok(session)
}

/// Starts a turn: `turn.started`; unless lifecycle-only, the user's prompt message and the
/// session `RUNNING`.
pub async fn start_turn(
    app: &App,
    core: &Core,
    session_id: &str,
    lifecycle_only: bool,
    prompt: &str,
) -> ApiResult<String> {
    start_turn_with(app, core, session_id, lifecycle_only, prompt, json!({})).await
}

/// [`start_turn`] with the prompt message's metadata.
async fn start_turn_with(
    app: &App,
    core: &Core,
    session_id: &str,
    lifecycle_only: bool,
    prompt: &str,
    prompt_metadata: Value,
) -> ApiResult<String> {
    let session = require_live_session(app, session_id).await?;
    let task_id = session.task_id.clone();
    let id = new_id("turn");
    let now = app.now();
    let metadata = if lifecycle_only {
        json!({ "lifecycle_only": true })
    } else {
        json!({})
    };
    let turn = app
        .storage
        .insert_turn(&NewTurn {
            id: &id,
            session_id,
            task_id: &task_id,
            started_at: &now,
            created_at: &now,
            completed_at: None,
            metadata,
        })
        .await?;
    app.publish(TURN_STARTED, turn.to_wire());
    if !lifecycle_only {
        app.agent.attach(session_id);
        add_message(
            app,
            core,
            Msg {
                session_id,
                task_id: &task_id,
                turn_id: &id,
                author_type: "user",
                message_type: "message",
                content: prompt,
                metadata: prompt_metadata,
            },
        )
        .await?;
        set_state_from(
            app,
            core,
            Some(session),
            session_id,
            "RUNNING",
            "turn started",
        )
        .await?;
    }
    repair(core, &task_id).await;
    Ok(id)
}

/// Completes a turn: `turn.completed`; when it was the session's last open (non-lifecycle)
/// turn of a `RUNNING`/`WAITING_FOR_INPUT` session, the session goes `IDLE`; otherwise a
/// `session.state_changed` (same state) carries the session's new projection.
pub async fn complete_turn(app: &App, core: &Core, turn_id: &str) -> ApiResult<()> {
    let turn = app.storage.turn(turn_id).await?;
    complete_turn_row(app, core, &turn).await
}

/// [`complete_turn`] of a turn row as the caller read it (its session and flags never change;
/// whether it is still open is decided by the completing write).
pub async fn complete_turn_row(app: &App, core: &Core, turn: &TurnRow) -> ApiResult<()> {
    let Some(completed) = app.storage.complete_turn(&turn.id, &app.now()).await? else {
        return Err(ApiError::conflict(
            "turn_completed",
            format!("turn {:?} is already completed", turn.id),
        ));
    };
    app.publish(TURN_COMPLETED, completed.to_wire());
    let session = app.storage.session(&turn.session_id).await?;
    let others_open = app
        .storage
        .open_turns_of_session(&turn.session_id)
        .await?
        .iter()
        .any(|t| t.is_open() && !t.flags().lifecycle_only);
    let moved = !turn.flags().lifecycle_only
        && !others_open
        && session.state().is_input_capable()
        && set_state_from(
            app,
            core,
            Some(session.clone()),
            &turn.session_id,
            "IDLE",
            "turn completed",
        )
        .await?;
    if !moved {
        publish_state(
            app,
            core,
            &turn.session_id,
            &session.state_text,
            "turn completed",
        )
        .await?;
    }
    repair(core, &session.task_id).await;
    Ok(())
}

/// Completes the session's open turns (lifecycle-only ones aside), oldest first: what happens
/// to the agent's running turn when the user starts a new one. Returns their ids.
pub async fn complete_open_turns(
    app: &App,
    core: &Core,
    session_id: &str,
) -> ApiResult<Vec<String>> {
    let mut completed = Vec::new();
    for turn in app.storage.open_turns_of_session(session_id).await? {
        if turn.is_open() && !turn.flags().lifecycle_only {
            complete_turn_row(app, core, &turn).await?;
            completed.push(turn.id);
        }
    }
    Ok(completed)
}

/// The session's current turn when it is open; otherwise a new turn is started first (the
/// user's `prompt`), as when a user prompts an idle agent. `(turn_id, started)`.
pub async fn open_turn(
    app: &App,
    core: &Core,
    session_id: &str,
    prompt: &str,
) -> ApiResult<(String, bool)> {
    if let Some(turn) = current_turn_id(app, session_id).await? {
        if app.storage.turn(&turn).await?.is_open() {
            return Ok((turn, false));
        }
    }
    let turn = start_turn(app, core, session_id, false, prompt).await?;
    Ok((turn, true))
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

/// An ordinary message in the session's current turn.
pub async fn post_message(
    app: &App,
    core: &Core,
    session_id: &str,
    message_type: &str,
    author_type: &str,
    text: &str,
) -> ApiResult<String> {
    let (session, turn) = current_turn_read(app, session_id).await?;
    let turn = turn.ok_or_else(|| no_turn(session_id))?;
    let task_id = session.task_id;
    let row = add_message(
        app,
        core,
        Msg {
            session_id,
            task_id: &task_id,
            turn_id: &turn,
            author_type,
            message_type,
            content: text,
            metadata: json!({}),
        },
    )
    .await?;
    repair(core, &task_id).await;
    Ok(row.id().to_owned())
}

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

/// Asks a permission in the current turn; the session waits for input.
pub async fn ask_permission(
    app: &App,
    core: &Core,
    session_id: &str,
    text: &str,
) -> ApiResult<String> {
    let (session, turn) = require_live_turn(app, session_id).await?;
    let task_id = session.task_id.clone();
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
            metadata: json!({ "status": "pending" }),
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
    Ok(row.id().to_owned())
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
        return Err(ApiError::conflict(
            "already_resolved",
            format!("permission {message_id:?} changed meanwhile"),
        ));
    };
    publish_message(app, core, MessageEventKind::Updated, &updated).await;
    // What the session shows now (no revision: this read labels nothing).
    let snapshot = load_pending_snapshot(&app.storage, &row.session_id).await?;
    let nothing_pending = snapshot.pending_action().0.is_none();
    if nothing_pending && snapshot.session.state() == SessionState::WaitingForInput {
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
    Ok(())
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
