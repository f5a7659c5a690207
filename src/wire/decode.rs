//! Decoders from wire values to rule types. Strict about types (a wrong type is an error naming
//! the field), lenient about absence where SPEC gives absence a meaning.

use crate::error::{WireError, WireErrorKind};
use crate::rules::clarification::Scope;
use crate::rules::model::{
    Message, MessageKind, PendingAction, RequestStatus, Revision, RowFlags, Session, SessionState,
    StatusSummary, Task, Turn, TurnFlags,
};
use crate::rules::revision::PendingProjection;
use crate::rules::time::Timestamp;
use crate::rules::turn::CurrentTurn;

use super::{Path, Wire};

// Cold and not inlined, as `invalid_revision`: one copy of building the error.
#[cold]
#[inline(never)]
pub(super) fn invalid_type<W: Wire>(
    value: &W,
    path: &Path<'_>,
    expected: &'static str,
) -> WireError {
    WireError::from(WireErrorKind::InvalidType {
        field: path.text(),
        expected,
        got: value.kind().name(),
    })
}

#[cold]
#[inline(never)]
fn invalid_revision(path: &Path<'_>, problem: &'static str) -> WireError {
    WireError::from(WireErrorKind::InvalidRevision {
        field: path.text(),
        problem,
    })
}

/// The length of a required array.
pub fn array<W: Wire>(value: &W, path: &Path<'_>) -> Result<usize, WireError> {
    if value.is_array() {
        Ok(value.len())
    } else {
        Err(invalid_type(value, path, "an array"))
    }
}

/// A required object.
pub fn object<W: Wire>(value: &W, path: &Path<'_>) -> Result<(), WireError> {
    if value.is_object() {
        Ok(())
    } else {
        Err(invalid_type(value, path, "an object"))
    }
}

/// An object, or `None` for `undefined`/`null`.
pub(super) fn optional_object<W: Wire>(value: &W, path: &Path<'_>) -> Result<bool, WireError> {
    if value.is_object() {
        Ok(true)
    } else if value.is_absent() {
        Ok(false)
    } else {
        Err(invalid_type(value, path, "an object or null"))
    }
}

/// A flag is set only when its value is exactly `true`, `1`, `"true"` or `"1"` (SPEC §2).
pub fn flag<W: Wire>(value: &W) -> bool {
    if let Some(b) = value.boolean() {
        return b;
    }
    if let Some(n) = value.number() {
        return n == 1.0;
    }
    matches!(
        value.string().as_ref().map(AsRef::as_ref),
        Some("true" | "1")
    )
}

/// A required string.
#[inline(never)] // one copy: called by every decoder
pub fn string<W: Wire>(value: &W, path: &Path<'_>) -> Result<String, WireError> {
    text(value, path).map(|t| t.as_ref().to_owned())
}

/// A required string's text as the value holds it (borrowed from the input: no copy).
pub fn text<W: Wire>(value: &W, path: &Path<'_>) -> Result<W::Text, WireError> {
    value
        .string()
        .ok_or_else(|| invalid_type(value, path, "a string"))
}

/// A string, or `None` for `undefined`/`null`.
#[inline(never)] // one copy: called by every decoder
pub fn optional_string<W: Wire>(value: &W, path: &Path<'_>) -> Result<Option<String>, WireError> {
    Ok(optional_text(value, path)?.map(|t| t.as_ref().to_owned()))
}

/// A string's text as the value holds it, or `None` for `undefined`/`null`.
pub fn optional_text<W: Wire>(value: &W, path: &Path<'_>) -> Result<Option<W::Text>, WireError> {
    match value.string() {
        Some(text) => Ok(Some(text)),
        None if value.is_absent() => Ok(None),
        None => Err(invalid_type(value, path, "a string")),
    }
}

/// A timestamp; absent or `null` is the lowest timestamp.
pub fn timestamp<W: Wire>(value: &W, path: &Path<'_>) -> Result<Timestamp, WireError> {
    Ok(optional_timestamp(value, path)?.unwrap_or_default())
}

/// A timestamp, or `None` for `undefined`/`null`.
pub fn optional_timestamp<W: Wire>(
    value: &W,
    path: &Path<'_>,
) -> Result<Option<Timestamp>, WireError> {
    Ok(timestamp_text(value, path)?.map(|text| Timestamp::parse(text.as_ref())))
}

