//! Tasks and sessions as the simulator writes them (see [`super`]): a task's creation and
//! deletion, a session's creation and its state changes (`session.state_changed` with the
//! session's projection keys), the liveness check every write into a session makes, and the
//! summary repair after each change. The leaf of the simulator's writes: [`turns`](super::turns)
//! and [`questions`](super::questions) write through it.

use serde_json::{json, Map, Value};

use crate::events::{SESSION_CREATED, SESSION_STATE_CHANGED, TASK_DELETED, TASK_UPDATED};
use crate::http::app::{insert_projection, App, Core};
use crate::http::error::{ApiError, ApiResult};
use crate::http::wire::task_wire;
use crate::storage::{ChangedSession, NewSession, NewTask, SessionRow, StateChange};
use crate::ServerError;
use task_projection::rules::model::SessionState;

/// The workspace of simulated tasks.
pub const WORKSPACE: &str = "ws-demo";

pub(super) fn new_id(prefix: &str) -> String {
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

/// Publishes `session.state_changed` with the session's projection keys.
pub(super) async fn publish_state(
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
pub(super) async fn set_state_from(
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

/// 409 `session_terminal` when the session has ended.
pub(super) fn live(session: &SessionRow) -> ApiResult<()> {
    if session.state().is_terminal() {
        return Err(ApiError::conflict(
            "session_terminal",
            format!("session {:?} is {}", session.id, session.state_text),
        ));
    }
    Ok(())
}

/// The session row, unless it has ended (409 `session_terminal`).
pub(super) async fn require_live_session(app: &App, session_id: &str) -> ApiResult<SessionRow> {
    let session = app.storage.session(session_id).await?;
    live(&session)?;
    Ok(session)
}
