//! Turns and messages as the simulator writes them (see [`super`]): the session's current turn
//! by the turn rule, a turn's start (`turn.started`, the user's prompt, the session `RUNNING`)
//! and completion (`turn.completed`, the session `IDLE` after its last open turn), and the
//! messages written into the current turn (`session.message.*` with the session's projection).
//! Session state changes go through [`sessions`](super::sessions).

use serde_json::{json, Value};

use crate::events::{TURN_COMPLETED, TURN_STARTED};
use crate::http::app::{App, Core};
use crate::http::error::{ApiError, ApiResult};
use crate::projection::{load_pending_snapshot, MessageEventKind, PendingSnapshot};
use crate::storage::{MessageRow, NewMessage, NewTurn, SessionRow, TurnRow};
use crate::ServerError;
use task_projection::rules::model::{MessageRecord, TurnRecord};
use task_projection::rules::turn::{current_turn, CurrentTurn};

use super::sessions::{live, new_id, publish_state, repair, require_live_session, set_state_from};

pub(super) async fn publish_message(
    app: &App,
    core: &Core,
    kind: MessageEventKind,
    row: &MessageRow,
) {
    core.projector
        .publish_message_event(app.events.as_ref(), kind, &row.session_id, row.to_wire())
        .await;
}

/// The session's current turn by the turn rule (SPEC §2; the state is not consulted: the agent
/// writes into its turn whatever the session state).
pub async fn current_turn_id(app: &App, session_id: &str) -> Result<Option<String>, ServerError> {
    Ok(current_turn_read(app, session_id).await?.1)
}

/// [`current_turn_id`] with the session row it was read with.
pub(super) async fn current_turn_read(
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

/// A message an operation writes.
pub(super) struct Msg<'a> {
    pub(super) session_id: &'a str,
    pub(super) task_id: &'a str,
    pub(super) turn_id: &'a str,
    pub(super) author_type: &'a str,
    pub(super) message_type: &'a str,
    pub(super) content: &'a str,
    pub(super) metadata: Value,
}

/// Inserts a message and publishes it (`session.message.added` with the projection).
pub(super) async fn add_message(
    app: &App,
    core: &Core,
    msg: Msg<'_>,
) -> Result<MessageRow, ServerError> {
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

/// [`require_live_session`] and the session's current turn from one read (409
/// `session_terminal`, then 409 `no_turn`).
pub(super) async fn require_live_turn(
    app: &App,
    session_id: &str,
) -> ApiResult<(SessionRow, String)> {
    let (session, turn) = current_turn_read(app, session_id).await?;
    live(&session)?;
    let turn = turn.ok_or_else(|| no_turn(session_id))?;
    Ok((session, turn))
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
pub(super) async fn start_turn_with(
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
