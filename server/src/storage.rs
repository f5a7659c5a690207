//! The storage layer: typed rows over the schema of `server/migrations/`, with the same SQL text on
//! SQLite and PostgreSQL. Rows implement the rule views ([`TurnRecord`], [`MessageRecord`]) so
//! the services hand them to [`task_projection::rules`] unchanged; storage decides nothing.

use serde_json::{json, Value};

use task_projection::rules::model::{
    Message, MessageKind, MessageRecord, RequestStatus, SessionState, TurnFlags, TurnRecord,
};
use task_projection::rules::time::Timestamp;
use task_projection::wire::{self, Json, MessageMeaning, Path};

use super::db::{col, query, query_scalar, Arg, Backend, Columns, Conn, Db, On, Row};
use super::error::{Result, ServerError};

fn to_bool(value: i64) -> bool {
    value != 0
}

fn from_bool(value: bool) -> i64 {
    i64::from(value)
}

fn parse_json(table: &'static str, id: &str, text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| ServerError::corrupt(table, id, e))
}

/// `metadata.pending_id` as the wire decoder reads it (the lookup column `messages.pending_id`).
fn indexed_pending_id(message_type: &str, metadata: &Value) -> Option<String> {
    let probe = json!({ "id": "", "type": message_type, "metadata": metadata, "created_at": "" });
    wire::message(&Json::new(&probe), &Path::Root("message"))
        .ok()
        .and_then(|m| m.pending_id)
}

/// A task row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRow {
    pub id: String,
    pub workspace_id: String,
    pub archived: bool,
    pub created_at: String,
    pub updated_at: String,
}

impl TaskRow {
    fn read(row: &impl Columns) -> Result<TaskRow> {
        Ok(TaskRow {
            id: col(row, "tasks", "id")?,
            workspace_id: col(row, "tasks", "workspace_id")?,
            archived: to_bool(col(row, "tasks", "archived")?),
            created_at: col(row, "tasks", "created_at")?,
            updated_at: col(row, "tasks", "updated_at")?,
        })
    }
}

/// A session row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRow {
    pub id: String,
    pub task_id: String,
    /// The stored `state` text.
    pub state_text: String,
    pub agent_profile_id: String,
    pub is_primary: bool,
    pub started_at: String,
    pub updated_at: String,
    pub completed_at: Option<String>,
    pub state_reason: Option<String>,
    /// The compare-and-set token, bumped by every write.
    pub version: i64,
}

impl SessionRow {
    fn read(row: &impl Columns) -> Result<SessionRow> {
        Ok(SessionRow {
            id: col(row, "sessions", "id")?,
            task_id: col(row, "sessions", "task_id")?,
            state_text: col(row, "sessions", "state")?,
            agent_profile_id: col(row, "sessions", "agent_profile_id")?,
            is_primary: to_bool(col(row, "sessions", "is_primary")?),
            started_at: col(row, "sessions", "started_at")?,
            updated_at: col(row, "sessions", "updated_at")?,
            completed_at: col(row, "sessions", "completed_at")?,
            state_reason: col(row, "sessions", "state_reason")?,
            version: col(row, "sessions", "version")?,
        })
    }

    pub fn state(&self) -> SessionState {
        SessionState::parse(&self.state_text)
    }
}

/// A turn row, decoded by the same wire decoder the clients use.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnRow {
    pub id: String,
    pub session_id: String,
    pub task_id: String,
    pub started_at_text: String,
    pub completed_at: Option<String>,
    pub created_at_text: String,
    pub updated_at: String,
    pub metadata: Value,
    started_at: Timestamp,
    created_at: Timestamp,
    flags: TurnFlags,
}

impl TurnRow {
    fn read(row: &impl Columns) -> Result<TurnRow> {
        let id: String = col(row, "turns", "id")?;
        let metadata_text: String = col(row, "turns", "metadata")?;
        let metadata = parse_json("turns", &id, &metadata_text)?;
        let started_at_text: String = col(row, "turns", "started_at")?;
        let created_at_text: String = col(row, "turns", "created_at")?;
        let completed_at: Option<String> = col(row, "turns", "completed_at")?;
        let wire_turn = json!({
            "id": id,
            "started_at": started_at_text,
            "created_at": created_at_text,
            "completed_at": completed_at,
            "metadata": metadata,
        });
        let decoded = wire::turn(&Json::new(&wire_turn), &Path::Root("turn"))
            .map_err(|e| ServerError::wire("turns", &id, &e))?;
        Ok(TurnRow {
            session_id: col(row, "turns", "session_id")?,
            task_id: col(row, "turns", "task_id")?,
            updated_at: col(row, "turns", "updated_at")?,
            started_at: decoded.started_at,
            created_at: decoded.created_at,
            flags: decoded.flags,
            id,
            started_at_text,
            completed_at,
            created_at_text,
            metadata,
        })
    }
}