/// A timestamp's text, or `None` for `undefined`/`null`.
fn timestamp_text<W: Wire>(value: &W, path: &Path<'_>) -> Result<Option<W::Text>, WireError> {
    match value.string() {
        Some(text) => Ok(Some(text)),
        None if value.is_absent() => Ok(None),
        None => Err(invalid_type(value, path, "a timestamp string")),
    }
}

/// A session `state`; `None` (unknown) for `undefined`, `null` and `""`: an empty state is no
/// state, so the turn rule applies instead of the quarantine (SPEC §2: unknown state falls
/// through).
pub fn session_state<W: Wire>(
    value: &W,
    path: &Path<'_>,
) -> Result<Option<SessionState>, WireError> {
    let text = optional_text(value, path)?;
    Ok(text
        .as_ref()
        .map(AsRef::as_ref)
        .filter(|s| !s.is_empty())
        .map(SessionState::parse))
}

/// A `pending_action` key: `None` when omitted (`undefined`), `Some(None)` for `null` (clean).
pub fn pending_action<W: Wire>(
    value: &W,
    path: &Path<'_>,
) -> Result<Option<Option<PendingAction>>, WireError> {
    if let Some(text) = value.string() {
        let text = text.as_ref();
        return match PendingAction::parse(text) {
            Some(action) => Ok(Some(Some(action))),
            None => Err(WireError::from(WireErrorKind::InvalidValue {
                field: path.text(),
                problem: [
                    "expected \"clarification\", \"permission\" or null, got \"",
                    &crate::error::quoted(text),
                    "\"",
                ]
                .concat(),
            })),
        };
    }
    if value.is_undefined() {
        Ok(None)
    } else if value.is_null() {
        Ok(Some(None))
    } else {
        Err(invalid_type(
            value,
            path,
            "\"clarification\", \"permission\" or null",
        ))
    }
}

/// What a number that is not an exact non-negative integer gets told. In JS a Number beyond
/// 2^53 − 1 may already be rounded (2^53 + 1 reads as 2^53), so it is refused rather than
/// trusted: an exact value that large comes as a BigInt.
const UNSIGNED_PROBLEM: &str =
    "expected a non-negative integer (a Number up to 2^53 - 1, or a BigInt up to 2^64 - 1)";

/// A non-negative integer, or `None` for `undefined`/`null`.
fn optional_unsigned<W: Wire>(value: &W, path: &Path<'_>) -> Result<Option<u64>, WireError> {
    if let Some(n) = value.unsigned() {
        return Ok(Some(n));
    }
    if value.number().is_some() {
        return Err(WireError::from(WireErrorKind::InvalidValue {
            field: path.text(),
            problem: String::from(UNSIGNED_PROBLEM),
        }));
    }
    if value.is_absent() {
        Ok(None)
    } else {
        Err(invalid_type(value, path, "a non-negative integer"))
    }
}

/// A revision `{epoch, sequence}`, or `None` for `undefined`/`null` (SPEC §5). The epoch must
/// be a string (its digits are checked by the rules); the sequence a non-negative integer.
pub fn revision<W: Wire>(value: &W, path: &Path<'_>) -> Result<Option<Revision>, WireError> {
    if !value.is_object() {
        if value.is_absent() {
            return Ok(None);
        }
        return Err(invalid_revision(
            path,
            "expected a revision object {epoch, sequence}",
        ));
    }
    let epoch_path = path.key("epoch");
    let epoch = value
        .get("epoch")
        .string()
        .map(|e| e.as_ref().to_owned())
        .ok_or_else(|| invalid_revision(&epoch_path, "expected a decimal string"))?;
    let sequence_path = path.key("sequence");
    let sequence_value = value.get("sequence");
    // A number, or (in JS) a BigInt; anything else is malformed.
    let sequence = sequence_value
        .unsigned()
        .ok_or_else(|| invalid_revision(&sequence_path, UNSIGNED_PROBLEM))?;
    Ok(Some(Revision { epoch, sequence }))
}

/// A pending projection object `{pending_action?, pending_action_revision?}`; `undefined`/`null`
/// is the empty projection (nothing known).
pub fn projection<W: Wire>(value: &W, path: &Path<'_>) -> Result<PendingProjection, WireError> {
    if !optional_object(value, path)? {
        return Ok(PendingProjection::default());
    }
    Ok(PendingProjection {
        action: pending_action(&value.get("pending_action"), &path.key("pending_action"))?,
        revision: revision(
            &value.get("pending_action_revision"),
            &path.key("pending_action_revision"),
        )?,
    })
}

