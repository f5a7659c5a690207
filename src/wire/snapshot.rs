//! Decoding a store snapshot (SPEC §12, docs/snapshot-format.md): untrusted input like any
//! other. The whole snapshot is decoded and checked before a store is built from it, so a bad
//! one is a typed error naming its field, and nothing is applied. An unknown `format` or
//! `version` is refused first (`unsupported_version`).

use crate::error::{WireError, WireErrorKind};
use crate::rules::model::{Message, PendingAction, Revision, RowFlags, SessionState, Turn};
use crate::rules::time::Timestamp;
use crate::store::rejections::{Input, Rejection, Rev};
use crate::store::snapshot::{
    kind_of_code, status_of_code, turn_flags, SessionSnapshot, SnapshotInput, TaskSnapshot,
    DISPATCH_ATTEMPTED, DISPATCH_PENDING, FORMAT, LIFECYCLE_ONLY, VERSION,
};
use crate::store::{Reason, Settled};

use super::decode::{
    self, array, invalid_type, object, optional_string, optional_text, optional_timestamp, string,
    text,
};
use super::{Kind, Path, Wire};

/// How many elements any one list of a snapshot may hold (sessions, messages of a session, ...):
/// the boundary's own bound on an array (`js/read.js` `MAX_ELEMENTS`).
pub const MAX_ELEMENTS: usize = 1 << 24;

// Cold and not inlined: one copy of building an error, not one per place that refuses.
#[cold]
#[inline(never)]
pub(super) fn invalid(path: &Path<'_>, problem: &str) -> WireError {
    WireError::from(WireErrorKind::InvalidValue {
        field: path.text(),
        problem: problem.into(),
    })
}

/// An array's length, bounded.
fn list<W: Wire>(value: &W, path: &Path<'_>) -> Result<usize, WireError> {
    let len = array(value, path)?;
    if len > MAX_ELEMENTS {
        return Err(invalid(
            path,
            &[
                "more than ",
                &crate::text::decimal(MAX_ELEMENTS as u64),
                " elements",
            ]
            .concat(),
        ));
    }
    Ok(len)
}