impl TurnRow {
    /// The wire object of the turn (REST turn lists, `turn.started` / `turn.completed`).
    pub fn to_wire(&self) -> Value {
        json!({
            "id": self.id,
            "session_id": self.session_id,
            "task_id": self.task_id,
            "started_at": self.started_at_text,
            "completed_at": self.completed_at,
            "created_at": self.created_at_text,
            "updated_at": self.updated_at,
            "metadata": self.metadata,
        })
    }
}

impl TurnRecord for TurnRow {
    fn id(&self) -> &str {
        &self.id
    }
    fn is_open(&self) -> bool {
        self.completed_at.is_none()
    }
    fn started_at(&self) -> &Timestamp {
        &self.started_at
    }
    fn created_at(&self) -> &Timestamp {
        &self.created_at
    }
    fn flags(&self) -> TurnFlags {
        self.flags
    }
}

/// A message row (content included), decoded by the same wire decoder the clients use.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageRow {
    pub seq: i64,
    pub session_id: String,
    pub task_id: String,
    pub author_type: String,
    pub message_type: String,
    pub content: String,
    pub metadata: Value,
    pub created_at_text: String,
    pub updated_at_text: String,
    pub version: i64,
    decoded: Message,
}

impl MessageRow {
    fn read(row: &impl Columns) -> Result<MessageRow> {
        let id: String = col(row, "messages", "id")?;
        let metadata_text: String = col(row, "messages", "metadata")?;
        let metadata = parse_json("messages", &id, &metadata_text)?;
        let turn_id: Option<String> = col(row, "messages", "turn_id")?;
        let message_type: String = col(row, "messages", "message_type")?;
        let created_at_text: String = col(row, "messages", "created_at")?;
        let updated_at_text: String = col(row, "messages", "updated_at")?;
        let wire_message = json!({
            "id": id,
            "turn_id": turn_id,
            "type": message_type,
            "metadata": metadata,
            "created_at": created_at_text,
            "updated_at": updated_at_text,
        });
        let decoded = wire::message(&Json::new(&wire_message), &Path::Root("message"))
            .map_err(|e| ServerError::wire("messages", &id, &e))?;
        Ok(MessageRow {
            seq: col(row, "messages", "seq")?,
            session_id: col(row, "messages", "session_id")?,
            task_id: col(row, "messages", "task_id")?,
            author_type: col(row, "messages", "author_type")?,
            content: col(row, "messages", "content")?,
            version: col(row, "messages", "version")?,
            message_type,
            metadata,
            created_at_text,
            updated_at_text,
            decoded,
        })
    }

    /// The wire object of the message (`session.message.*` payload fields).
    pub fn to_wire(&self) -> Value {
        json!({
            "message_id": self.decoded.id,
            "id": self.decoded.id,
            "session_id": self.session_id,
            "task_id": self.task_id,
            "turn_id": self.decoded.turn_id,
            "author_type": self.author_type,
            "type": self.message_type,
            "content": self.content,
            "metadata": self.metadata,
            "created_at": self.created_at_text,
            "updated_at": self.updated_at_text,
        })
    }
}

impl MessageRecord for MessageRow {
    fn id(&self) -> &str {
        &self.decoded.id
    }
    fn turn_id(&self) -> Option<&str> {
        self.decoded.turn_id.as_deref()
    }
    fn kind(&self) -> MessageKind {
        self.decoded.kind
    }
    fn status(&self) -> RequestStatus {
        self.decoded.status
    }
    fn pending_id(&self) -> Option<&str> {
        self.decoded.pending_id.as_deref()
    }
    fn question_total(&self) -> Option<f64> {
        self.decoded.question_total
    }
    fn created_at(&self) -> &Timestamp {
        &self.decoded.created_at
    }
}

/// A persisted task status summary: the whole wire object, and its revision (the CAS token).
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    pub task_id: String,
    pub revision: i64,
    pub summary: Value,
}

impl SummaryRow {
    fn read(row: &impl Columns) -> Result<SummaryRow> {
        let task_id: String = col(row, "task_status_summaries", "task_id")?;
        let text: String = col(row, "task_status_summaries", "summary")?;
        Ok(SummaryRow {
            summary: parse_json("task_status_summaries", &task_id, &text)?,
            revision: col(row, "task_status_summaries", "revision")?,
            task_id,
        })
    }
}

