//! The `ProjectionStore` API over wire values: decode the arguments (validating everything before
//! the store mutates, so a rejected call leaves the state unchanged), then make one store call.
//! The wasm class is these functions over the tape (`wire::tape`); native callers use them over
//! `serde_json::Value`, by name through [`dispatch`] (trace replay, the store scenario runners,
//! the convergence properties, the tape tests, the `store` fuzz target). Argument names are the
//! roots of error paths.

use crate::error::{WireError, WireErrorKind};
use crate::store::{Navigation, ProjectionStore, Reason, SelectionLoad, SelectionTicket};

use super::{decode, events, Path, Wire};

/// A required id argument.
pub fn id<W: Wire>(value: &W, name: &'static str) -> Result<String, WireError> {
    decode::string(value, &Path::Root(name))
}

/// An optional id argument (`undefined` or `null`: none).
pub fn optional_id<W: Wire>(value: &W, name: &'static str) -> Result<Option<String>, WireError> {
    decode::optional_string(value, &Path::Root(name))
}

/// The `(taskId, preferredSessionId?)` arguments of `pendingOwner` and `explainOwner`.
pub fn owner_args<W: Wire>(
    task_id: &W,
    preferred: &W,
) -> Result<(String, Option<String>), WireError> {
    let task_id = id(task_id, "taskId")?;
    let preferred = optional_id(preferred, "preferredSessionId")?;
    Ok((task_id, preferred))
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
    let mut batch = Vec::new();
    for i in 0..len {
        batch.push(events::message_event(&payloads.at(i), &path.index(i))?);
    }
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

/// `applyInboxPage(workspaceId, page, at?)` (SPEC §14): an inbox page of the workspace; `at`
/// (`{ stream, offset }`, the store's `streamPosition()` when the read began) places a page
/// that names no place of its own. The caller keeps its rows (the store names them by index).
pub fn apply_inbox_page<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    workspace: &W,
    page: &W,
    at: &W,
) -> Result<Reason, WireError> {
    let workspace = super::inbox::workspace(workspace)?;
    let at = optional_position(at)?.map(|(stream, offset)| (Box::from(stream.as_ref()), offset));
    let page = super::inbox::page(workspace, page, at)?;
    Ok(store.apply_inbox_page(page))
}

/// `applyInboxSeed(seed)`: the badge's boot seed (SPEC §14).
pub fn apply_inbox_seed<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    seed: &W,
) -> Result<Reason, WireError> {
    let (workspace, seed) = super::inbox::seed(seed)?;
    Ok(store.apply_inbox_seed(&workspace, seed))
}

/// `inboxReadFailed(workspaceId, at?)`: a read of the inbox that began at `at` (`{ stream,
/// offset }`) failed (SPEC §14).
pub fn inbox_read_failed<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    workspace: &W,
    at: &W,
) -> Result<Reason, WireError> {
    let workspace = super::inbox::workspace(workspace)?;
    let at = optional_position(at)?;
    Ok(store.inbox_read_failed(&workspace, at.as_ref().map(|(s, o)| (s.as_ref(), *o))))
}

/// The `(workspaceId, now?)` arguments of `inbox`: `now` the caller's clock, a timestamp.
pub fn inbox_args<W: Wire>(
    workspace: &W,
    now: &W,
) -> Result<(Box<str>, Option<crate::rules::time::Timestamp>), WireError> {
    let workspace = super::inbox::workspace(workspace)?;
    let now = decode::optional_timestamp(now, &Path::Root("now"))?;
    Ok((workspace, now))
}

