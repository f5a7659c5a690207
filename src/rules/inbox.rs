//! The reference server's "needs you" inbox (docs/server-api.md, "Needs-you inbox"): which
//! clarification bundles are rows, their order, the page (limit, cursor, truncation), and the
//! requester's dismiss / snooze sidecar at server time. Feature `server`.
//!
//! A row is a session's active clarification bundle exactly as the client discovers it (SPEC §3
//! with the SPEC §4 projection as its scope: [`session_bundle`]), so the inbox and the task page
//! never disagree. The server gathers every session of a workspace, calls these functions and
//! translates their answers to JSON.

use std::cmp::Ordering;

use super::clarification::{pending_bundle, Scope};
use super::model::{MessageRecord, SessionState, TurnRecord};
use super::pending::session_pending_action;
use super::time::Timestamp;
use super::turn::current_turn;

/// The page size when the query names none.
pub const DEFAULT_LIMIT: usize = 50;
/// The largest page: a larger `limit` is clamped to it.
pub const MAX_LIMIT: usize = 200;
/// The snooze when the write names no duration.
pub const DEFAULT_SNOOZE: &str = "4h";

/// The active bundle of one session (SPEC §3, scoped by the session's current turn and its
/// authoritative projection, SPEC §4): its `pending_id` and the indices of its pending members in
/// array order. `None` when the session has no active bundle, or when its request carries no
/// `pending_id` (a row the sidecar and the respond endpoint could not name).
pub fn session_bundle<'m, T: TurnRecord, M: MessageRecord>(
    state: Option<SessionState>,
    turns: &[T],
    messages: &'m [M],
) -> Option<(&'m str, Vec<usize>)> {
    let referenced = |id: &str| messages.iter().any(|m| m.turn_id() == Some(id));
    let (action, _) = session_pending_action(state, Some(turns), messages);
    let (current, _) = current_turn(Some(turns), state, referenced);
    let scope = Scope {
        current_turn: current.map(|i| turns.get(i).map_or("", TurnRecord::id)),
        pending_action: Some(action),
    };
    let members = pending_bundle(messages, Some(&scope));
    let first = messages.get(*members.first()?)?;
    Some((first.pending_id()?, members))
}

/// When a bundle was asked: the earliest `created_at` (timestamp order) of its members.
pub fn bundle_created_at<'m, M: MessageRecord>(
    messages: &'m [M],
    members: &[usize],
) -> Option<&'m Timestamp> {
    members
        .iter()
        .filter_map(|&i| messages.get(i))
        .map(MessageRecord::created_at)
        .min()
}

pub use super::workspace::{row_order, RowKey};

/// Why a query or a write is refused (400).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    MissingWorkspace,
    BadLimit,
    BadCursor,
    BadState,
    BadSnoozeDuration,
}

impl Problem {
    /// The message of the 400 answer.
    pub const fn message(self) -> &'static str {
        match self {
            Problem::MissingWorkspace => "workspace_id is required",
            Problem::BadLimit => "limit must be a positive integer",
            Problem::BadCursor => "cursor: malformed cursor",
            Problem::BadState => "state must be \"dismissed\" or \"snoozed\"",
            Problem::BadSnoozeDuration => "snooze_duration must be one of \"1h\", \"4h\", \"24h\"",
        }
    }
}

/// The workspace of a query: required, surrounding space trimmed.
pub fn workspace(raw: Option<&str>) -> Result<&str, Problem> {
    match raw.map(str::trim) {
        Some(id) if !id.is_empty() => Ok(id),
        _ => Err(Problem::MissingWorkspace),
    }
}

/// The page size: absent or empty (`limit=`, as the reference client reads it) is
/// [`DEFAULT_LIMIT`], a positive integer above [`MAX_LIMIT`] is clamped, anything else
/// (non-numeric, zero, negative) is refused.
pub fn limit(raw: Option<&str>) -> Result<usize, Problem> {
    let Some(raw) = raw.filter(|r| !r.is_empty()) else {
        return Ok(DEFAULT_LIMIT);
    };
    match raw.parse::<i64>() {
        Ok(n) if n > 0 => Ok(usize::try_from(n).map_or(MAX_LIMIT, |n| n.min(MAX_LIMIT))),
        _ => Err(Problem::BadLimit),
    }
}

