//! The needs-you inbox's statements: the sessions of a workspace's unarchived tasks, and the
//! requester's dismiss / snooze sidecar (`inbox_sidecar`, migration 10). Storage decides nothing:
//! which bundles are rows and whether an entry hides one is `rules::inbox`.

use crate::db::{col, query, query_scalar};
use crate::error::Result;

use super::Storage;

/// One sidecar row of a requester.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SidecarRow {
    pub pending_id: String,
    /// `dismissed` or `snoozed`.
    pub state: String,
    /// When the snooze ends (server time, wire form); `None` for a dismissal.
    pub snooze_until: Option<String>,
}

impl Storage {
    /// The ids of the sessions of `workspace_id`'s unarchived tasks (the tasks `GET /tasks`
    /// lists), by id.
    pub async fn workspace_sessions(&self, workspace_id: &str) -> Result<Vec<String>> {
        let ids: Vec<String> = query_scalar(
            "SELECT sessions.id FROM sessions JOIN tasks ON tasks.id = sessions.task_id \
             WHERE tasks.workspace_id = $1 AND tasks.archived = 0 ORDER BY sessions.id",
        )
        .bind(workspace_id)
        .fetch_all(self.db())
        .await?;
        Ok(ids)
    }

    /// Every sidecar row of `requester`.
    pub async fn sidecar_of(&self, requester: &str) -> Result<Vec<SidecarRow>> {
        let rows = query(
            "SELECT pending_id, state, snooze_until FROM inbox_sidecar WHERE requester = $1 \
             ORDER BY pending_id",
        )
        .bind(requester)
        .fetch_all(self.db())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(SidecarRow {
                    pending_id: col(row, "inbox_sidecar", "pending_id")?,
                    state: col(row, "inbox_sidecar", "state")?,
                    snooze_until: col(row, "inbox_sidecar", "snooze_until")?,
                })
            })
            .collect()
    }

    /// Sets `requester`'s entry for bundle `pending_id` (one statement: a later write wins).
    pub async fn put_sidecar(
        &self,
        requester: &str,
        pending_id: &str,
        state: &str,
        snooze_until: Option<&str>,
        now: &str,
    ) -> Result<()> {
        query(
            "INSERT INTO inbox_sidecar (requester, pending_id, state, snooze_until, updated_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (requester, pending_id) DO UPDATE \
             SET state = $3, snooze_until = $4, updated_at = $5",
        )
        .bind(requester)
        .bind(pending_id)
        .bind(state)
        .bind(snooze_until)
        .bind(now)
        .execute(self.db())
        .await?;
        Ok(())
    }

    /// Removes `requester`'s entry for bundle `pending_id` (restore); idempotent.
    pub async fn delete_sidecar(&self, requester: &str, pending_id: &str) -> Result<()> {
        query("DELETE FROM inbox_sidecar WHERE requester = $1 AND pending_id = $2")
            .bind(requester)
            .bind(pending_id)
            .execute(self.db())
            .await?;
        Ok(())
    }
}