/// `removeSession(sessionId)`: the session was deleted (SPEC §5).
pub fn remove_session<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    session_id: &W,
) -> Result<Reason, WireError> {
    let session_id = id(session_id, "sessionId")?;
    Ok(store.delete_session(&session_id))
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

/// An optional `{ stream, offset }` argument `at` (the inbox's calls).
fn optional_position<W: Wire>(at: &W) -> Result<Option<(W::Text, u64)>, WireError> {
    if at.is_absent() {
        Ok(None)
    } else {
        position(at, "at").map(Some)
    }
}

/// A `{ stream, offset }` argument.
fn position<W: Wire>(position: &W, name: &'static str) -> Result<(W::Text, u64), WireError> {
    let path = Path::Root(name);
    decode::object(position, &path)?;
    let stream = decode::text(&position.get("stream"), &path.key("stream"))?;
    let offset_path = path.key("offset");
    let offset = events::offset(&position.get("offset"), &offset_path)?.ok_or_else(|| {
        WireError::from(WireErrorKind::InvalidType {
            field: offset_path.text(),
            expected: "a non-negative integer up to 2^53 - 1",
            got: position.get("offset").kind().name(),
        })
    })?;
    Ok((stream, offset))
}

/// `applyStreamPosition({ stream, offset })`: where the REST state applied was read.
pub fn apply_stream_position<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    position: &W,
) -> Result<Reason, WireError> {
    let (stream, offset) = self::position(position, "position")?;
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
        let mut out = Vec::new();
        for i in 0..len {
            out.push(decode::string(&value.at(i), &key_path.index(i))?);
        }
        Ok(Some(out))
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
    let mut store = ProjectionStore::new();
    take_snapshot(&mut store, snapshot, Some(options), payload_of)?;
    Ok(store)
}

/// `store.merge(snapshot)`: another page's snapshot merged into the state held (SPEC §12), or
/// the snapshot's first error (nothing changes).
pub fn merge<W: Wire + Clone, P: Clone>(
    store: &mut ProjectionStore<P>,
    snapshot: &W,
    payload_of: impl Fn(W) -> P,
) -> Result<Reason, WireError> {
    take_snapshot(store, snapshot, None, payload_of)
}

/// A snapshot taken: with `hydrate` (its `{ restored? }` options) `store` becomes the snapshot's
/// ([`ProjectionStore::hydrate`]), else the snapshot merges into it ([`ProjectionStore::merge`]);
/// decoded whole first, so on an error nothing changes. One path for both (the wasm holds one
/// copy of the decoder's instance).
pub fn take_snapshot<W: Wire + Clone, P: Clone>(
    store: &mut ProjectionStore<P>,
    snapshot: &W,
    hydrate: Option<&W>,
    payload_of: impl Fn(W) -> P,
) -> Result<Reason, WireError> {
    let restored = match hydrate {
        Some(options) if !options.is_absent() => {
            let path = Path::Root("options");
            decode::object(options, &path)?;
            Some(decode::boolean(
                &options.get("restored"),
                &path.key("restored"),
            )?)
        }
        Some(_) => Some(false),
        None => None,
    };
    let input = super::snapshot::snapshot(snapshot, &Path::Root("snapshot"), payload_of)?;
    Ok(match restored {
        Some(restored) => {
            *store = ProjectionStore::hydrate(input, restored);
            Reason::Applied
        }
        None => store.merge(input),
    })
}

