//! The `ProjectionStore` API over wire values: decode the arguments (validating everything before
//! the store mutates, so a rejected call leaves the state unchanged), then make one store call.
//! The wasm class is these functions over the tape (`wire::tape`); native callers and the native store
//! scenario runner use them over `serde_json::Value`. Argument names are the roots of error paths.

use crate::error::WireError;
use crate::store::{Navigation, ProjectionStore, Reason, SelectionLoad, SelectionTicket};

use super::{decode, events, Path, Wire};

/// A required id argument.
pub fn id<W: Wire>(value: &W, name: &'static str) -> Result<String, WireError> {
    decode::string(value, &Path::Root(name))
}

/// `applySessionList(taskId, sessions)`.
pub fn apply_session_list<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    task_id: &W,
    sessions: &W,
) -> Result<Reason, WireError> {
    let task_id = id(task_id, "taskId")?;
    // The ids are read in place: the store copies the ones it keeps.
    let sessions = decode::sessions_of::<W, W::Text>(sessions, &Path::Root("sessions"))?;
    store.apply_session_list(&task_id, sessions)
}

/// `applyTurnList(sessionId, turns)`.
pub fn apply_turn_list<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    session_id: &W,
    turns: &W,
) -> Result<Reason, WireError> {
    let session_id = id(session_id, "sessionId")?;
    let path = Path::Root("turns");
    decode::array(turns, &path)?;
    let turns = decode::turns(turns, &path)?.unwrap_or_default();
    Ok(store.apply_turn_list(&session_id, turns))
}

/// `applyMessagePage(sessionId, messages)`.
pub fn apply_message_page<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    session_id: &W,
    messages: &W,
) -> Result<Reason, WireError> {
    let session_id = id(session_id, "sessionId")?;
    let messages = decode::messages(messages, &Path::Root("messages"))?;
    Ok(store.apply_message_page(&session_id, &messages))
}

/// `applyMessageEvent(kind, payload)`.
pub fn apply_message_event<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    kind: &W,
    payload: &W,
) -> Result<Reason, WireError> {
    let kind = events::message_event_kind(kind, &Path::Root("kind"))?;
    let event = events::message_event(payload, &Path::Root("payload"))?;
    Ok(store.apply_message_event(kind, &event))
}

/// `applyMessageEvents(kind, payloads)`: the whole batch is validated first, then applied in
/// order; returns the reason of the last event.
pub fn apply_message_events<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    kind: &W,
    payloads: &W,
) -> Result<Reason, WireError> {
    let kind = events::message_event_kind(kind, &Path::Root("kind"))?;
    let path = Path::Root("payloads");
    let len = decode::array(payloads, &path)?;
    let batch = (0..len)
        .map(|i| events::message_event(&payloads.at(i), &path.index(i)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut last = Reason::Unchanged;
    for event in &batch {
        last = store.apply_message_event(kind, event);
    }
    Ok(last)
}

/// `applyTurnEvent(payload)`.
pub fn apply_turn_event<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    payload: &W,
) -> Result<Reason, WireError> {
    let event = events::turn_event(payload, &Path::Root("payload"))?;
    Ok(store.apply_turn_event(event))
}

/// `applySessionEvent(payload)`.
pub fn apply_session_event<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    payload: &W,
) -> Result<Reason, WireError> {
    let session = events::session_event(payload, &Path::Root("payload"))?;
    Ok(store.apply_session_event(&session))
}

/// `applyStatusSummaryEvent(payload)`; `payload_of` turns the summary's wire value into what the
/// store holds.
pub fn apply_status_summary_event<W: Wire + Clone, P: Clone>(
    store: &mut ProjectionStore<P>,
    payload: &W,
    payload_of: impl Fn(W) -> P,
) -> Result<Reason, WireError> {
    let (task_id, summary) = events::summary_event(payload, &Path::Root("payload"))?;
    Ok(store.apply_status_summary_event(&task_id, summary.map(|(s, w)| (s, payload_of(w)))))
}

/// `applyTaskUpdated(payload)`.
pub fn apply_task_updated<W: Wire + Clone, P: Clone>(
    store: &mut ProjectionStore<P>,
    payload: &W,
    payload_of: impl Fn(W) -> P,
) -> Result<Reason, WireError> {
    let task = events::task_input(payload, &Path::Root("payload"))?;
    Ok(store.apply_task_updated(task.map_payload(payload_of)))
}

/// `removeTask(taskId)`.
pub fn remove_task<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    task_id: &W,
) -> Result<Reason, WireError> {
    let task_id = id(task_id, "taskId")?;
    Ok(store.remove_task(&task_id))
}

/// A `server.hello` frame's payload (`{ epoch, started_at, stream?, offset?, resumed? }`): what
/// it means for the state held. `stream` and `offset` are validated (the caller hands them on);
/// the store reads `epoch` and `resumed`.
pub fn apply_hello<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    payload: &W,
) -> Result<crate::rules::connection::Hello, WireError> {
    let hello = events::hello(payload, &Path::Root("payload"))?;
    Ok(store.apply_hello(hello.epoch.as_ref(), hello.resumed))
}

/// `applyHello(payload)` with the hello's place in the stream (its `stream` and `offset`).
pub fn apply_hello_at<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    payload: &W,
) -> Result<crate::rules::connection::Hello, WireError> {
    let hello = events::hello(payload, &Path::Root("payload"))?;
    Ok(store.apply_hello_at(
        hello.epoch.as_ref(),
        hello.resumed,
        hello.stream.as_ref().map(AsRef::as_ref),
        hello.offset,
    ))
}

