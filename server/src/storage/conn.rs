//! Statements on a held connection ([`Conn`]), for the services that read or write several
//! things in one transaction: a session, its turns (with whether messages reference them), its
//! messages, a turn's requests, a bundle's rows, the compare-and-set of a message's metadata and
//! the insert of a delivery intent.

use serde_json::Value;

use task_projection::rules::model::MessageRecord;

use crate::db::{query, Conn};
use crate::error::{Result, ServerError};

use super::rows::{
    indexed_pending_id, read_all_referenced, read_referenced, IntentRow, MessageRow, SessionRow,
    TurnRow, MESSAGE_COLUMNS, REFERENCED, SESSION_COLUMNS, TURN_COLUMNS,
};

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
/// [`MessageKind::Other`](task_projection::rules::model::MessageKind::Other) to the rules): the prefilter of [`turn_requests_on`].
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
    use task_projection::rules::model::MessageKind;

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
}