/// `applyTaskSnapshot(token, tasks)`.
pub fn apply_task_snapshot<W: Wire + Clone, P: Clone>(
    store: &mut ProjectionStore<P>,
    token: &W,
    tasks: &W,
    payload_of: impl Fn(W) -> P,
) -> Result<Reason, WireError> {
    let token = decode::unsigned(token, &Path::Root("token"))?.ok_or_else(|| {
        WireError::from(WireErrorKind::InvalidType {
            field: "token".into(),
            expected: "a fetch token from beginTaskFetch()",
            got: token.kind().name(),
        })
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

// ---- one call by name ----------------------------------------------------------------------------

/// The inputs of the store API [`dispatch`] makes by name, as the JS class names them: the calls
/// that change the state. A trace records these (and [`FRAME`]).
pub const INPUTS: [&str; 16] = [
    "applySessionList",
    "applyTurnList",
    "applyMessagePage",
    "applyMessageEvent",
    "applyMessageEvents",
    "applyTurnEvent",
    "applySessionEvent",
    "applyStatusSummaryEvent",
    "applyTaskUpdated",
    "removeTask",
    "removeSession",
    "applyTaskSnapshot",
    "beginTaskFetch",
    "beginSelection",
    "settleSelection",
    "setActiveTask",
];

/// The queries [`dispatch`] answers by name (they change nothing).
pub const QUERIES: [&str; 8] = [
    "sessionPendingAction",
    "currentTurnId",
    "pendingClarification",
    "hiddenMessageIds",
    "hasPendingPermission",
    "taskPendingAction",
    "taskStatusSummary",
    "pendingOwner",
];

/// The names with which [`dispatch`] starts the state over (`dispose`, and `renew` as the store
/// scenario files use it).
pub const RESETS: [&str; 2] = ["dispose", "renew"];

/// The input a trace records for a `server.hello` frame; [`dispatch`] applies no other frame.
pub const FRAME: &str = "applyFrame";

/// Why [`dispatch`] made no store call, or the store refused it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CallError {
    /// The store refused it (the typed error its JS method throws).
    #[error(transparent)]
    Wire(#[from] WireError),
    /// Not a call [`dispatch`] knows (nor an `applyFrame` of a `server.hello` frame).
    #[error("unknown call \"{0}\"")]
    UnknownCall(String),
    /// A respond that may not start (SPEC §13): its stable code.
    #[error("{}", .0.as_str())]
    Refused(crate::rules::action::Refusal),
}

/// `respondStart(sessionId, pendingId, kind?)` (SPEC §13): the attempt, or why it may not start.
/// `kind` is `"clarification"` (the default: a bundle) or `"permission"`.
pub fn respond_start<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    session_id: &W,
    pending_id: &W,
    kind: &W,
) -> Result<Result<crate::store::Started, crate::rules::action::Refusal>, WireError> {
    let session_id = id(session_id, "sessionId")?;
    let pending_id = id(pending_id, "pendingId")?;
    let permission = match kind.string().as_ref().map(AsRef::as_ref) {
        None if kind.is_absent() => false,
        Some("clarification") => false,
        Some("permission") => true,
        _ => {
            return Err(WireError::from(WireErrorKind::InvalidValue {
                field: "kind".into(),
                problem: "expected \"clarification\" or \"permission\"".into(),
            }))
        }
    };
    Ok(if permission {
        store.permission_start(&session_id, &pending_id)
    } else {
        store.respond_start(&session_id, &pending_id)
    })
}

/// `respondReply(attempt, reply)` (SPEC §13; the reply's shape: [`super::action::reply`]).
pub fn respond_reply<W: Wire, P: Clone>(
    store: &mut ProjectionStore<P>,
    attempt: &W,
    reply: &W,
) -> Result<crate::store::Replied, WireError> {
    let attempt = decode::unsigned(attempt, &Path::Root("attempt"))?.ok_or_else(|| {
        WireError::from(WireErrorKind::InvalidValue {
            field: "attempt".into(),
            problem: "expected the attempt respondStart returned".into(),
        })
    })?;
    let (transport, position) = super::action::reply(reply, &Path::Root("reply"))?;
    Ok(store.respond_reply(attempt, transport, position))
}

/// What a call [`dispatch`] made gave back.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome<'s, P> {
    /// An input's reason (`lastApplyReason()`); `applyFrame`'s is [`Reason::Hello`].
    Applied(Reason),
    /// `beginTaskFetch`'s token.
    Token(u64),
    /// `beginSelection`'s `{ ticket, reload }`.
    Selection(SelectionTicket),
    /// `settleSelection`'s navigation and reason.
    Settled(Navigation, Reason),
    /// `setActiveTask`, `dispose` and `renew`: nothing.
    Done,
    /// A query's answer and reason (`lastReason()`).
    Answer(Answer<'s, P>, Reason),
    /// `respondStart`'s attempt.
    Started(crate::store::Started),
    /// `respondReply`'s outcome.
    Replied(crate::store::Replied),
}

/// A query's answer as the store gives it (`None`: not known yet, `undefined` in JS).
#[derive(Clone, Debug, PartialEq)]
pub enum Answer<'s, P> {
    /// `sessionPendingAction`, `taskPendingAction`.
    Action(Option<Option<crate::rules::model::PendingAction>>),
    /// `currentTurnId`.
    Turn(crate::rules::turn::CurrentTurn<&'s str>),
    /// `pendingClarification`.
    Clarification(Option<Option<crate::store::Bundle<'s>>>),
    /// `hiddenMessageIds`.
    Hidden(Option<Vec<&'s str>>),
    /// `hasPendingPermission`.
    Permission(Option<bool>),
    /// `taskStatusSummary`: the payload held.
    Summary(Option<Option<&'s P>>),
    /// `pendingOwner`: the session to open, `Some(None)` for task-only navigation (owned: it may
    /// be the preferred session the call was given).
    Owner(Option<Option<String>>),
    /// `inbox`: the workspace's inbox (SPEC §14).
    Inbox(crate::store::InboxAnswer<'s>),
}

impl<P> Outcome<'_, P> {
    /// The reason the call gave, when it has one (`beginTaskFetch`, `beginSelection`,
    /// `setActiveTask`, `dispose` and `renew` have none).
    pub fn reason(&self) -> Option<Reason> {
        match self {
            Outcome::Applied(reason) | Outcome::Settled(_, reason) | Outcome::Answer(_, reason) => {
                Some(*reason)
            }
            Outcome::Token(_)
            | Outcome::Selection(_)
            | Outcome::Done
            | Outcome::Started(_)
            | Outcome::Replied(_) => None,
        }
    }
}

/// One call of the store API by its JS name, `call(...args)`: the arguments decoded as the wasm
/// class decodes them (the functions above; a query's ids as [`id`], `pendingOwner`'s preferred
/// session as an optional string), then one store call. Every name of [`INPUTS`], [`QUERIES`]
/// and [`RESETS`], and [`FRAME`]; any other is [`CallError::UnknownCall`].
///
/// `arg(i)` is the `i`-th argument (`undefined` past the last); `payload_of` turns a summary's
/// wire value into what the store holds; `ticket` gives a `beginSelection` its ticket id (called
/// once, before the arguments are decoded, by that call only). Trace replay
/// (`trace::apply`), the store scenario runners, the convergence properties, the tape tests and
/// the `store` fuzz target all run their calls through it.
pub fn dispatch<'s, W: Wire + Clone, P: Clone>(
    store: &'s mut ProjectionStore<P>,
    call: &str,
    arg: impl Fn(usize) -> W,
    payload_of: impl Fn(W) -> P,
    ticket: impl FnOnce() -> String,
) -> Result<Outcome<'s, P>, CallError> {
    let applied = |reason: Reason| Ok(Outcome::Applied(reason));
    let session = |store: &'s ProjectionStore<P>| -> Result<_, CallError> {
        Ok((store, id(&arg(0), "sessionId")?))
    };
    let task = |store: &'s ProjectionStore<P>| -> Result<_, CallError> {
        Ok((store, id(&arg(0), "taskId")?))
    };
    let answer = |(answer, reason)| Ok(Outcome::Answer(answer, reason));
    match call {
        "applySessionList" => applied(apply_session_list(store, &arg(0), &arg(1))?),
        "applyTurnList" => applied(apply_turn_list(store, &arg(0), &arg(1))?),
        "applyMessagePage" => applied(apply_message_page(store, &arg(0), &arg(1))?),
        "applyMessageEvent" => applied(apply_message_event(store, &arg(0), &arg(1))?),
        "applyMessageEvents" => applied(apply_message_events(store, &arg(0), &arg(1))?),
        "applyTurnEvent" => applied(apply_turn_event(store, &arg(0))?),
        "applySessionEvent" => applied(apply_session_event(store, &arg(0))?),
        "applyStatusSummaryEvent" => {
            applied(apply_status_summary_event(store, &arg(0), payload_of)?)
        }
        "applyTaskUpdated" => applied(apply_task_updated(store, &arg(0), payload_of)?),
        "removeTask" => applied(remove_task(store, &arg(0))?),
        "removeSession" => applied(remove_session(store, &arg(0))?),
        "applyTaskSnapshot" => applied(apply_task_snapshot(store, &arg(0), &arg(1), payload_of)?),
        "applyInboxPage" => applied(apply_inbox_page(store, &arg(0), &arg(1), &arg(2))?),
        "applyInboxSeed" => applied(apply_inbox_seed(store, &arg(0))?),
        "inboxReadFailed" => applied(inbox_read_failed(store, &arg(0), &arg(1))?),
        "inbox" => {
            let (workspace, now) = inbox_args(&arg(0), &arg(1))?;
            let answer = store.inbox(&workspace, now.as_ref());
            let reason = Reason::Inbox(answer.state);
            Ok(Outcome::Answer(Answer::Inbox(answer), reason))
        }
        FRAME => {
            // Only `server.hello` (a trace records the others as the apply call `applyFrame`
            // routes them to).
            let frame = arg(0);
            if frame.get("type").string().as_ref().map(AsRef::as_ref) != Some("server.hello") {
                return Err(CallError::UnknownCall(
                    "applyFrame (not server.hello)".into(),
                ));
            }
            applied(Reason::Hello(apply_hello(store, &frame.get("payload"))?))
        }
        "beginTaskFetch" => Ok(Outcome::Token(store.begin_task_fetch())),
        "respondStart" => match respond_start(store, &arg(0), &arg(1), &arg(2))? {
            Ok(started) => Ok(Outcome::Started(started)),
            Err(refusal) => Err(CallError::Refused(refusal)),
        },
        "respondReply" => Ok(Outcome::Replied(respond_reply(store, &arg(0), &arg(1))?)),
        "beginSelection" => {
            let ticket = ticket();
            Ok(Outcome::Selection(begin_selection(
                store,
                &arg(0),
                &arg(1),
                ticket,
            )?))
        }
        "settleSelection" => {
            let (navigation, reason) = settle_selection(store, &arg(0), &arg(1))?;
            Ok(Outcome::Settled(navigation, reason))
        }
        "setActiveTask" => {
            set_active_task(store, &arg(0))?;
            Ok(Outcome::Done)
        }
        "dispose" | "renew" => {
            *store = ProjectionStore::new();
            Ok(Outcome::Done)
        }
        "sessionPendingAction" => {
            let (store, s) = session(store)?;
            let (action, reason) = store.session_pending_action(&s);
            answer((Answer::Action(action), reason))
        }
        "currentTurnId" => {
            let (store, s) = session(store)?;
            let (turn, reason) = store.current_turn_id(&s);
            answer((Answer::Turn(turn), reason))
        }
        "pendingClarification" => {
            let (store, s) = session(store)?;
            let (bundle, reason) = store.pending_clarification(&s);
            answer((Answer::Clarification(bundle), reason))
        }
        "hiddenMessageIds" => {
            let (store, s) = session(store)?;
            let (ids, reason) = store.hidden_message_ids(&s);
            answer((Answer::Hidden(ids), reason))
        }
        "hasPendingPermission" => {
            let (store, s) = session(store)?;
            let (blocked, reason) = store.has_pending_permission(&s);
            answer((Answer::Permission(blocked), reason))
        }
        "taskPendingAction" => {
            let (store, t) = task(store)?;
            let (action, reason) = store.task_pending_action(&t);
            answer((Answer::Action(action), reason))
        }
        "taskStatusSummary" => {
            let (store, t) = task(store)?;
            let (summary, reason) = store.task_status_summary(&t);
            answer((Answer::Summary(summary), reason))
        }
        "pendingOwner" => {
            let (t, preferred) = owner_args(&arg(0), &arg(1))?;
            let (owner, reason) = store.pending_owner(&t, preferred.as_deref());
            let owner = owner.map(|o| o.map(str::to_owned));
            answer((Answer::Owner(owner), reason))
        }
        other => Err(CallError::UnknownCall(other.to_owned())),
    }
}