/// `applyStreamPosition({ stream, offset })`: where the REST state applied was read.
pub fn apply_stream_position<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    position: &W,
) -> Result<Reason, WireError> {
    let path = Path::Root("position");
    decode::object(position, &path)?;
    let stream = decode::text(&position.get("stream"), &path.key("stream"))?;
    let offset_path = path.key("offset");
    let offset = events::offset(&position.get("offset"), &offset_path)?.ok_or_else(|| {
        WireError::InvalidType {
            field: offset_path.text(),
            expected: "a non-negative integer up to 2^53 - 1",
            got: position.get("offset").kind().name(),
        }
    })?;
    store.apply_stream_position(stream.as_ref(), offset);
    Ok(Reason::Applied)
}

/// Ids an option names (`None`: not limited).
type Named = Option<Vec<String>>;

/// The `{ tasks?, sessions? }` of `dehydrate(options)`: the tasks and the sessions named.
pub fn dehydrate_scope<W: Wire>(options: &W) -> Result<(Named, Named), WireError> {
    let path = Path::Root("options");
    if options.is_absent() {
        return Ok((None, None));
    }
    decode::object(options, &path)?;
    let ids = |key: &'static str| -> Result<Named, WireError> {
        let value = options.get(key);
        let key_path = path.key(key);
        if value.is_absent() {
            return Ok(None);
        }
        let len = decode::array(&value, &key_path)?;
        (0..len)
            .map(|i| decode::string(&value.at(i), &key_path.index(i)))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    };
    Ok((ids("tasks")?, ids("sessions")?))
}

/// `dehydrate(options)`: the snapshot as JSON text; `payload` writes a held summary.
pub fn dehydrate<W: Wire, P: Clone>(
    store: &ProjectionStore<P>,
    options: &W,
    payload: impl Fn(&P, &mut String),
) -> Result<String, WireError> {
    let (tasks, sessions) = dehydrate_scope(options)?;
    let scope = crate::store::snapshot::Scope {
        tasks: tasks.as_deref(),
        sessions: sessions.as_deref(),
    };
    Ok(store.dehydrate(scope, payload))
}

/// `ProjectionStore.hydrate(snapshot, { restored? })`: a new store, or the snapshot's first
/// error (nothing is built).
pub fn hydrate<W: Wire + Clone, P: Clone>(
    snapshot: &W,
    options: &W,
    payload_of: impl Fn(W) -> P,
) -> Result<ProjectionStore<P>, WireError> {
    let path = Path::Root("options");
    let restored = if options.is_absent() {
        false
    } else {
        decode::object(options, &path)?;
        decode::boolean(&options.get("restored"), &path.key("restored"))?
    };
    let input = super::snapshot::snapshot(snapshot, &Path::Root("snapshot"), payload_of)?;
    Ok(ProjectionStore::hydrate(input, restored))
}

/// `applyTaskSnapshot(token, tasks)`.
pub fn apply_task_snapshot<W: Wire + Clone, P: Clone>(
    store: &mut ProjectionStore<P>,
    token: &W,
    tasks: &W,
    payload_of: impl Fn(W) -> P,
) -> Result<Reason, WireError> {
    let token =
        decode::unsigned(token, &Path::Root("token"))?.ok_or_else(|| WireError::InvalidType {
            field: "token".into(),
            expected: "a fetch token from beginTaskFetch()",
            got: token.kind().name(),
        })?;
    let tasks = events::task_inputs(tasks, &Path::Root("tasks"))?;
    let tasks = tasks
        .into_iter()
        .map(|t| t.map_payload(&payload_of))
        .collect();
    store.apply_task_snapshot(token, tasks)
}

/// `beginSelection(taskId, { preferredSessionId })` with a fresh ticket id.
pub fn begin_selection<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    task_id: &W,
    options: &W,
    ticket: String,
) -> Result<SelectionTicket, WireError> {
    let task_id = id(task_id, "taskId")?;
    let path = Path::Root("options");
    let preferred = match options.is_absent() {
        true => None,
        false => {
            decode::object(options, &path)?;
            decode::optional_string(
                &options.get("preferredSessionId"),
                &path.key("preferredSessionId"),
            )?
        }
    };
    Ok(store.begin_selection(&task_id, preferred.as_deref(), ticket))
}

/// `settleSelection(ticket, outcome)` with `outcome` = `{ sessions }` (loaded), `{ error }` (the
/// load failed or timed out) or `{ aborted: true }`.
pub fn settle_selection<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    ticket: &W,
    outcome: &W,
) -> Result<(Navigation, Reason), WireError> {
    let ticket = id(ticket, "ticket")?;
    let path = Path::Root("outcome");
    decode::object(outcome, &path)?;
    let load = if decode::flag(&outcome.get("aborted")) {
        SelectionLoad::Aborted
    } else if !outcome.get("error").is_undefined() || decode::flag(&outcome.get("timedOut")) {
        SelectionLoad::Failed
    } else {
        SelectionLoad::Loaded(decode::sessions_of::<W, W::Text>(
            &outcome.get("sessions"),
            &path.key("sessions"),
        )?)
    };
    store.settle_selection(&ticket, load)
}

/// `setActiveTask(taskId | null)`.
pub fn set_active_task<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    task_id: &W,
) -> Result<(), WireError> {
    let task_id = decode::optional_string(task_id, &Path::Root("taskId"))?;
    store.set_active_task(task_id.as_deref());
    Ok(())
}