/// A durable clarification response-delivery intent (SPEC §8).
#[derive(Clone, Debug, PartialEq)]
pub struct IntentRow {
    pub pending_id: String,
    pub session_id: String,
    pub turn_id: String,
    pub message_ids: Vec<String>,
    /// `live` | `detached`.
    pub prior_state: String,
    /// `answer` | `reject`.
    pub response_kind: String,
    pub response: Value,
    /// `none` | `acknowledged` | `reserved`.
    pub handoff: String,
    pub created_at: String,
    pub updated_at: String,
}

impl IntentRow {
    fn read(row: &impl Columns) -> Result<IntentRow> {
        let pending_id: String = col(row, "delivery_intents", "pending_id")?;
        let ids: String = col(row, "delivery_intents", "message_ids")?;
        let message_ids: Vec<String> = serde_json::from_str(&ids)
            .map_err(|e| ServerError::corrupt("delivery_intents", &pending_id, e))?;
        let response: String = col(row, "delivery_intents", "response")?;
        Ok(IntentRow {
            session_id: col(row, "delivery_intents", "session_id")?,
            turn_id: col(row, "delivery_intents", "turn_id")?,
            prior_state: col(row, "delivery_intents", "prior_state")?,
            response_kind: col(row, "delivery_intents", "response_kind")?,
            response: parse_json("delivery_intents", &pending_id, &response)?,
            handoff: col(row, "delivery_intents", "handoff")?,
            created_at: col(row, "delivery_intents", "created_at")?,
            updated_at: col(row, "delivery_intents", "updated_at")?,
            message_ids,
            pending_id,
        })
    }
}

/// A workflow-switch stop intent row (SPEC §10).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StopIntentRow {
    pub session_id: String,
    pub execution_id: String,
    pub stamp: String,
    pub consumed: bool,
    pub created_at: String,
    pub consumed_at: Option<String>,
}

/// A new task.
#[derive(Clone, Debug)]
pub struct NewTask<'a> {
    pub id: &'a str,
    pub workspace_id: &'a str,
    pub created_at: &'a str,
}

/// A new session.
#[derive(Clone, Debug)]
pub struct NewSession<'a> {
    pub id: &'a str,
    pub task_id: &'a str,
    pub state: &'a str,
    pub agent_profile_id: &'a str,
    pub is_primary: bool,
    pub started_at: &'a str,
    pub updated_at: &'a str,
}

/// A new turn.
#[derive(Clone, Debug)]
pub struct NewTurn<'a> {
    pub id: &'a str,
    pub session_id: &'a str,
    pub task_id: &'a str,
    pub started_at: &'a str,
    pub created_at: &'a str,
    pub completed_at: Option<&'a str>,
    pub metadata: Value,
}

/// A new message.
#[derive(Clone, Debug)]
pub struct NewMessage<'a> {
    pub id: &'a str,
    pub session_id: &'a str,
    pub task_id: &'a str,
    pub turn_id: Option<&'a str>,
    pub author_type: &'a str,
    pub message_type: &'a str,
    pub content: &'a str,
    pub metadata: Value,
    pub created_at: &'a str,
}

/// A session state change, applied by compare-and-set on the session's version.
#[derive(Clone, Debug)]
pub struct StateChange<'a> {
    pub state: &'a str,
    pub updated_at: &'a str,
    /// The new `completed_at` (`None` clears it).
    pub completed_at: Option<&'a str>,
    pub reason: Option<&'a str>,
}

/// A session row as a state change wrote it, with its task's workspace id
/// ([`Storage::cas_session_state_returning`]).
#[derive(Clone, Debug)]
pub struct ChangedSession {
    pub session: SessionRow,
    pub workspace_id: String,
}

const INTENT_COLUMNS: &str = "pending_id, session_id, turn_id, message_ids, prior_state, \
                              response_kind, response, handoff, created_at, updated_at";
const SESSION_COLUMNS: &str = "id, task_id, state, agent_profile_id, is_primary, started_at, \
                               updated_at, completed_at, state_reason, version";
const TURN_COLUMNS: &str =
    "id, session_id, task_id, started_at, completed_at, created_at, updated_at, metadata";
const MESSAGE_COLUMNS: &str = "id, seq, session_id, task_id, turn_id, author_type, message_type, \
                               content, metadata, created_at, updated_at, version";

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

