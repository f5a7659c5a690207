//! The HTTP side's wire helpers: a request body as JSON and its optional fields, and the task as
//! the task list (and `task.updated`) returns it. A leaf beside [`error`](super::error): it imports
//! no other module of `http` (`task_projection::wire` is the validation of the backend's shapes;
//! this is only the adapter's reading and writing of its own).

use axum::body::Bytes;
use serde_json::{json, Map, Value};

use crate::projection::{action_json, Projector};
use crate::storage::{Storage, TaskRow};
use crate::summary::SummaryRepair;
use crate::ServerError;

use super::error::{ApiError, ApiResult};

/// A JSON request body (empty = `{}`); anything else is a 400.
pub fn body_json(body: &Bytes) -> ApiResult<Value> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("body is not JSON: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::bad_request("body must be a JSON object"));
    }
    Ok(value)
}

/// A body's optional string field (absent or `null`: `None`; another type is a 400).
pub fn opt_str<'a>(body: &'a Value, key: &str) -> ApiResult<Option<&'a str>> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ApiError::bad_request(format!("{key} must be a string"))),
    }
}

/// A body's optional boolean field (absent or `null`: `None`; another type is a 400).
pub fn opt_bool(body: &Value, key: &str) -> ApiResult<Option<bool>> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(ApiError::bad_request(format!("{key} must be a boolean"))),
    }
}

/// The task as the task list (and `task.updated`) returns it: the services' task answer
/// (repaired summary or invalidation marker, legacy `task_pending_action`) plus the primary
/// session's action and the task's display fields. `summaries` and `projector` are the current
/// start's (`app::Core`), `storage` the server's.
pub async fn task_wire(
    storage: &Storage,
    summaries: &SummaryRepair,
    projector: &Projector,
    task: &TaskRow,
) -> Result<Value, ServerError> {
    let answer = summaries.task_answer(&task.id).await?;
    let sessions = projector.task_sessions(&task.id).await?;
    let primary = sessions
        .iter()
        .find(|s| s.session.is_primary)
        .and_then(|s| s.pending_action);
    let mut object = match answer {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    object.insert(
        "title".into(),
        Value::from(storage.task_title(&task.id).await?),
    );
    object.insert("archived".into(), Value::Bool(task.archived));
    object.insert("created_at".into(), Value::from(task.created_at.as_str()));
    object.insert("updated_at".into(), Value::from(task.updated_at.as_str()));
    object.insert(
        "primary_session_pending_action".into(),
        action_json(primary),
    );
    Ok(Value::Object(object))
}