/// The opaque cursor of a row: hex of `created_at|pending_id` (the position after that row).
pub fn encode_cursor(key: &RowKey) -> String {
    let raw = format!("{}|{}", key.created_at.text(), key.pending_id);
    raw.bytes().map(|b| format!("{b:02x}")).collect()
}

/// Reads a cursor [`encode_cursor`] wrote; refused when it is not hex of UTF-8
/// `<timestamp>|<pending_id>` with a conforming timestamp and a non-empty id.
pub fn decode_cursor(raw: &str) -> Result<RowKey, Problem> {
    if raw.is_empty() || raw.len() % 2 != 0 || raw.len() > 4096 {
        return Err(Problem::BadCursor);
    }
    let bytes: Option<Vec<u8>> = raw
        .as_bytes()
        .chunks(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect();
    let text = bytes
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or(Problem::BadCursor)?;
    let (at, pending_id) = text.split_once('|').ok_or(Problem::BadCursor)?;
    let created_at = Timestamp::parse(at);
    if pending_id.is_empty() || !is_instant(&created_at) {
        return Err(Problem::BadCursor);
    }
    Ok(RowKey {
        created_at,
        pending_id: pending_id.to_owned(),
    })
}

fn is_instant(t: &Timestamp) -> bool {
    matches!(t, Timestamp::Instant { .. })
}

/// A requester's sidecar entry for one bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sidecar {
    Dismissed,
    /// Hidden until this server time.
    Snoozed {
        until: Timestamp,
    },
}

/// A sidecar write: `state` and, for a snooze, `snooze_duration` (default
/// [`DEFAULT_SNOOZE`]); the snooze length in seconds, `None` for a dismissal.
pub fn sidecar_write(state: &str, duration: Option<&str>) -> Result<Option<i64>, Problem> {
    match state {
        "dismissed" => Ok(None),
        "snoozed" => match duration.unwrap_or(DEFAULT_SNOOZE) {
            "1h" => Ok(Some(3_600)),
            "4h" => Ok(Some(4 * 3_600)),
            "24h" => Ok(Some(24 * 3_600)),
            _ => Err(Problem::BadSnoozeDuration),
        },
        _ => Err(Problem::BadState),
    }
}

/// Whether the entry hides its bundle at server time `now`: a dismissal always, a snooze until
/// it expires (hidden while `now < until`; at `until` the row is back).
pub fn hides(entry: &Sidecar, now: &Timestamp) -> bool {
    match entry {
        Sidecar::Dismissed => true,
        Sidecar::Snoozed { until } => now < until,
    }
}

/// One page of the inbox or of the hidden list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    /// Indices into the candidates, in inbox order.
    pub rows: Vec<usize>,
    /// How many live bundles the requester's sidecar hides now (the whole workspace).
    pub hidden_count: usize,
    /// The earliest `until` among the snoozes that hide a live bundle now.
    pub next_snooze_expiry: Option<Timestamp>,
    /// Present exactly when more rows follow: the cursor after the last row.
    pub next_cursor: Option<String>,
}

/// Which list a page is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum List {
    /// The rows the sidecar does not hide.
    Visible,
    /// The rows it hides.
    Hidden,
}

