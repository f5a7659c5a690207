//! The rows of the tables as typed values (`TaskRow`, `SessionRow`, `TurnRow`, `MessageRow`,
//! `SummaryRow`, `IntentRow`, `StopIntentRow`), the inputs of the writes (`NewTask`, `NewSession`,
//! `NewTurn`, `NewMessage`, `StateChange`), the column lists the statements select, and the
//! readers the repository, the connection helpers and the window queries share. Rows implement
//! the rule views ([`TurnRecord`], [`MessageRecord`]).

use serde_json::{json, Value};

use task_projection::rules::model::{
    Message, MessageKind, MessageRecord, RequestStatus, SessionState, TurnFlags, TurnRecord,
};
use task_projection::rules::time::Timestamp;
use task_projection::wire::{self, Json, MessageMeaning, Path};

use crate::db::{col, Columns, Row};
use crate::error::{Result, ServerError};

pub(super) fn to_bool(value: i64) -> bool {
    value != 0
}

pub(super) fn from_bool(value: bool) -> i64 {
    i64::from(value)
}

pub(super) fn parse_json(table: &'static str, id: &str, text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| ServerError::corrupt(table, id, e))
}

/// `metadata.pending_id` as the wire decoder reads it (the lookup column `messages.pending_id`).
pub(super) fn indexed_pending_id(message_type: &str, metadata: &Value) -> Option<String> {
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
    pub(super) fn read(row: &impl Columns) -> Result<TaskRow> {
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
    pub(super) fn read(row: &impl Columns) -> Result<SessionRow> {
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
    pub(super) fn read(row: &impl Columns) -> Result<TurnRow> {
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
    pub(super) fn read(row: &impl Columns) -> Result<MessageRow> {
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
    pub(super) fn read(row: &impl Columns) -> Result<SummaryRow> {
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
    pub(super) fn read(row: &impl Columns) -> Result<IntentRow> {
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
/// ([`Storage::cas_session_state_returning`](super::Storage::cas_session_state_returning)).
#[derive(Clone, Debug)]
pub struct ChangedSession {
    pub session: SessionRow,
    pub workspace_id: String,
}

pub(super) const INTENT_COLUMNS: &str =
    "pending_id, session_id, turn_id, message_ids, prior_state, \
                              response_kind, response, handoff, created_at, updated_at";
pub(super) const SESSION_COLUMNS: &str =
    "id, task_id, state, agent_profile_id, is_primary, started_at, \
                               updated_at, completed_at, state_reason, version";
pub(super) const TURN_COLUMNS: &str =
    "id, session_id, task_id, started_at, completed_at, created_at, updated_at, metadata";
pub(super) const MESSAGE_COLUMNS: &str =
    "id, seq, session_id, task_id, turn_id, author_type, message_type, \
                               content, metadata, created_at, updated_at, version";

/// The column `referenced` of a turn query on session `$1`: 1 when one of the session's messages
/// references the turn (one index probe per turn).
pub(super) const REFERENCED: &str = "CAST(CASE WHEN EXISTS (SELECT 1 FROM messages m \
                          WHERE m.session_id = $1 AND m.turn_id = turns.id) THEN 1 ELSE 0 END \
                          AS BIGINT) AS referenced";

/// A turn row with [`REFERENCED`]: the turn, and whether a message references it (by the
/// decoder's reading of `turn_id`).
pub(super) fn read_referenced(row: &impl Columns) -> Result<(TurnRow, bool)> {
    let turn = TurnRow::read(row)?;
    let flag: i64 = col(row, "turns", "referenced")?;
    let referenced = to_bool(flag) && MessageMeaning::turn_id_of(Some(&turn.id)).is_some();
    Ok((turn, referenced))
}

/// Turn rows with [`REFERENCED`]: the turns in row order, and the ids of the referenced ones,
/// sorted.
pub(super) fn read_all_referenced(rows: &[Row]) -> Result<(Vec<TurnRow>, Vec<String>)> {
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

/// The order keys of a turn (migration 6): its `started_at` and `created_at` packed into integers
/// in the rules' timestamp order ([`Timestamp::packed`]), both `None` unless both pack.
pub(super) fn turn_keys(started_at: &str, created_at: &str) -> (Option<i64>, Option<i64>) {
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
