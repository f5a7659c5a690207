//! The window queries: a session's current-turn window (its open turns and the most recent
//! completed ones, [`TURN_WINDOW`]), and in one statement a session's or a whole task's pending
//! windows (the session, its window of turns and their requests; a task's summary too), built by
//! one SQL builder for both.

use task_projection::rules::model::TurnRecord;

use crate::db::{col, query, Conn, Db, On, Row};
use crate::error::{Result, ServerError};

use super::conn::REQUEST_TYPES;
use super::rows::{
    read_all_referenced, read_referenced, to_bool, MessageRow, SessionRow, SummaryRow, TurnRow,
    MESSAGE_COLUMNS, REFERENCED, SESSION_COLUMNS, TURN_COLUMNS,
};

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
fn section<'r>(row: &'r Row, marker: &'static str) -> Result<crate::db::Section<'r>> {
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
/// ([`turn_requests_on`](super::conn::turn_requests_on) of each), in **one statement**: one snapshot without a transaction, one
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