/// A turn (SPEC §1).
pub fn turn<W: Wire>(value: &W, path: &Path<'_>) -> Result<Turn, WireError> {
    turn_of::<W, W::Text>(value, path).map(Turn::into_owned)
}

/// A turn, its id as `S`: owned, or the input's own text (`W::Text`, no copy).
pub fn turn_of<W: Wire, S>(value: &W, path: &Path<'_>) -> Result<Turn<S>, WireError>
where
    W::Text: Into<S>,
{
    object(value, path)?;
    let completed_at = value.get("completed_at");
    // Only its presence counts: checked like any timestamp, not parsed.
    let completed = timestamp_text(&completed_at, &path.key("completed_at"))?.is_some();
    let metadata = value.get("metadata");
    let metadata_path = path.key("metadata");
    optional_object(&metadata, &metadata_path)?;
    Ok(Turn {
        id: text(&value.get("id"), &path.key("id"))?.into(),
        completed,
        started_at: timestamp(&value.get("started_at"), &path.key("started_at"))?,
        created_at: timestamp(&value.get("created_at"), &path.key("created_at"))?,
        updated_at: optional_timestamp(&value.get("updated_at"), &path.key("updated_at"))?,
        flags: TurnFlags {
            lifecycle_only: flag(&metadata.get("lifecycle_only")),
            prompt_dispatch_pending: flag(&metadata.get("prompt_dispatch_pending")),
            prompt_dispatch_attempted: flag(&metadata.get("prompt_dispatch_attempted")),
        },
    })
}

/// A turn list; `None` (history not loaded) for `undefined`/`null`.
pub fn turns<W: Wire>(value: &W, path: &Path<'_>) -> Result<Option<Vec<Turn>>, WireError> {
    if value.is_absent() {
        return Ok(None);
    }
    let len = array(value, path)?;
    elements(value, path, len, turn).map(Some)
}

/// A turn list, the ids as `S` (see [`turn_of`]).
#[inline(never)] // one copy for the stateless functions and the store
pub fn turns_of<W: Wire, S>(value: &W, path: &Path<'_>) -> Result<Option<Vec<Turn<S>>>, WireError>
where
    W::Text: Into<S>,
{
    if value.is_absent() {
        return Ok(None);
    }
    let len = array(value, path)?;
    elements(value, path, len, turn_of).map(Some)
}

/// The most elements an array's decoded vector is sized for up front (a longer array grows it):
/// a length claims memory before any element is read.
const PRESIZED: usize = 1 << 17;

/// Decodes the `len` elements of an array with `element`, into a vector sized once (collecting
/// a `Result` iterator would grow it from nothing by doubling).
fn elements<W: Wire, T>(
    value: &W,
    path: &Path<'_>,
    len: usize,
    element: impl Fn(&W, &Path<'_>) -> Result<T, WireError>,
) -> Result<Vec<T>, WireError> {
    let mut out = Vec::with_capacity(len.min(PRESIZED));
    for i in 0..len {
        out.push(element(&value.at(i), &path.index(i))?);
    }
    Ok(out)
}

/// A message's fields as plain values, before their SPEC meaning is applied (one place maps
/// them: [`MessageFields::into_message`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MessageFields {
    pub id: String,
    pub turn_id: Option<String>,
    pub message_type: Option<String>,
    /// `metadata.status`, `metadata.pending_id`, `metadata.question_total`.
    pub status: Option<String>,
    pub pending_id: Option<String>,
    pub question_total: Option<f64>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    /// `metadata.request_id` and `metadata.agent_disconnected`, as [`RowFlags::of`] reads them.
    pub flags: RowFlags,
}

impl MessageFields {
    /// The message the rules read (the mapping is [`MessageMeaning::of`]).
    pub fn into_message(self) -> Message {
        let meaning = MessageMeaning::of(
            self.turn_id.as_deref(),
            self.message_type.as_deref(),
            self.status.as_deref(),
            self.pending_id.as_deref(),
            self.created_at.as_deref(),
            self.updated_at.as_deref(),
        );
        Message {
            turn_id: meaning.turn_id.map(str::to_owned),
            kind: meaning.kind,
            status: meaning.status,
            pending_id: meaning.pending_id.map(str::to_owned),
            question_total: self.question_total,
            flags: self.flags,
            created_at: meaning.created_at,
            updated_at: meaning.updated_at,
            id: self.id,
        }
    }
}

/// What the rules read of a message's raw text fields: the one mapping, used by the decoder
/// ([`MessageFields::into_message`]) and by the store's fast path (`src/wasm/store.rs`).
#[derive(Clone, Debug, PartialEq)]
pub struct MessageMeaning<'a> {
    pub turn_id: Option<&'a str>,
    pub kind: MessageKind,
    pub status: RequestStatus,
    pub pending_id: Option<&'a str>,
    pub created_at: Timestamp,
    pub updated_at: Option<Timestamp>,
}

impl<'a> MessageMeaning<'a> {
    /// The turn a message's `turn_id` text names (`""` is none): what a reader that keeps only
    /// message turn ids (the server's referenced-turn set) reads of them.
    pub fn turn_id_of(turn_id: Option<&'a str>) -> Option<&'a str> {
        turn_id.filter(|t| !t.is_empty())
    }

    /// `""` ids are absent, an absent or unknown type is [`MessageKind::Other`], an absent or
    /// empty status is pending, an absent `created_at` is the lowest timestamp.
    pub fn of(
        turn_id: Option<&'a str>,
        message_type: Option<&str>,
        status: Option<&str>,
        pending_id: Option<&'a str>,
        created_at: Option<&str>,
        updated_at: Option<&str>,
    ) -> Self {
        MessageMeaning {
            turn_id: Self::turn_id_of(turn_id),
            kind: message_type.map_or(MessageKind::Other, MessageKind::parse),
            status: RequestStatus::parse(status),
            pending_id: pending_id.filter(|p| !p.is_empty()),
            created_at: created_at.map(Timestamp::parse).unwrap_or_default(),
            updated_at: updated_at.map(Timestamp::parse),
        }
    }
}

/// A message (SPEC §1); its id is `id`, or `message_id` as WebSocket payloads spell it.
pub fn message<W: Wire>(value: &W, path: &Path<'_>) -> Result<Message, WireError> {
    object(value, path)?;
    let mut id = value.get("id");
    if id.is_undefined() {
        let alias = value.get("message_id");
        if !alias.is_undefined() {
            id = alias;
        }
    }
    let message_type = optional_string(&value.get("type"), &path.key("type"))?;
    let metadata = value.get("metadata");
    let metadata_path = path.key("metadata");
    optional_object(&metadata, &metadata_path)?;
    let status = optional_string(&metadata.get("status"), &metadata_path.key("status"))?;
    let fields = MessageFields {
        id: string(&id, &path.key("id"))?,
        turn_id: optional_string(&value.get("turn_id"), &path.key("turn_id"))?,
        message_type,
        status,
        pending_id: optional_string(
            &metadata.get("pending_id"),
            &metadata_path.key("pending_id"),
        )?,
        question_total: metadata.get("question_total").number(),
        flags: RowFlags::of(
            optional_text(
                &metadata.get("request_id"),
                &metadata_path.key("request_id"),
            )?
            .as_ref()
            .map(AsRef::as_ref),
            flag(&metadata.get("agent_disconnected")),
        ),
        created_at: optional_timestamp_text(&value.get("created_at"), &path.key("created_at"))?,
        updated_at: optional_timestamp_text(&value.get("updated_at"), &path.key("updated_at"))?,
    };
    Ok(fields.into_message())
}

/// A timestamp's text as an owned string, or `None` for `undefined`/`null`.
fn optional_timestamp_text<W: Wire>(
    value: &W,
    path: &Path<'_>,
) -> Result<Option<String>, WireError> {
    Ok(timestamp_text(value, path)?.map(|t| t.as_ref().to_owned()))
}

/// A required message array.
pub fn messages<W: Wire>(value: &W, path: &Path<'_>) -> Result<Vec<Message>, WireError> {
    let len = array(value, path)?;
    elements(value, path, len, message)
}

/// A message array where `undefined`/`null` means none loaded.
pub fn optional_messages<W: Wire>(value: &W, path: &Path<'_>) -> Result<Vec<Message>, WireError> {
    if value.is_absent() {
        return Ok(Vec::new());
    }
    messages(value, path)
}

/// A decoded discovery scope, owning its turn id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeArg {
    pub current_turn: CurrentTurn<String>,
    pub pending_action: Option<Option<PendingAction>>,
}

impl ScopeArg {
    pub fn as_scope(&self) -> Scope<'_> {
        Scope {
            current_turn: match &self.current_turn {
                CurrentTurn::Unknown => CurrentTurn::Unknown,
                CurrentTurn::None => CurrentTurn::None,
                CurrentTurn::Turn(id) => CurrentTurn::Turn(id.as_str()),
            },
            pending_action: self.pending_action,
        }
    }
}