/// The page of `candidates` (any order; `sidecar(i)` is the requester's entry for candidate `i`)
/// at server time `now`: the candidates of `list` in [`row_order`] after `cursor`, at most
/// `limit`, with the hidden count and next snooze expiry over every candidate.
pub fn page<'s>(
    candidates: &[RowKey],
    sidecar: impl Fn(usize) -> Option<&'s Sidecar>,
    now: &Timestamp,
    list: List,
    cursor: Option<&RowKey>,
    limit: usize,
) -> Page {
    let mut hidden_count: usize = 0;
    let mut next_snooze_expiry: Option<&Timestamp> = None;
    let mut selected: Vec<(usize, &RowKey)> = Vec::new();
    for (i, key) in candidates.iter().enumerate() {
        let entry = sidecar(i);
        let hidden = entry.is_some_and(|e| hides(e, now));
        if hidden {
            hidden_count = hidden_count.saturating_add(1);
            if let Some(Sidecar::Snoozed { until }) = entry {
                if next_snooze_expiry.is_none_or(|held| until < held) {
                    next_snooze_expiry = Some(until);
                }
            }
        }
        let after = cursor.is_none_or(|c| row_order(key, c) == Ordering::Greater);
        if after && hidden == (list == List::Hidden) {
            selected.push((i, key));
        }
    }
    selected.sort_by(|a, b| row_order(a.1, b.1));
    let truncated = selected.len() > limit;
    selected.truncate(limit);
    let next_cursor = match selected.last() {
        Some((_, last)) if truncated => Some(encode_cursor(last)),
        _ => None,
    };
    Page {
        rows: selected.into_iter().map(|(i, _)| i).collect(),
        hidden_count,
        next_snooze_expiry: next_snooze_expiry.cloned(),
        next_cursor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::model::{Message, MessageKind, RequestStatus as Status, RowFlags, Turn};

    fn key(at: &str, id: &str) -> RowKey {
        RowKey {
            created_at: Timestamp::parse(at),
            pending_id: id.to_owned(),
        }
    }

    fn ts(s: &str) -> Timestamp {
        Timestamp::parse(s)
    }

    #[test]
    fn the_query_is_validated_as_the_reference_client_validates_it() {
        assert_eq!(workspace(None), Err(Problem::MissingWorkspace));
        assert_eq!(workspace(Some("  ")), Err(Problem::MissingWorkspace));
        assert_eq!(workspace(Some(" ws ")), Ok("ws"));
        assert_eq!(limit(None), Ok(50));
        assert_eq!(limit(Some("")), Ok(50));
        assert_eq!(limit(Some("7")), Ok(7));
        assert_eq!(limit(Some("201")), Ok(200));
        assert_eq!(limit(Some("99999999999999999999")), Err(Problem::BadLimit));
        for bad in ["0", "-1", "abc", "1.5", " 3", "+"] {
            assert_eq!(limit(Some(bad)), Err(Problem::BadLimit), "{bad:?}");
        }
    }

    #[test]
    fn a_cursor_round_trips_and_garbage_is_refused() {
        let k = key("2026-11-29T10:00:00.5Z", "p|1");
        assert_eq!(decode_cursor(&encode_cursor(&k)), Ok(k));
        for bad in ["", "zz", "abc", "+1", "7c70", "6e6f7069706521", "ff"] {
            assert_eq!(decode_cursor(bad), Err(Problem::BadCursor), "{bad:?}");
        }
        // a timestamp that does not conform
        let raw: String = "yesterday|p".bytes().map(|b| format!("{b:02x}")).collect();
        assert_eq!(decode_cursor(&raw), Err(Problem::BadCursor));
    }

    #[test]
    fn sidecar_writes_and_snooze_expiry() {
        assert_eq!(sidecar_write("dismissed", None), Ok(None));
        assert_eq!(sidecar_write("dismissed", Some("2h")), Ok(None));
        assert_eq!(sidecar_write("snoozed", None), Ok(Some(14_400)));
        assert_eq!(sidecar_write("snoozed", Some("1h")), Ok(Some(3_600)));
        assert_eq!(sidecar_write("snoozed", Some("24h")), Ok(Some(86_400)));
        assert_eq!(
            sidecar_write("snoozed", Some("2h")),
            Err(Problem::BadSnoozeDuration)
        );
        assert_eq!(sidecar_write("gone", None), Err(Problem::BadState));
        let snooze = Sidecar::Snoozed {
            until: ts("2026-11-29T12:00:00Z"),
        };
        assert!(hides(&snooze, &ts("2026-11-29T11:59:59.999Z")));
        assert!(!hides(&snooze, &ts("2026-11-29T12:00:00Z")));
        assert!(hides(&Sidecar::Dismissed, &ts("2099-01-01T00:00:00Z")));
    }

    #[test]
    fn pages_order_truncate_and_count_hidden() {
        let c = vec![
            key("2026-11-29T10:02:00Z", "b"),
            key("2026-11-29T10:01:00Z", "z"),
            key("2026-11-29T10:02:00Z", "a"),
            key("2026-11-29T10:03:00Z", "d"),
        ];
        let dismissed = Sidecar::Dismissed;
        let snoozed = Sidecar::Snoozed {
            until: ts("2026-11-29T13:00:00Z"),
        };
        let sidecar = |i: usize| match i {
            3 => Some(&dismissed),
            0 => Some(&snoozed),
            _ => None,
        };
        let now = ts("2026-11-29T12:00:00Z");
        let p = page(&c, sidecar, &now, List::Visible, None, 50);
        assert_eq!(p.rows, vec![1, 2]);
        assert_eq!(p.hidden_count, 2);
        assert_eq!(p.next_snooze_expiry, Some(ts("2026-11-29T13:00:00Z")));
        assert_eq!(p.next_cursor, None);
        let first = page(&c, sidecar, &now, List::Visible, None, 1);
        assert_eq!(first.rows, vec![1]);
        let cursor = decode_cursor(first.next_cursor.as_deref().unwrap()).unwrap();
        let second = page(&c, sidecar, &now, List::Visible, Some(&cursor), 1);
        assert_eq!((second.rows, second.next_cursor), (vec![2], None));
        let hidden = page(&c, sidecar, &now, List::Hidden, None, 50);
        assert_eq!(hidden.rows, vec![0, 3]);
        // the snooze expired: the row is back, nothing is hidden by it
        let later = ts("2026-11-29T13:00:00Z");
        let p = page(&c, sidecar, &later, List::Visible, None, 50);
        assert_eq!((p.rows, p.hidden_count), (vec![1, 2, 0], 1));
        assert_eq!(p.next_snooze_expiry, None);
    }

    fn turn(id: &str, started: &str, open: bool) -> Turn {
        Turn {
            id: id.to_owned(),
            completed: !open,
            started_at: ts(started),
            created_at: ts(started),
            ..Turn::default()
        }
    }

    fn question(id: &str, turn: &str, pending: &str, at: &str, status: Status) -> Message {
        Message {
            id: id.to_owned(),
            turn_id: Some(turn.into()),
            kind: MessageKind::ClarificationRequest,
            status,
            pending_id: Some(pending.into()),
            question_total: None,
            created_at: ts(at),
            updated_at: None,
            flags: RowFlags::default(),
        }
    }

    #[test]
    fn a_row_is_the_current_turns_bundle_as_the_client_discovers_it() {
        let turns = vec![
            turn("t1", "2026-11-29T10:00:00Z", false),
            turn("t2", "2026-11-29T10:05:00Z", true),
        ];
        let mut messages = vec![
            question("q0", "t1", "old", "2026-11-29T10:01:00Z", Status::Pending),
            question("q1", "t2", "p2", "2026-11-29T10:06:00Z", Status::Pending),
            question("q2", "t2", "p2", "2026-11-29T10:05:30Z", Status::Pending),
        ];
        let running = Some(SessionState::Running);
        let (id, members) = session_bundle(running, &turns, &messages).unwrap();
        assert_eq!((id, members.clone()), ("p2", vec![1, 2]));
        assert_eq!(
            bundle_created_at(&messages, &members),
            Some(&ts("2026-11-29T10:05:30Z"))
        );
        // terminal: no row; answered: no row
        assert_eq!(
            session_bundle(Some(SessionState::Completed), &turns, &messages),
            None
        );
        messages[1].status = Status::Answered;
        messages[2].status = Status::Answered;
        assert_eq!(session_bundle(running, &turns, &messages), None);
        // a request without a pending_id is not a row
        let mut bare = question("q3", "t2", "x", "2026-11-29T10:07:00Z", Status::Pending);
        bare.pending_id = None;
        assert_eq!(session_bundle(running, &turns, &[bare]), None);
    }
}
