//! Decoders for the store's inputs: WebSocket payloads and REST snapshots (SPEC §1). Payload
//! objects the store hands back untouched (status summaries) are returned as the wire value.

use crate::error::WireError;
use crate::rules::model::{Session, StatusSummary};
use crate::rules::revision::PendingProjection;
use crate::store::{MessageEvent, MessageEventKind, TaskInput, TurnEvent};

use super::decode;
use super::{Path, Wire};

/// `"added" | "updated" | "deleted"`.
pub fn message_event_kind<W: Wire>(
    value: &W,
    path: &Path<'_>,
) -> Result<MessageEventKind, WireError> {
    let text = decode::string(value, path)?;
    MessageEventKind::parse(&text).ok_or_else(|| WireError::InvalidValue {
        field: path.to_string(),
        problem: format!(
            "expected \"added\", \"updated\" or \"deleted\", got \"{}\"",
            crate::error::quoted(&text)
        ),
    })
}

/// The projection keys of an event; `None` when both are omitted.
fn projection<W: Wire>(value: &W, path: &Path<'_>) -> Result<Option<PendingProjection>, WireError> {
    let action_value = value.get("pending_action");
    let revision_value = value.get("pending_action_revision");
    if action_value.is_undefined() && revision_value.is_undefined() {
        return Ok(None);
    }
    Ok(Some(PendingProjection {
        action: decode::pending_action(&action_value, &path.key("pending_action"))?,
        revision: decode::revision(&revision_value, &path.key("pending_action_revision"))?,
    }))
}

/// `session.message.*`: the message fields (`message_id` for the id), `session_id`, `task_id`
/// and the session's projection.
pub fn message_event<W: Wire>(value: &W, path: &Path<'_>) -> Result<MessageEvent, WireError> {
    let message = decode::message(value, path)?;
    Ok(MessageEvent {
        session_id: decode::string(&value.get("session_id"), &path.key("session_id"))?,
        task_id: decode::optional_string(&value.get("task_id"), &path.key("task_id"))?,
        message,
        projection: projection(value, path)?,
    })
}

/// A turn started/completed event: the turn object with its `session_id`.
pub fn turn_event<W: Wire>(value: &W, path: &Path<'_>) -> Result<TurnEvent, WireError> {
    let turn = decode::turn(value, path)?;
    Ok(TurnEvent {
        session_id: decode::string(&value.get("session_id"), &path.key("session_id"))?,
        task_id: decode::optional_string(&value.get("task_id"), &path.key("task_id"))?,
        turn,
    })
}

/// A session event: a session object (`id`, or `session_id`), its `state` and, when present, its
/// projection keys.
pub fn session_event<W: Wire>(value: &W, path: &Path<'_>) -> Result<Session, WireError> {
    decode::object(value, path)?;
    let mut id = value.get("id");
    if id.is_undefined() {
        id = value.get("session_id");
    }
    let projection = projection(value, path)?;
    Ok(Session {
        id: decode::string(&id, &path.key("id"))?,
        task_id: decode::optional_string(&value.get("task_id"), &path.key("task_id"))?,
        state: decode::session_state(&value.get("state"), &path.key("state"))?,
        is_primary: decode::flag(&value.get("is_primary")),
        pending_action: projection.as_ref().and_then(|p| p.action),
        pending_action_revision: projection.and_then(|p| p.revision),
        updated_at: decode::optional_timestamp(&value.get("updated_at"), &path.key("updated_at"))?,
    })
}

/// A summary object with its wire value (the payload handed back as is).
fn summary_with_payload<W: Wire + Clone>(
    value: W,
    path: &Path<'_>,
) -> Result<Option<(StatusSummary, W)>, WireError> {
    Ok(decode::summary(&value, path)?.map(|summary| (summary, value)))
}

/// `task.status_summary.updated`: `{task_id, status_summary}`.
pub fn summary_event<W: Wire + Clone>(
    value: &W,
    path: &Path<'_>,
) -> Result<(String, Option<(StatusSummary, W)>), WireError> {
    decode::object(value, path)?;
    let task_id = decode::string(&value.get("task_id"), &path.key("task_id"))?;
    let summary = summary_with_payload(value.get("status_summary"), &path.key("status_summary"))?;
    Ok((task_id, summary))
}

/// A task from `task.updated` or a REST snapshot. The `status_summary` key's presence matters.
pub fn task_input<W: Wire + Clone>(value: &W, path: &Path<'_>) -> Result<TaskInput<W>, WireError> {
    decode::object(value, path)?;
    let summary_value = value.get("status_summary");
    let status_summary = if summary_value.is_undefined() {
        None
    } else {
        Some(summary_with_payload(
            summary_value,
            &path.key("status_summary"),
        )?)
    };
    let action_value = value.get("task_pending_action");
    Ok(TaskInput {
        id: decode::string(&value.get("id"), &path.key("id"))?,
        status_summary,
        invalidated: decode::flag(&value.get("status_summary_invalidated")),
        task_pending_action: decode::pending_action(
            &action_value,
            &path.key("task_pending_action"),
        )?,
    })
}

/// A required array of tasks.
pub fn task_inputs<W: Wire + Clone>(
    value: &W,
    path: &Path<'_>,
) -> Result<Vec<TaskInput<W>>, WireError> {
    let len = decode::array(value, path)?;
    (0..len)
        .map(|i| task_input(&value.at(i), &path.index(i)))
        .collect()
}