/// Each element of a list through `f`, into a vector sized once.
fn each<W: Wire, T>(
    value: &W,
    path: &Path<'_>,
    f: &dyn Fn(&W, &Path<'_>) -> Result<T, WireError>,
) -> Result<Vec<T>, WireError> {
    let len = list(value, path)?;
    let mut out = Vec::with_capacity(len);
    elements(value, path, len, &mut |item, item_path| {
        out.push(f(item, item_path)?);
        Ok(())
    })?;
    Ok(out)
}

/// The loop of [`each`], `dyn`: one copy for every element kind.
#[inline(never)]
fn elements<W: Wire>(
    value: &W,
    path: &Path<'_>,
    len: usize,
    f: &mut dyn FnMut(&W, &Path<'_>) -> Result<(), WireError>,
) -> Result<(), WireError> {
    for i in 0..len {
        f(&value.at(i), &path.index(i))?;
    }
    Ok(())
}

/// `true` or `false` (a snapshot spells its flags exactly).
fn exact_bool<W: Wire>(value: &W, path: &Path<'_>) -> Result<bool, WireError> {
    value
        .boolean()
        .ok_or_else(|| invalid_type(value, path, "a boolean"))
}

fn timestamp<W: Wire>(value: &W, path: &Path<'_>) -> Result<Timestamp, WireError> {
    Ok(Timestamp::parse(text(value, path)?.as_ref()))
}

/// A sequence: a number, or (beyond 2^53 − 1) its decimal text.
fn sequence<W: Wire>(value: &W, path: &Path<'_>) -> Result<u64, WireError> {
    match value.string() {
        Some(digits) => {
            let digits = digits.as_ref();
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| digits.parse::<u64>().ok())
                .flatten()
        }
        None => value.unsigned(),
    }
    .ok_or_else(|| invalid(path, "expected a non-negative integer"))
}

/// A revision `{epoch, sequence}`, or `None` for `null`.
fn revision<W: Wire>(value: &W, path: &Path<'_>) -> Result<Option<Revision>, WireError> {
    if value.is_absent() {
        return Ok(None);
    }
    object(value, path)?;
    Ok(Some(Revision {
        epoch: string(&value.get("epoch"), &path.key("epoch"))?,
        sequence: sequence(&value.get("sequence"), &path.key("sequence"))?,
    }))
}

/// A revision in a row: items `at` (epoch, or `null`) and `at + 1` (sequence, or `null`).
/// `Ok(None)` for `null, null`; `Err` unless both or neither are there. A summary's revision
/// (a rejection's) has a `null` epoch: `(None, Some(n))` comes back as `Err` here, see
/// [`rev`].
fn row_revision<W: Wire>(
    row: &W,
    path: &Path<'_>,
    at: usize,
) -> Result<Option<Revision>, WireError> {
    let next = at.saturating_add(1);
    let (epoch, seq) = (row.at(at), row.at(next));
    if epoch.is_null() && seq.is_null() {
        return Ok(None);
    }
    Ok(Some(Revision {
        epoch: string(&epoch, &path.index(at))?,
        sequence: sequence(&seq, &path.index(next))?,
    }))
}

/// A rejection's revision: a pending revision, a summary's (`null` epoch), or none.
fn rev<W: Wire>(row: &W, path: &Path<'_>, at: usize) -> Result<Option<Rev>, WireError> {
    let next = at.saturating_add(1);
    if row.at(at).is_null() && !row.at(next).is_null() {
        return Ok(Some(Rev::Summary(sequence(
            &row.at(next),
            &path.index(next),
        )?)));
    }
    Ok(row_revision(row, path, at)?.map(Rev::Pending))
}

/// `"clarification"`, `"permission"` or `null` (present: a snapshot writes the key).
fn action<W: Wire>(value: &W, path: &Path<'_>) -> Result<Option<PendingAction>, WireError> {
    if value.is_undefined() {
        return Err(invalid_type(
            value,
            path,
            "\"clarification\", \"permission\" or null",
        ));
    }
    Ok(decode::pending_action(value, path)?.flatten())
}

fn code<W: Wire>(value: &W, path: &Path<'_>) -> Result<u64, WireError> {
    value
        .unsigned()
        .filter(|_| value.kind() == Kind::Number)
        .ok_or_else(|| invalid_type(value, path, "an integer code"))
}

fn state<W: Wire>(value: &W, path: &Path<'_>) -> Result<Option<SessionState>, WireError> {
    let Some(text) = optional_text(value, path)? else {
        return Ok(None);
    };
    let state = SessionState::parse(text.as_ref());
    if state == SessionState::Other && text.as_ref() != "OTHER" {
        return Err(invalid(path, "not a session state of the snapshot format"));
    }
    Ok(Some(state))
}

/// `[id, completed, started_at, created_at, updated_at, flags]`.
#[inline(never)]
fn turn<W: Wire>(value: &W, path: &Path<'_>) -> Result<Turn, WireError> {
    if list(value, path)? != 6 {
        return Err(invalid(
            path,
            "expected [id, completed, started_at, created_at, updated_at, flags]",
        ));
    }
    let flags_path = path.index(5);
    let flags = value
        .at(5)
        .unsigned()
        .filter(|f| *f <= LIFECYCLE_ONLY | DISPATCH_PENDING | DISPATCH_ATTEMPTED)
        .ok_or_else(|| invalid(&flags_path, "expected a flag mask from 0 to 7"))?;
    Ok(Turn {
        id: string(&value.at(0), &path.index(0))?,
        completed: exact_bool(&value.at(1), &path.index(1))?,
        started_at: timestamp(&value.at(2), &path.index(2))?,
        created_at: timestamp(&value.at(3), &path.index(3))?,
        updated_at: optional_timestamp(&value.at(4), &path.index(4))?,
        flags: turn_flags(flags),
    })
}

fn turns<W: Wire>(value: &W, path: &Path<'_>) -> Result<Vec<Turn>, WireError> {
    each(value, path, &turn)
}

/// `[id, turn, kind, status, pending_id, gate, created_at, updated_at, flags?]`: `turn` an index
/// into the session's `turns`, a turn id, or null; `kind` and `status` integer codes; `updated_at`
/// `true` when it equals `created_at`; `flags` the row's [`RowFlags`], absent when none.
#[inline(never)]
fn message<W: Wire>(value: &W, path: &Path<'_>, turns: &[Turn]) -> Result<Message, WireError> {
    let len = list(value, path)?;
    if len != 8 && len != 9 {
        return Err(invalid(
            path,
            "expected [id, turn, kind, status, pending_id, gate, created_at, updated_at, flags?]",
        ));
    }
    let (turn, turn_path) = (value.at(1), path.index(1));
    let turn_id = if turn.kind() == Kind::Number {
        let at = code(&turn, &turn_path)?;
        let listed = usize::try_from(at).ok().and_then(|i| turns.get(i));
        Some(
            listed
                .ok_or_else(|| invalid(&turn_path, "no such turn in the session's turns"))?
                .id
                .clone(),
        )
    } else {
        optional_string(&turn, &turn_path)?
    };
    let kind_path = path.index(2);
    let kind = kind_of_code(code(&value.at(2), &kind_path)?)
        .ok_or_else(|| invalid(&kind_path, "not a message kind code (0, 1, 2)"))?;
    let status_path = path.index(3);
    let status = status_of_code(code(&value.at(3), &status_path)?)
        .ok_or_else(|| invalid(&status_path, "not a request status code (0 to 6)"))?;
    let total = value.at(5);
    let question_total = match total.number() {
        Some(n) if n.is_finite() => Some(n),
        None if total.is_null() => None,
        _ => {
            return Err(invalid_type(
                &total,
                &path.index(5),
                "a finite number or null",
            ))
        }
    };
    let created_at = timestamp(&value.at(6), &path.index(6))?;
    let updated = value.at(7);
    let updated_at = if updated.boolean() == Some(true) {
        Some(created_at.clone())
    } else {
        optional_timestamp(&updated, &path.index(7))?
    };
    Ok(Message {
        id: string(&value.at(0), &path.index(0))?,
        turn_id,
        kind,
        status,
        pending_id: optional_string(&value.at(4), &path.index(4))?,
        question_total,
        created_at,
        updated_at,
        flags: if len == 9 {
            let flags_path = path.index(8);
            match code(&value.at(8), &flags_path)? {
                flags @ 1..=3 => RowFlags(u8::try_from(flags).unwrap_or_default()),
                _ => return Err(invalid(&flags_path, "not row flags (1, 2, 3)")),
            }
        } else {
            RowFlags::default()
        },
    })
}

/// Built in place, field by field in the order they are checked: a refusal drops one
/// half-built session (one call) instead of a different set of decoded fields at each `?`
/// (hence the assignments after `default()`).
#[allow(clippy::field_reassign_with_default)]
#[inline(never)]
fn session<W: Wire>(value: &W, path: &Path<'_>) -> Result<SessionSnapshot, WireError> {
    object(value, path)?;
    let field = |key: &'static str| (value.get(key), path.key(key));
    let (id, id_path) = field("id");
    let (task, task_path) = field("task");
    let (listed, listed_path) = field("listed");
    let (st, st_path) = field("state");
    let (st_at, st_at_path) = field("state_at");
    let (primary, primary_path) = field("primary");
    let (primary_at, primary_at_path) = field("primary_at");
    let (act, act_path) = field("action");
    let (rev, rev_path) = field("revision");
    let (turn_list, turns_path) = field("turns");
    let (early, early_path) = field("early");
    let (messages, messages_path) = field("messages");
    let (deleted, deleted_path) = field("deleted");
    let (paged, paged_path) = field("paged");
    let mut s = SessionSnapshot::default();
    s.deleted = each(&deleted, &deleted_path, &|item, item_path| {
        if list(item, item_path)? != 3 {
            return Err(invalid(item_path, "expected [message_id, epoch, sequence]"));
        }
        Ok((
            string(&item.at(0), &item_path.index(0))?,
            row_revision(item, item_path, 1)?,
        ))
    })?;
    if !turn_list.is_null() {
        s.turns = Some(turns(&turn_list, &turns_path)?);
    }
    let turn_slice = s.turns.as_deref().unwrap_or_default();
    s.messages = each(&messages, &messages_path, &|m, m_path| {
        message(m, m_path, turn_slice)
    })?;
    s.id = string(&id, &id_path)?;
    s.task = optional_string(&task, &task_path)?;
    s.listed = exact_bool(&listed, &listed_path)?;
    s.state = state(&st, &st_path)?;
    s.state_at = optional_timestamp(&st_at, &st_at_path)?;
    s.primary = exact_bool(&primary, &primary_path)?;
    s.primary_at = optional_timestamp(&primary_at, &primary_at_path)?;
    // Absent: no projection held; null: clean.
    if !act.is_undefined() {
        s.projection.action = Some(action(&act, &act_path)?);
    }
    s.projection.revision = revision(&rev, &rev_path)?;
    s.early = turns(&early, &early_path)?;
    s.paged = exact_bool(&paged, &paged_path)?;
    s.settled = settled(&value.get("settled"), &path.key("settled"))?;
    Ok(s)
}

/// A session's settled bundles (SPEC §13): `[pending_id, epoch, sequence, summary_revision?]`
/// each, absent when there are none.
fn settled<W: Wire>(value: &W, path: &Path<'_>) -> Result<Vec<Settled>, WireError> {
    if value.is_undefined() {
        return Ok(Vec::new());
    }
    each(value, path, &|item, item_path| {
        let len = list(item, item_path)?;
        if len != 3 && len != 4 {
            return Err(invalid(
                item_path,
                "expected [pending_id, epoch, sequence, summary_revision?]",
            ));
        }
        let pending_id = text(&item.at(0), &item_path.index(0))?;
        if pending_id.as_ref().is_empty() {
            return Err(invalid(
                &item_path.index(0),
                "expected a non-empty pending_id",
            ));
        }
        Ok(Settled {
            pending_id: pending_id.as_ref().into(),
            position: row_revision(item, item_path, 1)?,
            summary: if len == 4 {
                Some(sequence(&item.at(3), &item_path.index(3))?)
            } else {
                None
            },
        })
    })
}

fn task<W: Wire + Clone, P>(
    value: &W,
    path: &Path<'_>,
    payload_of: &impl Fn(W) -> P,
) -> Result<TaskSnapshot<P>, WireError> {
    object(value, path)?;
    let summary_path = path.key("summary");
    let summary_value = value.get("summary");
    summary_value.check_held(&summary_path)?;
    let summary = match decode::summary(&summary_value, &summary_path)? {
        Some(summary) => Some((summary, payload_of(summary_value))),
        None if summary_value.is_null() => None,
        None => {
            return Err(invalid_type(
                &summary_value,
                &summary_path,
                "an object or null",
            ))
        }
    };
    let sessions_path = path.key("sessions");
    let sessions_value = value.get("sessions");
    let sessions = if sessions_value.is_null() {
        None
    } else {
        Some(ids(&sessions_value, &sessions_path)?)
    };
    Ok(TaskSnapshot {
        id: string(&value.get("id"), &path.key("id"))?,
        known: exact_bool(&value.get("known"), &path.key("known"))?,
        summary,
        legacy: action(&value.get("legacy"), &path.key("legacy"))?,
        sessions,
    })
}

fn ids<W: Wire>(value: &W, path: &Path<'_>) -> Result<Vec<String>, WireError> {
    each(value, path, &|id, id_path| string(id, id_path))
}

/// `[input, reason, task_id, session_id, message_id, epoch, sequence, held epoch, held
/// sequence]`.
fn rejection<W: Wire>(value: &W, path: &Path<'_>) -> Result<Rejection, WireError> {
    if list(value, path)? != 9 {
        return Err(invalid(
            path,
            "expected [input, reason, task_id, session_id, message_id, epoch, sequence, held_epoch, held_sequence]",
        ));
    }
    let input_path = path.index(0);
    let input = Input::parse(text(&value.at(0), &input_path)?.as_ref())
        .ok_or_else(|| invalid(&input_path, "not an input of the rejection log"))?;
    let reason_path = path.index(1);
    let reason = Reason::rejection(text(&value.at(1), &reason_path)?.as_ref())
        .ok_or_else(|| invalid(&reason_path, "not a rejection reason"))?;
    let optional = |i: usize| -> Result<Option<Box<str>>, WireError> {
        Ok(optional_text(&value.at(i), &path.index(i))?.map(|t| Box::from(t.as_ref())))
    };
    Ok(Rejection {
        input,
        reason,
        task_id: optional(2)?,
        session_id: optional(3)?,
        message_id: optional(4)?,
        revision: rev(value, path, 5)?,
        held: rev(value, path, 7)?,
    })
}

/// A whole snapshot. `payload_of` makes the caller's summary object of a summary value.
pub fn snapshot<W: Wire + Clone, P>(
    value: &W,
    path: &Path<'_>,
    payload_of: impl Fn(W) -> P,
) -> Result<SnapshotInput<P>, WireError> {
    object(value, path)?;
    let format_path = path.key("format");
    if value.get("format").string().as_ref().map(AsRef::as_ref) != Some(FORMAT) {
        return Err(WireError::from(WireErrorKind::UnsupportedVersion {
            field: format_path.text(),
            problem: ["not a snapshot (format \"", FORMAT, "\" expected)"].concat(),
        }));
    }
    let version_path = path.key("version");
    if value.get("version").unsigned() != Some(VERSION) {
        return Err(WireError::from(WireErrorKind::UnsupportedVersion {
            field: version_path.text(),
            problem: [
                "this build reads snapshot version ",
                &crate::text::decimal(VERSION),
                " only",
            ]
            .concat(),
        }));
    }
    let epoch = optional_string(&value.get("epoch"), &path.key("epoch"))?;
    let stream = optional_string(&value.get("stream"), &path.key("stream"))?;
    let offset_path = path.key("offset");
    let offset = value.get("offset");
    let offset = if offset.is_null() {
        None
    } else {
        Some(
            offset
                .unsigned()
                .filter(|n| *n < 1 << 53 && offset.kind() == Kind::Number)
                .ok_or_else(|| {
                    invalid_type(
                        &offset,
                        &offset_path,
                        "an integer from 0 to 2^53 - 1 or null",
                    )
                })?,
        )
    };
    let position = match (stream, offset) {
        (Some(stream), Some(offset)) => Some((stream, offset)),
        (None, None) => None,
        _ => return Err(invalid(&offset_path, "stream and offset go together")),
    };

    let tasks_path = path.key("tasks");
    let task_list = value.get("tasks");
    let tasks: Vec<TaskSnapshot<P>> = each(&task_list, &tasks_path, &|t, t_path| {
        task(t, t_path, &payload_of)
    })?;
    let sessions_path = path.key("sessions");
    let session_list = value.get("sessions");
    let sessions: Vec<SessionSnapshot> = each(&session_list, &sessions_path, &session)?;
    // Each id once: a second entry would silently replace the first.
    distinct(
        tasks.len(),
        &|i| tasks.get(i).map(|t| t.id.as_str()),
        &tasks_path,
    )?;
    distinct(
        sessions.len(),
        &|i| sessions.get(i).map(|s| s.id.as_str()),
        &sessions_path,
    )?;

    let removed_path = path.key("removed");
    let removed = value.get("removed");
    object(&removed, &removed_path)?;
    let removed_tasks = ids(&removed.get("tasks"), &removed_path.key("tasks"))?;
    let removed_sessions = ids(&removed.get("sessions"), &removed_path.key("sessions"))?;

    let rejected_path = path.key("rejected");
    let rejected_list = value.get("rejected");
    let rejected = each(&rejected_list, &rejected_path, &rejection)?;
    // `answers` is what the source answered: for readers without the engine. It is not read
    // back (the hydrated store answers from the state).
    Ok(SnapshotInput {
        epoch,
        position,
        tasks,
        sessions,
        removed_tasks,
        removed_sessions,
        rejected,
    })
}

/// Each id once: `id_at(i)` is the id of entry `i` of `len`.
#[inline(never)]
fn distinct<'a>(
    len: usize,
    id_at: &dyn Fn(usize) -> Option<&'a str>,
    path: &Path<'_>,
) -> Result<(), WireError> {
    let mut seen = crate::hash::IdIndex::with_capacity(len);
    for i in 0..len {
        let Some(id) = id_at(i) else { break };
        if seen.get_or_insert(id, i, id_at).is_some() {
            let at = path.index(i);
            return Err(invalid(&at, "a second entry with the same id"));
        }
    }
    Ok(())
}
