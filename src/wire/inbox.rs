//! The needs-you inbox's wire shapes (docs/server-api.md, "Needs-you inbox"; SPEC §14): a page
//! (`GET /api/v1/clarification-inbox`) and the boot seed, validated whole before the store
//! holds either.

use crate::error::WireError;
use crate::store::{InboxPage, InboxRow, InboxSeed};

use super::{decode, events, Path, Wire};

use super::snapshot::invalid;

/// A non-empty id.
fn id<W: Wire>(value: &W, path: &Path<'_>) -> Result<Box<str>, WireError> {
    let text = decode::string(value, path)?;
    if text.is_empty() {
        return Err(invalid(path, "expected a non-empty id"));
    }
    Ok(text.into())
}

/// The most rows a page holds (the reference servers' largest `limit`).
pub const MAX_ROWS: usize = 200;

/// A page of `workspace`; `at` the place the caller read it at when the page names none.
pub fn page<W: Wire>(
    workspace: Box<str>,
    value: &W,
    at: Option<(Box<str>, u64)>,
) -> Result<InboxPage, WireError> {
    let path = Path::Root("page");
    decode::object(value, &path)?;
    let bundles_path = path.key("bundles");
    let bundles = value.get("bundles");
    let len = decode::array(&bundles, &bundles_path)?;
    if len > MAX_ROWS {
        return Err(invalid(
            &bundles_path,
            "more than 200 rows (a page's largest limit)",
        ));
    }
    let mut rows: Vec<InboxRow> = Vec::with_capacity(len);
    for i in 0..len {
        let row_path = bundles_path.index(i);
        let row = bundles.at(i);
        decode::object(&row, &row_path)?;
        let session_path = row_path.key("session_id");
        let session_id = id(&row.get("session_id"), &session_path)?;
        let pending_path = row_path.key("pending_id");
        let pending_id = id(&row.get("pending_id"), &pending_path)?;
        if rows.iter().any(|r| r.session_id == session_id) {
            return Err(invalid(&session_path, "a second row for the same session"));
        }
        if rows.iter().any(|r| r.pending_id == pending_id) {
            return Err(invalid(&pending_path, "a second row for the same bundle"));
        }
        let task_id = id(&row.get("task_id"), &row_path.key("task_id"))?;
        let created_path = row_path.key("created_at");
        let created_at = decode::optional_timestamp(&row.get("created_at"), &created_path)?
            .ok_or_else(|| invalid(&created_path, "expected a timestamp string"))?;
        rows.push(InboxRow {
            pending_id,
            session_id,
            task_id,
            created_at,
        });
    }
    let count_path = path.key("count");
    if let Some(count) = decode::unsigned(&value.get("count"), &count_path)? {
        if usize::try_from(count).ok() != Some(len) {
            return Err(invalid(&count_path, "is not the number of bundles"));
        }
    }
    let hidden_count = decode::unsigned(&value.get("hidden_count"), &path.key("hidden_count"))?;
    let next_snooze_expiry = decode::optional_timestamp(
        &value.get("next_snooze_expiry"),
        &path.key("next_snooze_expiry"),
    )?;
    let truncated =
        decode::optional_text(&value.get("next_cursor"), &path.key("next_cursor"))?.is_some();
    let stream = decode::optional_string(&value.get("stream"), &path.key("stream"))?;
    let offset_path = path.key("offset");
    let offset = events::offset(&value.get("offset"), &offset_path)?;
    let at = match (stream, offset) {
        (Some(stream), Some(offset)) => Some((stream.into(), offset)),
        (None, None) => at,
        _ => return Err(invalid(&offset_path, "stream and offset come together")),
    };
    Ok(InboxPage {
        workspace,
        at,
        rows,
        truncated,
        hidden_count: hidden_count.unwrap_or(0),
        next_snooze_expiry,
    })
}

/// The boot seed (`{ workspaceId, count, hasMore, nextSnoozeExpiry }`): its workspace and seed.
pub fn seed<W: Wire>(value: &W) -> Result<(Box<str>, InboxSeed), WireError> {
    let path = Path::Root("seed");
    decode::object(value, &path)?;
    let workspace = id(&value.get("workspaceId"), &path.key("workspaceId"))?;
    let count_path = path.key("count");
    let count = decode::unsigned(&value.get("count"), &count_path)?
        .ok_or_else(|| invalid(&count_path, "expected a non-negative integer"))?;
    let has_more = decode::boolean(&value.get("hasMore"), &path.key("hasMore"))?;
    decode::optional_timestamp(
        &value.get("nextSnoozeExpiry"),
        &path.key("nextSnoozeExpiry"),
    )?;
    Ok((workspace, InboxSeed { count, has_more }))
}

/// A workspace id argument.
pub fn workspace<W: Wire>(value: &W) -> Result<Box<str>, WireError> {
    id(value, &Path::Root("workspaceId"))
}