/// A discovery scope `{currentTurnId?, pendingAction?}`; `None` (the legacy scan) when the
/// argument is `undefined` or `null`.
pub fn scope<W: Wire>(value: &W, path: &Path<'_>) -> Result<Option<ScopeArg>, WireError> {
    if !optional_object(value, path)? {
        return Ok(None);
    }
    let turn = value.get("currentTurnId");
    let turn_path = path.key("currentTurnId");
    let current_turn = if turn.is_undefined() {
        CurrentTurn::Unknown
    } else if turn.is_null() {
        CurrentTurn::None
    } else {
        CurrentTurn::Turn(string(&turn, &turn_path)?)
    };
    Ok(Some(ScopeArg {
        current_turn,
        pending_action: pending_action(&value.get("pendingAction"), &path.key("pendingAction"))?,
    }))
}

/// A session (SPEC §1).
pub fn session<W: Wire>(value: &W, path: &Path<'_>) -> Result<Session, WireError> {
    session_of::<W, W::Text>(value, path).map(Session::into_owned)
}

/// A session, its ids as `S`: owned, or the input's own text (`W::Text`, no copy).
pub fn session_of<W: Wire, S>(value: &W, path: &Path<'_>) -> Result<Session<S>, WireError>
where
    W::Text: Into<S>,
{
    object(value, path)?;
    Ok(Session {
        id: text(&value.get("id"), &path.key("id"))?.into(),
        task_id: optional_text(&value.get("task_id"), &path.key("task_id"))?.map(Into::into),
        state: session_state(&value.get("state"), &path.key("state"))?,
        is_primary: flag(&value.get("is_primary")),
        pending_action: pending_action(&value.get("pending_action"), &path.key("pending_action"))?,
        pending_action_revision: revision(
            &value.get("pending_action_revision"),
            &path.key("pending_action_revision"),
        )?,
        updated_at: optional_timestamp(&value.get("updated_at"), &path.key("updated_at"))?,
    })
}

/// A required session array.
pub fn sessions<W: Wire>(value: &W, path: &Path<'_>) -> Result<Vec<Session>, WireError> {
    let len = array(value, path)?;
    elements(value, path, len, session)
}

/// A required session array, the ids as `S` (see [`session_of`]).
#[inline(never)] // one copy for the stateless functions and the store
pub fn sessions_of<W: Wire, S>(value: &W, path: &Path<'_>) -> Result<Vec<Session<S>>, WireError>
where
    W::Text: Into<S>,
{
    let len = array(value, path)?;
    elements(value, path, len, session_of)
}

/// A status summary; `None` for `undefined`/`null`.
pub fn summary<W: Wire>(value: &W, path: &Path<'_>) -> Result<Option<StatusSummary>, WireError> {
    if !optional_object(value, path)? {
        return Ok(None);
    }
    Ok(Some(StatusSummary {
        revision: optional_unsigned(&value.get("revision"), &path.key("revision"))?,
        pending_action: pending_action(&value.get("pending_action"), &path.key("pending_action"))?
            .flatten(),
    }))
}

/// A task (SPEC §1).
pub fn task<W: Wire>(value: &W, path: &Path<'_>) -> Result<Task, WireError> {
    object(value, path)?;
    Ok(Task {
        id: optional_string(&value.get("id"), &path.key("id"))?,
        status_summary: summary(&value.get("status_summary"), &path.key("status_summary"))?,
        status_summary_invalidated: flag(&value.get("status_summary_invalidated")),
        task_pending_action: pending_action(
            &value.get("task_pending_action"),
            &path.key("task_pending_action"),
        )?
        .flatten(),
        primary_session_pending_action: pending_action(
            &value.get("primary_session_pending_action"),
            &path.key("primary_session_pending_action"),
        )?
        .flatten(),
    })
}

/// A boolean argument; `undefined`/`null` is `false`.
pub fn boolean<W: Wire>(value: &W, path: &Path<'_>) -> Result<bool, WireError> {
    match value.boolean() {
        Some(b) => Ok(b),
        None if value.is_absent() => Ok(false),
        None => Err(invalid_type(value, path, "a boolean")),
    }
}

/// A non-negative integer argument, or `None` for `undefined`/`null`.
pub fn unsigned<W: Wire>(value: &W, path: &Path<'_>) -> Result<Option<u64>, WireError> {
    optional_unsigned(value, path)
}