/// One session row, on a given connection (inside a snapshot transaction).
pub(crate) async fn session_on(conn: &mut Conn, id: &str) -> Result<SessionRow> {
    let row = query(format!(
        "SELECT {SESSION_COLUMNS} FROM sessions WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    match row {
        Some(row) => SessionRow::read(&row),
        None => Err(ServerError::NotFound {
            what: "session",
            id: id.to_owned(),
        }),
    }
}

/// The turns of a session (storage order; the rules rank them).
pub(crate) async fn turns_on(conn: &mut Conn, session_id: &str) -> Result<Vec<TurnRow>> {
    let rows = query(format!(
        "SELECT {TURN_COLUMNS} FROM turns WHERE session_id = $1 ORDER BY id"
    ))
    .bind(session_id)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter().map(TurnRow::read).collect()
}

/// The messages of a session in insertion order. Unfiltered: any message may be the evidence
/// that publishes a reservation.
pub(crate) async fn messages_on(conn: &mut Conn, session_id: &str) -> Result<Vec<MessageRow>> {
    let rows = query(format!(
        "SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 ORDER BY seq"
    ))
    .bind(session_id)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter().map(MessageRow::read).collect()
}

/// The column `referenced` of a turn query on session `$1`: 1 when one of the session's messages
/// references the turn (one index probe per turn).
const REFERENCED: &str = "CAST(CASE WHEN EXISTS (SELECT 1 FROM messages m \
                          WHERE m.session_id = $1 AND m.turn_id = turns.id) THEN 1 ELSE 0 END \
                          AS BIGINT) AS referenced";

/// A turn row with [`REFERENCED`]: the turn, and whether a message references it (by the
/// decoder's reading of `turn_id`).
fn read_referenced(row: &impl Columns) -> Result<(TurnRow, bool)> {
    let turn = TurnRow::read(row)?;
    let flag: i64 = col(row, "turns", "referenced")?;
    let referenced = to_bool(flag) && MessageMeaning::turn_id_of(Some(&turn.id)).is_some();
    Ok((turn, referenced))
}

/// Turn rows with [`REFERENCED`]: the turns in row order, and the ids of the referenced ones,
/// sorted.
fn read_all_referenced(rows: &[Row]) -> Result<(Vec<TurnRow>, Vec<String>)> {
    let mut turns = Vec::with_capacity(rows.len());
    let mut referenced = Vec::new();
    for row in rows {
        let (turn, is_referenced) = read_referenced(row)?;
        if is_referenced {
            referenced.push(turn.id.clone());
        }
        turns.push(turn);
    }
    referenced.sort_unstable();
    referenced.dedup();
    Ok((turns, referenced))
}

/// The turns of a session (storage order, as [`turns_on`]) with the ids of those that at least
/// one of its messages references (by the decoder's reading of `turn_id`), sorted: the
/// `is_referenced` of the turn rule without reading the messages themselves (one index probe
/// per turn), in one statement.
pub(crate) async fn turns_referenced_on(
    conn: &mut Conn,
    session_id: &str,
) -> Result<(Vec<TurnRow>, Vec<String>)> {
    let rows = query(format!(
        "SELECT {TURN_COLUMNS}, {REFERENCED} FROM turns WHERE session_id = $1 ORDER BY id"
    ))
    .bind(session_id)
    .fetch_all(&mut *conn)
    .await?;
    read_all_referenced(&rows)
}

/// The order keys of a turn (migration 6): its `started_at` and `created_at` packed into integers
/// in the rules' timestamp order ([`Timestamp::packed`]), both `None` unless both pack.
fn turn_keys(started_at: &str, created_at: &str) -> (Option<i64>, Option<i64>) {
    let key = |text: &str| {
        Timestamp::parse(text)
            .packed()
            .and_then(|k| i64::try_from(k).ok())
    };
    match (key(started_at), key(created_at)) {
        (Some(s), Some(c)) => (Some(s), Some(c)),
        _ => (None, None),
    }
}

/// Connects to `url` ([`Db::connect`]: the migrations run) and fills the order keys of turns
/// written before migration 6 ([`fill_turn_keys`]): a database as the services expect it. The
/// server's startup ([`http::connect`](crate::http::connect)) opens its database with it.
pub async fn connect(url: &str) -> Result<Db> {
    let db = Db::connect(url).await?;
    fill_turn_keys(&db).await?;
    Ok(db)
}

/// Fills the order keys of turns written before migration 6 (at startup, [`connect`]; a turn
/// whose timestamps have no packed form keeps none, and its session is read whole).
pub(crate) async fn fill_turn_keys(db: &Db) -> Result<()> {
    let rows = query("SELECT id, started_at, created_at FROM turns WHERE started_key IS NULL")
        .fetch_all(db)
        .await?;
    if rows.is_empty() {
        return Ok(());
    }
    // One transaction: one commit for the whole backfill, not one per turn.
    let mut tx = db.begin().await?;
    let mut filled = 0usize;
    for row in &rows {
        let id: String = col(row, "turns", "id")?;
        let started: String = col(row, "turns", "started_at")?;
        let created: String = col(row, "turns", "created_at")?;
        if let (Some(s), Some(c)) = turn_keys(&started, &created) {
            query("UPDATE turns SET started_key = $1, created_key = $2 WHERE id = $3")
                .bind(s)
                .bind(c)
                .bind(id.as_str())
                .execute(&mut tx)
                .await?;
            filled = filled.saturating_add(1);
        }
    }
    tx.commit().await?;
    if filled > 0 {
        tracing::info!(filled, "turn order keys filled");
    }
    Ok(())
}

/// Completed turns [`turns_window_on`] reads beyond the open ones.
pub(crate) const TURN_WINDOW: i64 = 4;

/// A window of a session's turns for [`rules::turn::window_decides`]: every open turn and the
/// [`TURN_WINDOW`] completed turns greatest by order keys, with the ids of those that messages
/// reference (sorted) and whether no other completed turn exists. `None` when the window cannot
/// stand for the session: it has a turn without order keys, or the window is empty.
///
/// [`rules::turn::window_decides`]: task_projection::rules::turn::window_decides
pub(crate) async fn turns_window_on(
    conn: &mut Conn,
    session_id: &str,
) -> Result<Option<(Vec<TurnRow>, Vec<String>, bool)>> {
    let columns = format!(
        "{TURN_COLUMNS}, {REFERENCED}, CAST(CASE WHEN EXISTS (SELECT 1 FROM turns u \
         WHERE u.session_id = $1 AND u.started_key IS NULL) THEN 1 ELSE 0 END AS BIGINT) \
         AS unkeyed"
    );
    let rows = query(format!(
        "SELECT * FROM (SELECT {columns} FROM turns WHERE session_id = $1 \
         AND completed_at IS NULL) AS open_turns UNION ALL SELECT * FROM (SELECT {columns} \
         FROM turns WHERE session_id = $1 AND completed_at IS NOT NULL \
         ORDER BY started_key DESC, created_key DESC LIMIT $2) AS recent_turns"
    ))
    .bind(session_id)
    .bind(TURN_WINDOW)
    .fetch_all(&mut *conn)
    .await?;
    // `unkeyed` is the session's, the same on every row.
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    if to_bool(col(first, "turns", "unkeyed")?) {
        return Ok(None);
    }
    let (turns, referenced) = read_all_referenced(&rows)?;
    let exhausted = window_exhausted(&turns);
    Ok(Some((turns, referenced, exhausted)))
}

/// Whether a window read by [`turns_window_on`]'s bound leaves no completed turn of the session
/// out: it holds fewer completed turns than [`TURN_WINDOW`].
fn window_exhausted(turns: &[TurnRow]) -> bool {
    let completed = turns.iter().filter(|t| !t.is_open()).count();
    i64::try_from(completed).is_ok_and(|n| n < TURN_WINDOW)
}

/// What [`pending_window`] read of one session, in one statement.
#[derive(Clone, Debug)]
pub(crate) struct PendingWindow {
    pub session: SessionRow,
    /// The window of [`turns_window_on`] with its request rows; `None` when a turn of the session
    /// has no order keys (it is then read whole).
    pub window: Option<TurnWindow>,
}

/// A window of turns ([`turns_window_on`]) and the request rows of its turns.
#[derive(Clone, Debug)]
pub(crate) struct TurnWindow {
    pub turns: Vec<TurnRow>,
    /// The ids of the window's turns that messages reference, sorted.
    pub referenced: Vec<String>,
    /// The messages of the window's turns whose `type` is one of [`REQUEST_TYPES`], in insertion
    /// order (`seq`).
    pub requests: Vec<MessageRow>,
}

impl TurnWindow {
    /// No completed turn of the session is outside the window.
    pub fn exhausted(&self) -> bool {
        window_exhausted(&self.turns)
    }
}

/// `columns` (a column list) qualified with `table`.
fn qualified(table: &str, columns: &str) -> String {
    columns
        .split(',')
        .map(|c| format!("{table}.{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The joined window read of [`pending_window`] and [`task_windows`] (PostgreSQL: `LATERAL`): one
/// row per (session, window turn, request row of it), in no particular order, from `from` (which
/// names the sessions `s`; `extra` adds columns before theirs), filtered by `filter`. The parts
/// are separated by marker columns (`session_part`, `turn_part`, `message_part`) because their
/// column names repeat.
/// Every part is an index probe whatever the planner's statistics: the window's turns through the
/// partial and ordered indexes of migrations 6 and 7, and, for each of them, whether a message
/// references it and its request rows through `messages_session_turn` (lateral subqueries with a
/// `LIMIT` / `OFFSET 0` run per turn, not hashed over the session's messages).
fn window_sql(extra: &str, from: &str, filter: &str) -> String {
    format!(
        "SELECT {extra}1 AS session_part, {session}, CAST(CASE WHEN EXISTS (SELECT 1 FROM turns u \
         WHERE u.session_id = s.id AND u.started_key IS NULL) THEN 1 ELSE 0 END AS BIGINT) \
         AS unkeyed, 1 AS turn_part, w.*, \
         CAST(CASE WHEN r.hit IS NULL THEN 0 ELSE 1 END AS BIGINT) AS referenced, \
         1 AS message_part, m.* \
         FROM {from} \
         LEFT JOIN LATERAL (SELECT * FROM (SELECT {TURN_COLUMNS} FROM turns \
         WHERE session_id = s.id AND completed_at IS NULL OFFSET 0) AS open_turns \
         UNION ALL SELECT * FROM (SELECT {TURN_COLUMNS} FROM turns \
         WHERE session_id = s.id AND completed_at IS NOT NULL \
         ORDER BY started_key DESC, created_key DESC LIMIT $2) AS recent_turns) AS w ON TRUE \
         LEFT JOIN LATERAL (SELECT 1 AS hit FROM messages \
         WHERE session_id = s.id AND turn_id = w.id LIMIT 1) AS r ON TRUE \
         LEFT JOIN LATERAL (SELECT {MESSAGE_COLUMNS} FROM messages \
         WHERE session_id = s.id AND turn_id = w.id AND message_type IN ($3, $4) OFFSET 0) AS m \
         ON TRUE {filter}",
        session = qualified("s", SESSION_COLUMNS),
    )
}

/// [`pending_window`]'s statement: session `$1`.
static PENDING_WINDOW_SQL: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| window_sql("", "sessions s", "WHERE s.id = $1"));

/// [`task_windows`]'s statement: the summary of task `$1` and every session of it (one row with
/// NULL sessions when it has none).
static TASK_WINDOWS_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    window_sql(
        "1 AS summary_part, ts.task_id, ts.revision, ts.summary, ",
        "(SELECT CAST($1 AS TEXT) AS id) AS t \
         LEFT JOIN task_status_summaries ts ON ts.task_id = t.id \
         LEFT JOIN sessions s ON s.task_id = t.id",
        "",
    )
});

/// Reads the rows of a [`window_sql`] statement: each session's [`PendingWindow`], in order of
/// first appearance.
fn read_windows(rows: &[Row]) -> Result<Vec<PendingWindow>> {
    let mut windows: Vec<PendingWindow> = Vec::new();
    for row in rows {
        let session = section(row, "session_part")?;
        let session_id: Option<String> = col(&session, "sessions", "id")?;
        let Some(session_id) = session_id else {
            // A task without sessions (the one row of the left join).
            continue;
        };
        let index = match windows.iter().position(|w| w.session.id == session_id) {
            Some(index) => index,
            None => {
                let unkeyed = to_bool(col(&session, "sessions", "unkeyed")?);
                windows.push(PendingWindow {
                    session: SessionRow::read(&session)?,
                    window: (!unkeyed).then(|| TurnWindow {
                        turns: Vec::new(),
                        referenced: Vec::new(),
                        requests: Vec::new(),
                    }),
                });
                windows.len().saturating_sub(1)
            }
        };
        let Some(window) = windows.get_mut(index).and_then(|w| w.window.as_mut()) else {
            continue;
        };
        let turn = section(row, "turn_part")?;
        let turn_id: Option<String> = col(&turn, "turns", "id")?;
        let Some(turn_id) = turn_id else {
            // The session has no turn (the one row of its left join).
            continue;
        };
        // A turn repeats once per request row of it. (No `ORDER BY`: the rules order the turns.)
        if !window.turns.iter().any(|t| t.id == turn_id) {
            let (turn, is_referenced) = read_referenced(&turn)?;
            if is_referenced {
                window.referenced.push(turn.id.clone());
            }
            window.turns.push(turn);
        }
        let message = section(row, "message_part")?;
        let message_id: Option<String> = col(&message, "messages", "id")?;
        if message_id.is_some() {
            window.requests.push(MessageRow::read(&message)?);
        }
    }
    for window in windows.iter_mut().filter_map(|w| w.window.as_mut()) {
        window.referenced.sort_unstable();
        window.referenced.dedup();
        window.requests.sort_by_key(|m| m.seq);
    }
    Ok(windows)
}

/// The part of a joined row after its marker column `marker`.
fn section<'r>(row: &'r Row, marker: &'static str) -> Result<super::db::Section<'r>> {
    row.section(marker)
        .map_err(|e| ServerError::corrupt("(joined row)", marker, e))
}

/// Runs a [`window_sql`] statement with `key` as `$1`.
async fn window_rows(on: On<'_>, sql: &str, key: &str) -> Result<Vec<Row>> {
    let [clarification, permission] = REQUEST_TYPES;
    query(sql)
        .bind(key)
        .bind(TURN_WINDOW)
        .bind(clarification)
        .bind(permission)
        .fetch_all(on)
        .await
}

/// The session row, the window of [`turns_window_on`] and the request rows of the window's turns
/// ([`turn_requests_on`] of each), in **one statement**: one snapshot without a transaction, one
/// round trip instead of five. PostgreSQL only (SQLite has no `LATERAL`, and there a statement is
/// a call: three narrow reads cost less than the joined rows). `None` when the session does not
/// exist.
pub(crate) async fn pending_window(
    on: impl Into<On<'_>>,
    session_id: &str,
) -> Result<Option<PendingWindow>> {
    let rows = window_rows(on.into(), &PENDING_WINDOW_SQL, session_id).await?;
    Ok(read_windows(&rows)?.into_iter().next())
}

/// What [`task_windows`] read of one task, in one statement.
#[derive(Clone, Debug)]
pub(crate) struct TaskWindows {
    pub summary: Option<SummaryRow>,
    /// Every session of the task, as [`pending_window`] reads one.
    pub sessions: Vec<PendingWindow>,
}

/// The task's persisted summary and every session of it as [`pending_window`] reads one, in
/// **one statement** (one snapshot: what a summary repair compares). PostgreSQL only.
pub(crate) async fn task_windows(db: &Db, task_id: &str) -> Result<TaskWindows> {
    let rows = window_rows(On::Db(db), &TASK_WINDOWS_SQL, task_id).await?;
    let mut summary = None;
    if let Some(first) = rows.first() {
        let part = section(first, "summary_part")?;
        // NULL when the task has no summary (the left join).
        let revision: Option<i64> = col(&part, "task_status_summaries", "revision")?;
        if revision.is_some() {
            summary = Some(SummaryRow::read(&part)?);
        }
    }
    Ok(TaskWindows {
        summary,
        sessions: read_windows(&rows)?,
    })
}

/// One turn of a session with its referenced flag (a bundle's turn outside the window).
pub(crate) async fn turn_referenced_on(
    conn: &mut Conn,
    session_id: &str,
    turn_id: &str,
) -> Result<Option<(TurnRow, bool)>> {
    let row = query(format!(
        "SELECT {TURN_COLUMNS}, {REFERENCED} FROM turns WHERE session_id = $1 AND id = $2"
    ))
    .bind(session_id)
    .bind(turn_id)
    .fetch_optional(&mut *conn)
    .await?;
    row.as_ref().map(read_referenced).transpose()
}

/// The `type`s of the rows [`rules::pending::turn_pending_action`] counts (every other type is
/// [`MessageKind::Other`] to the rules): the prefilter of [`turn_requests_on`].
///
/// [`rules::pending::turn_pending_action`]: task_projection::rules::pending::turn_pending_action
pub(crate) const REQUEST_TYPES: [&str; 2] = ["clarification_request", "permission_request"];

/// The messages of one turn of a session whose `type` is one of [`REQUEST_TYPES`], in the order
/// of [`messages_on`] (`seq`, insertion order): the rows the pending rule reads of its current
/// turn.
pub(crate) async fn turn_requests_on(
    conn: &mut Conn,
    session_id: &str,
    turn_id: &str,
) -> Result<Vec<MessageRow>> {
    let [clarification, permission] = REQUEST_TYPES;
    // Ordered here, not by `ORDER BY seq`: without statistics SQLite would rather walk the
    // session's whole `(session_id, seq)` index in order than sort the turn's few request rows
    // it finds through `messages_session_turn`.
    let rows = query(format!(
        "SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 AND turn_id = $2 \
         AND message_type IN ($3, $4)"
    ))
    .bind(session_id)
    .bind(turn_id)
    .bind(clarification)
    .bind(permission)
    .fetch_all(&mut *conn)
    .await?;
    let mut messages = rows
        .iter()
        .map(MessageRow::read)
        .collect::<Result<Vec<MessageRow>>>()?;
    messages.sort_by_key(|m| m.seq);
    Ok(messages)
}

/// The messages of a session whose indexed `pending_id` (the decoder's reading of
/// `metadata.pending_id`, kept by every write of the metadata) is `pending_id`, in insertion
/// order: every row of that clarification bundle in the session, through the `pending_id` index.
pub(crate) async fn bundle_rows_on(
    conn: &mut Conn,
    session_id: &str,
    pending_id: &str,
) -> Result<Vec<MessageRow>> {
    let rows = query(format!(
        "SELECT {MESSAGE_COLUMNS} FROM messages WHERE pending_id = $1 AND session_id = $2 \
         ORDER BY seq"
    ))
    .bind(pending_id)
    .bind(session_id)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter().map(MessageRow::read).collect()
}

/// Compare-and-set of a message's metadata on its version, on a given connection.
pub(crate) async fn cas_message_metadata_on(
    conn: &mut Conn,
    row: &MessageRow,
    metadata: &Value,
    updated_at: &str,
) -> Result<Option<MessageRow>> {
    // The type is the row's as read: a message's type never changes, and the version check
    // makes this the row that was read.
    let written = query(format!(
        "UPDATE messages SET metadata = $1, pending_id = $2, updated_at = $3, \
         version = version + 1 WHERE id = $4 AND version = $5 RETURNING {MESSAGE_COLUMNS}"
    ))
    .bind(metadata.to_string())
    .bind(indexed_pending_id(&row.message_type, metadata))
    .bind(updated_at)
    .bind(row.id())
    .bind(row.version)
    .fetch_optional(&mut *conn)
    .await?;
    written.as_ref().map(MessageRow::read).transpose()
}

/// Inserts a delivery intent unless one exists for the bundle: `true` when this call claimed it.
pub(crate) async fn insert_intent_on(conn: &mut Conn, intent: &IntentRow) -> Result<bool> {
    let ids = serde_json::to_string(&intent.message_ids)
        .map_err(|e| ServerError::Invalid(e.to_string()))?;
    let done = query(
        "INSERT INTO delivery_intents (pending_id, session_id, turn_id, message_ids, prior_state, \
         response_kind, response, handoff, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (pending_id) DO NOTHING",
    )
    .bind(&intent.pending_id)
    .bind(&intent.session_id)
    .bind(&intent.turn_id)
    .bind(ids)
    .bind(&intent.prior_state)
    .bind(&intent.response_kind)
    .bind(intent.response.to_string())
    .bind(&intent.handoff)
    .bind(&intent.created_at)
    .bind(&intent.updated_at)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_prefilter_is_the_rules_request_kinds() {
        let kinds = REQUEST_TYPES.map(MessageKind::parse);
        assert_eq!(
            kinds,
            [
                MessageKind::ClarificationRequest,
                MessageKind::PermissionRequest
            ]
        );
    }

    #[tokio::test]
    async fn turns_written_without_order_keys_get_them_at_startup() {
        let path =
            std::env::temp_dir().join(format!("tp-keys-{}.db", uuid::Uuid::new_v4().simple()));
        let url = format!("sqlite:{}?mode=rwc", path.display());
        let db = connect(&url).await.unwrap();
        for sql in [
            "INSERT INTO tasks (id, workspace_id, archived, created_at, updated_at) \
             VALUES ('t', 'w', 0, 'x', 'x')",
            "INSERT INTO sessions (id, task_id, state, agent_profile_id, is_primary, started_at, \
             updated_at, version) VALUES ('s', 't', 'RUNNING', '', 1, 'x', 'x', 0)",
            // As a build before migration 6 wrote them: one packable, one not.
            "INSERT INTO turns (id, session_id, task_id, started_at, created_at, updated_at, \
             metadata) VALUES ('a', 's', 't', '2026-11-29T12:00:00Z', '2026-11-29T12:00:01Z', \
             'x', '{}'), ('b', 's', 't', 'yesterday', '2026-11-29T12:00:01Z', 'x', '{}')",
        ] {
            query(sql).execute(&db).await.unwrap();
        }
        drop(db);
        let db = connect(&url).await.unwrap();
        let keys: Vec<Option<i64>> = query_scalar("SELECT started_key FROM turns ORDER BY id")
            .fetch_all(&db)
            .await
            .unwrap();
        let packed = Timestamp::parse("2026-11-29T12:00:00Z")
            .packed()
            .and_then(|k| i64::try_from(k).ok());
        assert_eq!(keys, vec![packed, None]);
        assert!(packed.is_some());
        drop(db);
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
}
