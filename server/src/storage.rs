//! The storage layer: typed rows over the schema of `server/migrations/`, with the same SQL text on
//! SQLite and PostgreSQL. Rows implement the rule views ([`TurnRecord`], [`MessageRecord`]) so
//! the services hand them to [`task_projection::rules`] unchanged; storage decides nothing.
//!
//! | module | what |
//! |---|---|
//! | `rows` | the row types, the write inputs, the column lists and their readers |
//! | this file | [`Storage`], the repository: one statement per method, on the database |
//! | `conn` | statements on a held connection (a service's transaction) |
//! | `inbox` | the needs-you inbox: a workspace's sessions, the requester's dismiss / snooze sidecar |
//! | `window` | the current-turn window and the pending-window queries (one statement each) |
//! | `backfill` | [`connect`]: migrations, then the startup backfill of the turns' order keys |
//!
//! [`TurnRecord`]: task_projection::rules::model::TurnRecord
//! [`MessageRecord`]: task_projection::rules::model::MessageRecord

mod backfill;
mod conn;
mod inbox;
mod rows;
mod window;

use serde_json::Value;

use crate::db::{col, query, query_scalar, Arg, Backend, Db};
use crate::error::{Result, ServerError};

pub use backfill::connect;
pub(crate) use conn::{
    bundle_rows_on, cas_message_metadata_on, insert_intent_on, messages_on, session_on,
    turn_referenced_on, turn_requests_on, turns_on, turns_referenced_on,
};
pub use inbox::SidecarRow;
use rows::{
    from_bool, indexed_pending_id, to_bool, turn_keys, INTENT_COLUMNS, MESSAGE_COLUMNS,
    SESSION_COLUMNS, TURN_COLUMNS,
};
pub use rows::{
    ChangedSession, IntentRow, MessageRow, NewMessage, NewSession, NewTask, NewTurn, SessionRow,
    StateChange, StopIntentRow, SummaryRow, TaskRow, TurnRow,
};
pub(crate) use window::{pending_window, task_windows, turns_window_on, PendingWindow};

/// Typed access to the tables. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Storage {
    db: Db,
}

