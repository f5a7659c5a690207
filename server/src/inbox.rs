//! The needs-you inbox (docs/server-api.md, "Needs-you inbox"): every live clarification bundle of
//! a workspace, the requester's dismiss / snooze sidecar, and its pages.
//!
//! Which bundle of a session is a row is [`rules::inbox::session_bundle`] (SPEC §3 discovery,
//! scoped by the session's SPEC §4 projection: what the task page shows), over one read snapshot
//! of the sessions whose projection is a clarification; the order, the page, the cursor and
//! whether a sidecar entry hides a row at server time are [`rules::inbox::page`]. This module
//! gathers the rows and translates the answers to JSON.
//!
//! [`rules::inbox::session_bundle`]: task_projection::rules::inbox::session_bundle
//! [`rules::inbox::page`]: task_projection::rules::inbox::page

use std::collections::HashMap;

use serde_json::{json, Value};

use task_projection::rules::inbox::{
    bundle_created_at, page, session_bundle, List, Page, RowKey, Sidecar,
};
use task_projection::rules::model::PendingAction;
use task_projection::rules::time::Timestamp;

use super::error::Result;
use super::projection::{load_pending_snapshots, load_snapshots};
use super::storage::{MessageRow, SessionRow, SidecarRow, Storage};

/// One live bundle of the workspace.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub key: RowKey,
    pub session: SessionRow,
    /// The bundle's pending members, in array (insertion) order.
    pub members: Vec<MessageRow>,
}

/// Every live bundle of `workspace_id` (the sessions of its unarchived tasks), in no order.
pub async fn candidates(storage: &Storage, workspace_id: &str) -> Result<Vec<Candidate>> {
    let ids = storage.workspace_sessions(workspace_id).await?;
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    // Only a session whose projection is a clarification can have an active bundle (the rule
    // below decides again over the whole transcript of one snapshot).
    let asking: Vec<String> = load_pending_snapshots(storage, &ids)
        .await?
        .into_iter()
        .filter(|s| s.pending_action().0 == Some(PendingAction::Clarification))
        .map(|s| s.session.id)
        .collect();
    let asking: Vec<&str> = asking.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    for snapshot in load_snapshots(storage, &asking).await? {
        let state = Some(snapshot.session.state());
        let Some((pending_id, members)) =
            session_bundle(state, &snapshot.turns, &snapshot.messages)
        else {
            continue;
        };
        let Some(created_at) = bundle_created_at(&snapshot.messages, &members) else {
            continue;
        };
        let key = RowKey {
            created_at: created_at.clone(),
            pending_id: pending_id.to_owned(),
        };
        let members = members
            .iter()
            .filter_map(|&i| snapshot.messages.get(i).cloned())
            .collect();
        out.push(Candidate {
            key,
            session: snapshot.session,
            members,
        });
    }
    Ok(out)
}

/// The requester's sidecar as the rules read it; a row that is neither a dismissal nor a snooze
/// with a conforming end hides nothing.
pub fn sidecar_entries(rows: Vec<SidecarRow>) -> HashMap<String, Sidecar> {
    rows.into_iter()
        .filter_map(|row| {
            let entry = match (row.state.as_str(), row.snooze_until.as_deref()) {
                ("dismissed", _) => Sidecar::Dismissed,
                ("snoozed", Some(until)) => match Timestamp::parse(until) {
                    until @ Timestamp::Instant { .. } => Sidecar::Snoozed { until },
                    Timestamp::Text(_) => return None,
                },
                _ => return None,
            };
            Some((row.pending_id, entry))
        })
        .collect()
}

/// The page of `list` over `candidates` at server time `now`.
pub fn page_of(
    candidates: &[Candidate],
    sidecar: &HashMap<String, Sidecar>,
    now: &Timestamp,
    list: List,
    cursor: Option<&RowKey>,
    limit: usize,
) -> Page {
    let keys: Vec<RowKey> = candidates.iter().map(|c| c.key.clone()).collect();
    page(
        &keys,
        |i| keys.get(i).and_then(|k| sidecar.get(&k.pending_id)),
        now,
        list,
        cursor,
        limit,
    )
}

/// A row as the reference client's inbox returns it: `pending_id`, `task_id`, `session_id`,
/// `session_state`, `task_title`, `created_at`, `context` (the first member's
/// `metadata.context` when it is a non-blank string, else `""`) and `messages` (the members as
/// `GET …/messages` returns them).
pub fn row_json(candidate: &Candidate, task_title: &str) -> Value {
    let context = candidate
        .members
        .first()
        .and_then(|m| m.metadata.get("context"))
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
        .unwrap_or_default();
    let messages: Vec<Value> = candidate.members.iter().map(MessageRow::to_wire).collect();
    json!({
        "pending_id": candidate.key.pending_id,
        "task_id": candidate.session.task_id,
        "session_id": candidate.session.id,
        "session_state": candidate.session.state_text,
        "task_title": task_title,
        "created_at": candidate.key.created_at.text(),
        "context": context,
        "messages": messages,
    })
}