impl Storage {
    pub fn new(db: Db) -> Storage {
        Storage { db }
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    // ---- tasks --------------------------------------------------------------------------------

    pub async fn insert_task(&self, task: &NewTask<'_>) -> Result<()> {
        query(
            "INSERT INTO tasks (id, workspace_id, archived, created_at, updated_at) \
             VALUES ($1, $2, 0, $3, $3)",
        )
        .bind(task.id)
        .bind(task.workspace_id)
        .bind(task.created_at)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    pub async fn task(&self, id: &str) -> Result<TaskRow> {
        let row = query(
            "SELECT id, workspace_id, archived, created_at, updated_at FROM tasks WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.db)
        .await?;
        match row {
            Some(row) => TaskRow::read(&row),
            None => Err(ServerError::NotFound {
                what: "task",
                id: id.to_owned(),
            }),
        }
    }

    /// A task's display title (`""` when none was set).
    pub async fn task_title(&self, id: &str) -> Result<String> {
        let title: Option<String> = query_scalar("SELECT title FROM tasks WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.db)
            .await?;
        title.ok_or_else(|| ServerError::NotFound {
            what: "task",
            id: id.to_owned(),
        })
    }

    pub async fn set_task_title(&self, id: &str, title: &str) -> Result<()> {
        query("UPDATE tasks SET title = $1 WHERE id = $2")
            .bind(title)
            .bind(id)
            .execute(&self.db)
            .await?;
        Ok(())
    }

    /// How many tasks exist (archived or not).
    pub async fn task_count(&self) -> Result<i64> {
        let count: i64 = query_scalar("SELECT COUNT(*) FROM tasks")
            .fetch_one(&self.db)
            .await?;
        Ok(count)
    }

    pub async fn set_task_archived(&self, id: &str, archived: bool) -> Result<()> {
        query("UPDATE tasks SET archived = $1 WHERE id = $2")
            .bind(from_bool(archived))
            .bind(id)
            .execute(&self.db)
            .await?;
        Ok(())
    }

    /// Unarchived tasks, by id.
    pub async fn unarchived_tasks(&self) -> Result<Vec<TaskRow>> {
        let rows = query(
            "SELECT id, workspace_id, archived, created_at, updated_at FROM tasks \
             WHERE archived = 0 ORDER BY id",
        )
        .fetch_all(&self.db)
        .await?;
        rows.iter().map(TaskRow::read).collect()
    }

    // ---- sessions -----------------------------------------------------------------------------

    pub async fn insert_session(&self, session: &NewSession<'_>) -> Result<()> {
        query(
            "INSERT INTO sessions (id, task_id, state, agent_profile_id, is_primary, started_at, \
             updated_at, version) VALUES ($1, $2, $3, $4, $5, $6, $7, 0)",
        )
        .bind(session.id)
        .bind(session.task_id)
        .bind(session.state)
        .bind(session.agent_profile_id)
        .bind(from_bool(session.is_primary))
        .bind(session.started_at)
        .bind(session.updated_at)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    pub async fn session(&self, id: &str) -> Result<SessionRow> {
        let mut conn = self.db.conn().await?;
        session_on(&mut conn, id).await
    }

    /// The sessions of a task, in id order (callers order by the rules' timestamp order).
    pub async fn sessions_of_task(&self, task_id: &str) -> Result<Vec<SessionRow>> {
        let rows = query(format!(
            "SELECT {SESSION_COLUMNS} FROM sessions WHERE task_id = $1 ORDER BY id"
        ))
        .bind(task_id)
        .fetch_all(&self.db)
        .await?;
        rows.iter().map(SessionRow::read).collect()
    }

    /// Deletes a session and everything of it (its delivery and stop intents, messages and turns)
    /// in one transaction: `false` when there was no such session (nothing deleted).
    pub async fn delete_session(&self, id: &str) -> Result<bool> {
        let mut tx = self.db.begin().await?;
        for statement in [
            "DELETE FROM delivery_intents WHERE session_id = $1",
            "DELETE FROM stop_intents WHERE session_id = $1",
            "DELETE FROM messages WHERE session_id = $1",
            "DELETE FROM turns WHERE session_id = $1",
        ] {
            query(statement).bind(id).execute(&mut tx).await?;
        }
        let done = query("DELETE FROM sessions WHERE id = $1")
            .bind(id)
            .execute(&mut tx)
            .await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// Compare-and-set of a session's state on its version: `false` when the row changed since
    /// `expected_version` was read (nothing written).
    pub async fn cas_session_state(
        &self,
        id: &str,
        expected_version: i64,
        change: &StateChange<'_>,
    ) -> Result<bool> {
        Ok(self
            .cas_session_state_returning(id, expected_version, change)
            .await?
            .is_some())
    }

    /// [`Storage::cas_session_state`] that returns, from the same statement, the row it wrote and
    /// its task's workspace id (what a `session.state_changed` event carries): `None` when the
    /// row changed since `expected_version` was read (nothing written).
    pub async fn cas_session_state_returning(
        &self,
        id: &str,
        expected_version: i64,
        change: &StateChange<'_>,
    ) -> Result<Option<ChangedSession>> {
        let row = query(format!(
            "UPDATE sessions SET state = $1, updated_at = $2, completed_at = $3, \
             state_reason = $4, version = version + 1 WHERE id = $5 AND version = $6 \
             RETURNING {SESSION_COLUMNS}, (SELECT workspace_id FROM tasks \
             WHERE tasks.id = sessions.task_id) AS workspace_id"
        ))
        .bind(change.state)
        .bind(change.updated_at)
        .bind(change.completed_at)
        .bind(change.reason)
        .bind(id)
        .bind(expected_version)
        .fetch_optional(&self.db)
        .await?;
        row.map(|row| {
            Ok(ChangedSession {
                session: SessionRow::read(&row)?,
                workspace_id: col(&row, "tasks", "workspace_id")?,
            })
        })
        .transpose()
    }

    /// Touches a session row (new activity): `updated_at` and the version.
    pub async fn touch_session(&self, id: &str, updated_at: &str) -> Result<()> {
        query("UPDATE sessions SET updated_at = $1, version = version + 1 WHERE id = $2")
            .bind(updated_at)
            .bind(id)
            .execute(&self.db)
            .await?;
        Ok(())
    }

    /// Sets or clears `is_primary` (bumps the version).
    pub async fn set_session_primary(&self, id: &str, primary: bool) -> Result<()> {
        query("UPDATE sessions SET is_primary = $1, version = version + 1 WHERE id = $2")
            .bind(from_bool(primary))
            .bind(id)
            .execute(&self.db)
            .await?;
        Ok(())
    }

    // ---- turns --------------------------------------------------------------------------------

    /// Inserts a turn; returns the row as stored.
    pub async fn insert_turn(&self, turn: &NewTurn<'_>) -> Result<TurnRow> {
        let (started_key, created_key) = turn_keys(turn.started_at, turn.created_at);
        let row = query(format!(
            "INSERT INTO turns (id, session_id, task_id, started_at, completed_at, created_at, \
             updated_at, metadata, started_key, created_key) \
             VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9) RETURNING {TURN_COLUMNS}"
        ))
        .bind(turn.id)
        .bind(turn.session_id)
        .bind(turn.task_id)
        .bind(turn.started_at)
        .bind(turn.completed_at)
        .bind(turn.created_at)
        .bind(turn.metadata.to_string())
        .bind(started_key)
        .bind(created_key)
        .fetch_one(&self.db)
        .await?;
        TurnRow::read(&row)
    }

    pub async fn turn(&self, id: &str) -> Result<TurnRow> {
        let row = query(format!("SELECT {TURN_COLUMNS} FROM turns WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.db)
            .await?;
        match row {
            Some(row) => TurnRow::read(&row),
            None => Err(ServerError::NotFound {
                what: "turn",
                id: id.to_owned(),
            }),
        }
    }

    /// Completes an open turn; returns the completed row, or `None` when the turn is already
    /// completed or does not exist (nothing written).
    pub async fn complete_turn(&self, id: &str, completed_at: &str) -> Result<Option<TurnRow>> {
        let row = query(format!(
            "UPDATE turns SET completed_at = $1, updated_at = $1 \
             WHERE id = $2 AND completed_at IS NULL RETURNING {TURN_COLUMNS}"
        ))
        .bind(completed_at)
        .bind(id)
        .fetch_optional(&self.db)
        .await?;
        row.as_ref().map(TurnRow::read).transpose()
    }

    /// The turns of a session, in storage order.
    pub async fn turns_of_session(&self, session_id: &str) -> Result<Vec<TurnRow>> {
        let mut conn = self.db.conn().await?;
        turns_on(&mut conn, session_id).await
    }

    /// The open turns of a session (no `completed_at`), in storage order: few however long the
    /// history (index `turns_session_open`).
    pub async fn open_turns_of_session(&self, session_id: &str) -> Result<Vec<TurnRow>> {
        let rows = query(format!(
            "SELECT {TURN_COLUMNS} FROM turns WHERE session_id = $1 AND completed_at IS NULL \
             ORDER BY id"
        ))
        .bind(session_id)
        .fetch_all(&self.db)
        .await?;
        rows.iter().map(TurnRow::read).collect()
    }

    // ---- messages -----------------------------------------------------------------------------

    /// Allocates the next value of a named counter (atomic on both backends).
    pub async fn next_counter(&self, name: &str) -> Result<i64> {
        let value: i64 = query_scalar(
            "INSERT INTO counters (name, value) VALUES ($1, 1) \
             ON CONFLICT (name) DO UPDATE SET value = counters.value + 1 RETURNING value",
        )
        .bind(name)
        .fetch_one(&self.db)
        .await?;
        Ok(value)
    }

    pub async fn insert_message(&self, message: &NewMessage<'_>) -> Result<MessageRow> {
        // The insertion order: PostgreSQL's sequence (migration 9), taken by the insert itself;
        // SQLite's counter row (one short write; SQLite has one writer anyway).
        let (seq, seq_value) = match self.db.backend() {
            Backend::Postgres => (Arg::NullInt, "nextval('message_seq')"),
            Backend::Sqlite => (Arg::Int(self.next_counter("message_seq").await?), "$2"),
        };
        let row = query(format!(
            "INSERT INTO messages (id, seq, session_id, task_id, turn_id, author_type, \
             message_type, content, metadata, pending_id, created_at, updated_at, version) \
             VALUES ($1, {seq_value}, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, 0) \
             RETURNING {MESSAGE_COLUMNS}",
        ))
        .bind(message.id)
        .bind(seq)
        .bind(message.session_id)
        .bind(message.task_id)
        .bind(message.turn_id)
        .bind(message.author_type)
        .bind(message.message_type)
        .bind(message.content)
        .bind(message.metadata.to_string())
        .bind(indexed_pending_id(message.message_type, &message.metadata))
        .bind(message.created_at)
        .fetch_one(&self.db)
        .await?;
        MessageRow::read(&row)
    }

    pub async fn message(&self, id: &str) -> Result<MessageRow> {
        let row = query(format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.db)
        .await?;
        match row {
            Some(row) => MessageRow::read(&row),
            None => Err(ServerError::NotFound {
                what: "message",
                id: id.to_owned(),
            }),
        }
    }

    /// The messages of a session in insertion order (without filtering: every message may be
    /// the evidence that publishes a reservation).
    pub async fn messages_of_session(&self, session_id: &str) -> Result<Vec<MessageRow>> {
        let mut conn = self.db.conn().await?;
        messages_on(&mut conn, session_id).await
    }

    /// Compare-and-set of a message's metadata on the version of `row` (as read): the row
    /// written, or `None` when it changed since (nothing written).
    pub async fn cas_message_metadata(
        &self,
        row: &MessageRow,
        metadata: &Value,
        updated_at: &str,
    ) -> Result<Option<MessageRow>> {
        let mut conn = self.db.conn().await?;
        cas_message_metadata_on(&mut conn, row, metadata, updated_at).await
    }

    /// The sessions holding `clarification_request` rows of bundle `pending_id`.
    pub async fn sessions_with_bundle(&self, pending_id: &str) -> Result<Vec<String>> {
        let ids: Vec<String> = query_scalar(
            "SELECT DISTINCT session_id FROM messages WHERE pending_id = $1 ORDER BY session_id",
        )
        .bind(pending_id)
        .fetch_all(&self.db)
        .await?;
        Ok(ids)
    }

    // ---- stop intents -------------------------------------------------------------------------

    pub async fn stop_intent(&self, session_id: &str) -> Result<Option<StopIntentRow>> {
        let row = query(
            "SELECT session_id, execution_id, stamp, consumed, created_at, consumed_at \
             FROM stop_intents WHERE session_id = $1",
        )
        .bind(session_id)
        .fetch_optional(&self.db)
        .await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some(StopIntentRow {
            session_id: col(&row, "stop_intents", "session_id")?,
            execution_id: col(&row, "stop_intents", "execution_id")?,
            stamp: col(&row, "stop_intents", "stamp")?,
            consumed: to_bool(col(&row, "stop_intents", "consumed")?),
            created_at: col(&row, "stop_intents", "created_at")?,
            consumed_at: col(&row, "stop_intents", "consumed_at")?,
        }))
    }

    /// Persists a fresh stop intent for a session (a newer park replaces an older intent or
    /// tombstone with its own execution id and stamp).
    pub async fn put_stop_intent(
        &self,
        session_id: &str,
        execution_id: &str,
        stamp: &str,
        now: &str,
    ) -> Result<()> {
        query(
            "INSERT INTO stop_intents (session_id, execution_id, stamp, consumed, created_at, \
             consumed_at) VALUES ($1, $2, $3, 0, $4, NULL) ON CONFLICT (session_id) DO UPDATE \
             SET execution_id = $2, stamp = $3, consumed = 0, created_at = $4, consumed_at = NULL",
        )
        .bind(session_id)
        .bind(execution_id)
        .bind(stamp)
        .bind(now)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    /// Consumes the intent by compare-and-set on its stamp (and execution id): `false` when the
    /// intent changed or was consumed meanwhile. The consumed row stays as a tombstone.
    pub async fn consume_stop_intent(
        &self,
        session_id: &str,
        execution_id: &str,
        stamp: &str,
        now: &str,
    ) -> Result<bool> {
        let done = query(
            "UPDATE stop_intents SET consumed = 1, consumed_at = $1 WHERE session_id = $2 \
             AND execution_id = $3 AND stamp = $4 AND consumed = 0",
        )
        .bind(now)
        .bind(session_id)
        .bind(execution_id)
        .bind(stamp)
        .execute(&self.db)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    // ---- delivery intents ---------------------------------------------------------------------

    pub async fn delivery_intent(&self, pending_id: &str) -> Result<Option<IntentRow>> {
        let row = query(format!(
            "SELECT {INTENT_COLUMNS} FROM delivery_intents WHERE pending_id = $1"
        ))
        .bind(pending_id)
        .fetch_optional(&self.db)
        .await?;
        row.as_ref().map(IntentRow::read).transpose()
    }

    /// Every outstanding delivery intent (startup reconciliation).
    pub async fn delivery_intents(&self) -> Result<Vec<IntentRow>> {
        let rows = query(format!(
            "SELECT {INTENT_COLUMNS} FROM delivery_intents ORDER BY pending_id"
        ))
        .fetch_all(&self.db)
        .await?;
        rows.iter().map(IntentRow::read).collect()
    }

    /// Records the handoff an intent reached.
    pub async fn set_intent_handoff(
        &self,
        pending_id: &str,
        handoff: &str,
        now: &str,
    ) -> Result<()> {
        query("UPDATE delivery_intents SET handoff = $1, updated_at = $2 WHERE pending_id = $3")
            .bind(handoff)
            .bind(now)
            .bind(pending_id)
            .execute(&self.db)
            .await?;
        Ok(())
    }

    /// Retires (deletes) an intent.
    pub async fn delete_intent(&self, pending_id: &str) -> Result<()> {
        query("DELETE FROM delivery_intents WHERE pending_id = $1")
            .bind(pending_id)
            .execute(&self.db)
            .await?;
        Ok(())
    }

    pub async fn delete_message(&self, id: &str) -> Result<bool> {
        let done = query("DELETE FROM messages WHERE id = $1")
            .bind(id)
            .execute(&self.db)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The newest persisted message `created_at` of a session (text; the caller orders).
    pub async fn message_times_of_session(&self, session_id: &str) -> Result<Vec<String>> {
        let rows: Vec<String> =
            query_scalar("SELECT created_at FROM messages WHERE session_id = $1")
                .bind(session_id)
                .fetch_all(&self.db)
                .await?;
        Ok(rows)
    }

    // ---- task status summaries ----------------------------------------------------------------

    pub async fn summary(&self, task_id: &str) -> Result<Option<SummaryRow>> {
        let row = query(
            "SELECT task_id, revision, summary FROM task_status_summaries WHERE task_id = $1",
        )
        .bind(task_id)
        .fetch_optional(&self.db)
        .await?;
        row.as_ref().map(SummaryRow::read).transpose()
    }

    /// Inserts a summary (its `revision` key must equal `revision`).
    pub async fn insert_summary(
        &self,
        task_id: &str,
        revision: i64,
        summary: &Value,
        updated_at: &str,
    ) -> Result<()> {
        query(
            "INSERT INTO task_status_summaries (task_id, revision, summary, updated_at) \
             VALUES ($1, $2, $3, $4)",
        )
        .bind(task_id)
        .bind(revision)
        .bind(summary.to_string())
        .bind(updated_at)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    /// Compare-and-set of a summary on its revision: `false` when another writer got there first.
    pub async fn cas_summary(
        &self,
        task_id: &str,
        expected_revision: i64,
        revision: i64,
        summary: &Value,
        updated_at: &str,
    ) -> Result<bool> {
        Ok(self
            .cas_summary_returning(task_id, expected_revision, revision, summary, updated_at)
            .await?
            .is_some())
    }

    /// [`Storage::cas_summary`] that returns, from the same statement, the task's workspace id
    /// (what a `task.status_summary.updated` event carries; `Some(None)` when the task row is
    /// gone): `None` when another writer got there first.
    pub async fn cas_summary_returning(
        &self,
        task_id: &str,
        expected_revision: i64,
        revision: i64,
        summary: &Value,
        updated_at: &str,
    ) -> Result<Option<Option<String>>> {
        let row = query(
            "UPDATE task_status_summaries SET revision = $1, summary = $2, updated_at = $3 \
             WHERE task_id = $4 AND revision = $5 RETURNING (SELECT workspace_id FROM tasks \
             WHERE tasks.id = task_status_summaries.task_id) AS workspace_id",
        )
        .bind(revision)
        .bind(summary.to_string())
        .bind(updated_at)
        .bind(task_id)
        .bind(expected_revision)
        .fetch_optional(&self.db)
        .await?;
        row.map(|row| col(&row, "tasks", "workspace_id"))
            .transpose()
    }
}
