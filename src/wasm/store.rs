//! The wasm side of `ProjectionStore`: [`crate::store::ProjectionStore`] over JS values, with
//! query results that keep their identity while the session or task they describe is unchanged
//! (for React's `useSyncExternalStore`). `js/store.js` wraps it: it reads every argument once
//! into plain values before calling here, keeps the listeners and delivers change notifications
//! (so no caller code runs under a wasm frame), and hides the `__` boundary methods.
//! Translation only: every decision is the store's (and so the rules').

use std::cell::{Cell, RefCell};

use crate::store::hash::HashMap;
use js_sys::{Array, Object};
use wasm_bindgen::prelude::*;

use crate::rules::model::PendingAction;
use crate::rules::model::Revision;
use crate::rules::revision::PendingProjection;
use crate::rules::turn::CurrentTurn;
use crate::store::{MessageEventKind, MessageParts};
use crate::store::{Navigation, ProjectionStore as Store, Reason};
use crate::wire::store_api as api;
use crate::wire::{fast, integral_u64, MessageMeaning};

use super::convert::{js_error, misuse, navigation, set, with_tape};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = include_str!("types/store.d.ts");
use crate::wire::tape::{Tape, Value};

thread_local! {
    static CLARIFICATION: JsValue = JsValue::from_str(PendingAction::Clarification.as_str());
    static PERMISSION: JsValue = JsValue::from_str(PendingAction::Permission.as_str());
}

/// A pending-action answer: `undefined` while unknown (SPEC §11), `null` when clean.
fn action(action: Option<Option<PendingAction>>) -> JsValue {
    match action {
        Some(Some(PendingAction::Clarification)) => CLARIFICATION.with(Clone::clone),
        Some(Some(PendingAction::Permission)) => PERMISSION.with(Clone::clone),
        Some(None) => JsValue::NULL,
        None => JsValue::UNDEFINED,
    }
}

/// The kept object (a status summary: the caller's own object) a `KEPT` cell of the tape
/// stands for.
fn kept(objects: &Array, value: Value<'_>) -> JsValue {
    value
        .kept()
        .and_then(|i| u32::try_from(i).ok())
        .map_or(JsValue::NULL, |i| objects.get(i))
}

/// Which cached query a result belongs to (its index in the cache array).
#[derive(Clone, Copy)]
enum Query {
    CurrentTurn = 0,
    Clarification = 1,
    Hidden = 2,
}

/// A cached query result: the version it was computed at, the JS value handed out, its reason,
/// and its content (to keep the JS value when a recomputation gives the same answer).
struct Cached {
    version: u64,
    /// `None` until first computed.
    value: Option<JsValue>,
    reason: Reason,
    content: String,
}

/// Results of one query by session id.
type Cache = HashMap<Box<str>, Cached>;

/// The stateful engine. Feed it every REST snapshot and WebSocket event; read small answers.
#[wasm_bindgen(js_name = ProjectionStore, skip_typescript)]
pub struct JsProjectionStore {
    store: RefCell<Store<JsValue>>,
    cache: RefCell<[Cache; 3]>,
    last_reason: Cell<Reason>,
    /// The reason of the last apply call alone (`lastApplyReason()`: queries leave it).
    last_apply: Cell<Reason>,
    /// `last_reason` when the trace recorder asked for the held ids (`__held(false)`), put back
    /// by `__held(true)` after its queries.
    #[cfg(feature = "development")]
    kept_reason: Cell<Reason>,
    disposed: Cell<bool>,
    /// Whether a row of the message page being applied by `store.js` changed something.
    page_changed: Cell<bool>,
    /// Strings `store.js` passes by handle (session, task, turn and pending ids, types,
    /// statuses, epochs: what repeats from event to event), so each crosses the boundary once.
    /// Handle `h` is `names[h - 1]`; 0 means absent.
    names: RefCell<Vec<Box<str>>>,
    /// Where `store.js` writes the text that does not repeat (message id, timestamps) for the
    /// next fast-path call: one buffer, no allocation per string.
    scratch: RefCell<Vec<u8>>,
    /// The last cached query key built (reused: no allocation when the answer is unchanged).
    key: RefCell<String>,
}

type JsResult = Result<JsValue, JsValue>;

// Every query below answers `undefined` while not known yet (SPEC §11, `rules::knowledge`); the
// doc comment of each export names its known answers only (they are copied into the JS glue,
// whose gzip budget is nearly full).

#[wasm_bindgen(js_class = ProjectionStore)]
impl JsProjectionStore {
    /// `new ProjectionStore()`.
    #[wasm_bindgen(constructor)]
    pub fn new(_options: JsValue) -> JsProjectionStore {
        JsProjectionStore {
            store: RefCell::new(Store::without_change_tracking()),
            cache: RefCell::default(),
            last_reason: Cell::new(Reason::Unchanged),
            last_apply: Cell::new(Reason::Unchanged),
            #[cfg(feature = "development")]
            kept_reason: Cell::new(Reason::Unchanged),
            disposed: Cell::new(false),
            page_changed: Cell::new(false),
            names: RefCell::new(Vec::new()),
            scratch: RefCell::new(Vec::new()),
            key: RefCell::new(String::new()),
        }
    }

    /// `f` over the store and the tape of this call's arguments.
    fn mutate_tape(
        &self,
        f: impl FnOnce(&mut Store<JsValue>, Tape<'_>) -> Result<Reason, crate::WireError>,
    ) -> Result<(), JsValue> {
        let reason = with_tape(|t| f(&mut self.store.borrow_mut(), t))?;
        self.applied(reason);
        Ok(())
    }

    /// Records the reason of an apply call (for `lastReason()` and `lastApplyReason()`).
    fn applied(&self, reason: Reason) {
        self.last_reason.set(reason);
        self.last_apply.set(reason);
    }

    fn mutate(
        &self,
        f: impl FnOnce(&mut Store<JsValue>) -> Result<Reason, crate::WireError>,
    ) -> Result<(), JsValue> {
        let result = {
            let mut store = self.store.borrow_mut();
            f(&mut store)
        };
        match result {
            Ok(reason) => {
                self.applied(reason);
                Ok(())
            }
            Err(error) => Err(js_error(error)),
        }
    }

    /// A query result from the cache while `version` is unchanged. After a change the answer is
    /// recomputed, and the cached JS object is still returned when the answer's content (its
    /// `key`) is the same: identity changes only when the answer does.
    fn cached<T>(
        &self,
        query: Query,
        id: &str,
        version: u64,
        compute: impl FnOnce() -> (T, Reason),
        key: impl FnOnce(&T, &mut String),
        build: impl FnOnce(&T) -> JsValue,
    ) -> JsValue {
        let mut cache = self.cache.borrow_mut();
        let Some(per_query) = cache.get_mut(query as usize) else {
            return JsValue::UNDEFINED;
        };
        // One lookup; a new entry starts with no value.
        let entry = per_query.entry_ref(id).or_insert_with(|| Cached {
            version: 0,
            value: None,
            reason: Reason::Unchanged,
            content: String::new(),
        });
        // Version 0: the store holds no entry, and whether the session is removed (known) or not
        // heard of (unknown) has no version: computed every time.
        if let Some(value) = &entry.value {
            if entry.version == version && version != 0 {
                self.last_reason.set(entry.reason);
                return value.clone();
            }
        }
        let (answer, reason) = compute();
        self.last_reason.set(reason);
        let mut content = self.key.borrow_mut();
        content.clear();
        key(&answer, &mut content);
        entry.version = version;
        entry.reason = reason;
        if let Some(value) = &entry.value {
            if entry.content == *content {
                return value.clone();
            }
        }
        let value = build(&answer);
        // Shared between callers until the answer changes: frozen, so no caller alters another's.
        if value.is_object() {
            Object::freeze(value.unchecked_ref::<Object>());
        }
        entry.value = Some(value.clone());
        entry.content.clone_from(&content);
        value
    }

    // ---- REST -----------------------------------------------------------------------------------

    /// `applySessionList(taskId, sessions)`: a task's session list (newest first).
    #[wasm_bindgen(js_name = applySessionList, skip_typescript)]
    pub fn apply_session_list(&self) -> Result<(), JsValue> {
        self.mutate_tape(|s, t| api::apply_session_list(s, &t.arg(0), &t.arg(1)))
    }

    /// `applyTurnList(sessionId, turns)`.
    #[wasm_bindgen(js_name = applyTurnList, skip_typescript)]
    pub fn apply_turn_list(&self) -> Result<(), JsValue> {
        self.mutate_tape(|s, t| api::apply_turn_list(s, &t.arg(0), &t.arg(1)))
    }

    /// `applyMessagePage(sessionId, messages)`.
    #[wasm_bindgen(js_name = applyMessagePage, skip_typescript)]
    pub fn apply_message_page(&self) -> Result<(), JsValue> {
        self.mutate_tape(|s, t| api::apply_message_page(s, &t.arg(0), &t.arg(1)))
    }

    /// `beginTaskFetch()` → token for `applyTaskSnapshot`.
    #[wasm_bindgen(js_name = beginTaskFetch, skip_typescript)]
    pub fn begin_task_fetch(&self) -> f64 {
        // Tokens count up from 1; far below 2^53.
        #[allow(clippy::cast_precision_loss)]
        let token = self.store.borrow_mut().begin_task_fetch() as f64;
        token
    }

    /// `applyTaskSnapshot(token, tasks)`: a task list or boot snapshot (`objects`: the kept
    /// summaries the tape refers to).
    #[wasm_bindgen(js_name = applyTaskSnapshot, skip_typescript)]
    pub fn apply_task_snapshot(&self, objects: Array) -> Result<(), JsValue> {
        self.mutate_tape(|s, t| {
            api::apply_task_snapshot(s, &t.arg(0), &t.arg(1), |v| kept(&objects, v))
        })
    }

    // ---- WebSocket ------------------------------------------------------------------------------

    /// `applyMessageEvent(kind, payload)` with `kind` ∈ `"added" | "updated" | "deleted"`.
    #[wasm_bindgen(js_name = applyMessageEvent, skip_typescript)]
    pub fn apply_message_event(&self) -> Result<(), JsValue> {
        self.mutate_tape(|s, t| api::apply_message_event(s, &t.arg(0), &t.arg(1)))
    }

    /// `applyMessageEvents(kind, payloads)`: a batch, validated whole before any is applied.
    #[wasm_bindgen(js_name = applyMessageEvents, skip_typescript)]
    pub fn apply_message_events(&self) -> Result<(), JsValue> {
        self.mutate_tape(|s, t| api::apply_message_events(s, &t.arg(0), &t.arg(1)))
    }

    /// `__intern(text)` → a handle for `text` in the fast-path calls below (`store.js` keeps
    /// the reverse map, and resets both with `__internReset` when they grow large).
    #[wasm_bindgen(js_name = __intern, skip_typescript)]
    pub fn intern(&self, text: JsValue) -> Result<u32, JsValue> {
        let text = text.as_string().ok_or_else(|| misuse("text"))?;
        let mut names = self.names.borrow_mut();
        names.push(text.into_boxed_str());
        u32::try_from(names.len()).map_err(|_| misuse("text"))
    }

    /// `__internReset()`: forgets every handle.
    #[wasm_bindgen(js_name = __internReset, skip_typescript)]
    pub fn intern_reset(&self) {
        *self.names.borrow_mut() = Vec::new();
    }

    /// `__scratch(capacity)` → the address of a buffer of at least `capacity` bytes where
    /// `store.js` writes the text of its next fast-path call (valid until the next
    /// `__scratch`). A capacity the memory cannot hold is a typed error, not an abort.
    #[wasm_bindgen(js_name = __scratch, skip_typescript)]
    pub fn scratch(&self, capacity: f64) -> Result<u32, JsValue> {
        let capacity = crate::wire::integral_u64(capacity)
            .and_then(|c| usize::try_from(c).ok())
            .ok_or_else(|| misuse("capacity"))?;
        let mut scratch = self.scratch.borrow_mut();
        if let Some(more) = capacity.checked_sub(scratch.len()).filter(|&n| n > 0) {
            scratch.try_reserve_exact(more).map_err(|_| {
                js_error(crate::WireError::InvalidValue {
                    field: "text".into(),
                    problem: "too long for the memory left".into(),
                })
            })?;
            scratch.resize(capacity, 0);
        }
        // wasm32: an address fits u32.
        u32::try_from(scratch.as_ptr() as usize).map_err(|_| misuse("capacity"))
    }

    /// The fast path of `applyMessageEvent` and of one row of `applyMessagePage`, with the
    /// repeating strings by handle (0: absent) and the message id and timestamps in the scratch
    /// buffer, one after the other (a length of -1: absent). `kind` and `action` are the codes of
    /// [`crate::wire::fast`]; the revision is present when `epoch` is. The fields mean what they
    /// mean to the decoder: both map them with [`crate::wire::MessageMeaning::of`].
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = __applyMessage, skip_typescript)]
    pub fn apply_message_handles(
        &self,
        kind: u8,
        session: u32,
        task: u32,
        id_len: i32,
        turn: u32,
        message_type: u32,
        status: u32,
        pending: u32,
        question_total: Option<f64>,
        created_len: i32,
        updated_len: i32,
        action_code: u8,
        epoch: u32,
        sequence: f64,
    ) -> Result<(), JsValue> {
        let names = self.names.borrow();
        let name = |handle: u32| -> Result<Option<&str>, JsValue> {
            match handle.checked_sub(1) {
                None => Ok(None),
                Some(h) => usize::try_from(h)
                    .ok()
                    .and_then(|h| names.get(h))
                    .map(|n| Some(&**n))
                    .ok_or_else(|| misuse("handle")),
            }
        };
        let scratch = self.scratch.borrow();
        let mut at = 0usize;
        let mut text = |len: i32| -> Result<Option<&str>, JsValue> {
            let Ok(len) = usize::try_from(len) else {
                return Ok(None);
            };
            let end = at.checked_add(len).ok_or_else(|| misuse("length"))?;
            let bytes = scratch.get(at..end).ok_or_else(|| misuse("length"))?;
            at = end;
            std::str::from_utf8(bytes)
                .map(Some)
                .map_err(|_| misuse("text"))
        };
        let id = text(id_len)?.ok_or_else(|| misuse("id"))?;
        let created_at = text(created_len)?;
        let updated_at = text(updated_len)?;
        let session_id = name(session)?.ok_or_else(|| misuse("session"))?;
        let task_id = name(task)?;
        let meaning = MessageMeaning::of(
            name(turn)?,
            name(message_type)?,
            name(status)?,
            name(pending)?,
            created_at,
            updated_at,
        );
        let parts = MessageParts {
            id,
            turn_id: meaning.turn_id,
            kind: meaning.kind,
            status: meaning.status,
            pending_id: meaning.pending_id,
            question_total,
            created_at: &meaning.created_at,
            updated_at: meaning.updated_at.as_ref(),
        };
        let event_kind = match kind {
            fast::kind::ADDED => Some(MessageEventKind::Added),
            fast::kind::UPDATED => Some(MessageEventKind::Updated),
            fast::kind::DELETED => Some(MessageEventKind::Deleted),
            fast::kind::PAGE_ROW | fast::kind::PAGE_FIRST => None,
            _ => return Err(misuse("kind")),
        };
        let action = match action_code {
            fast::action::ABSENT => None,
            fast::action::CLEAN => Some(None),
            fast::action::CLARIFICATION => Some(Some(PendingAction::Clarification)),
            fast::action::PERMISSION => Some(Some(PendingAction::Permission)),
            _ => return Err(misuse("action")),
        };
        let revision = match name(epoch)? {
            Some(epoch) => Some(Revision {
                epoch: epoch.to_owned(),
                sequence: integral_u64(sequence).ok_or_else(|| misuse("sequence"))?,
            }),
            None => None,
        };
        let projection = (action.is_some() || revision.is_some())
            .then_some(PendingProjection { action, revision });
        let Some(event_kind) = event_kind else {
            let page_changed = self.page_changed.get() && kind == fast::kind::PAGE_ROW;
            return self.mutate(|s| {
                let row = s.apply_message_rows(session_id, [parts]);
                let changed = page_changed || row == Reason::Applied;
                self.page_changed.set(changed);
                Ok(if changed {
                    Reason::Applied
                } else {
                    Reason::Unchanged
                })
            });
        };
        self.mutate(|s| {
            Ok(s.apply_message(event_kind, session_id, task_id, &parts, projection.as_ref()))
        })
    }

    /// `applyTurnEvent(payload)`: a turn started or completed.
    #[wasm_bindgen(js_name = applyTurnEvent, skip_typescript)]
    pub fn apply_turn_event(&self) -> Result<(), JsValue> {
        self.mutate_tape(|s, t| api::apply_turn_event(s, &t.arg(0)))
    }

    /// `applySessionEvent(payload)`: a session's state (and projection) changed.
    #[wasm_bindgen(js_name = applySessionEvent, skip_typescript)]
    pub fn apply_session_event(&self) -> Result<(), JsValue> {
        self.mutate_tape(|s, t| api::apply_session_event(s, &t.arg(0)))
    }

    /// `applyStatusSummaryEvent(payload)`: `task.status_summary.updated`.
    #[wasm_bindgen(js_name = applyStatusSummaryEvent, skip_typescript)]
    pub fn apply_status_summary_event(&self, objects: Array) -> Result<(), JsValue> {
        self.mutate_tape(|s, t| {
            api::apply_status_summary_event(s, &t.arg(0), |v| kept(&objects, v))
        })
    }

    /// `applyTaskUpdated(payload)`: `task.updated`.
    #[wasm_bindgen(js_name = applyTaskUpdated, skip_typescript)]
    pub fn apply_task_updated(&self, objects: Array) -> Result<(), JsValue> {
        self.mutate_tape(|s, t| api::apply_task_updated(s, &t.arg(0), |v| kept(&objects, v)))
    }

    /// `removeTask(taskId)`.
    #[wasm_bindgen(js_name = removeTask, skip_typescript)]
    pub fn remove_task(&self) -> Result<(), JsValue> {
        self.mutate_tape(|s, t| api::remove_task(s, &t.arg(0)))
    }

    /// `__hello()`: a `server.hello` frame's payload (on the tape), for `applyFrame`; whether the
    /// client refetches its REST state (`lastReason()`: `first_hello`, `same_epoch`, `new_epoch`).
    // Also `resumed` (no refetch). The payload's `stream` and `offset` are validated here, and
    // `applyFrame` reports them from its own copy. (Not in the doc comment above: wasm-bindgen
    // copies doc comments into the JS glue, whose gzip budget is nearly full.)
    #[wasm_bindgen(js_name = __hello, skip_typescript)]
    pub fn hello(&self) -> Result<bool, JsValue> {
        let hello = with_tape(|t| api::apply_hello_at(&mut self.store.borrow_mut(), &t.arg(0)))?;
        self.applied(Reason::Hello(hello));
        Ok(hello.refetch())
    }

    // `__frameOffset(offset)`: `applyFrame` took a frame at `offset` of the stream (an integer
    // `store.js` checked). Moves the stream position (rules::connection). Not a doc comment (the
    // glue's gzip budget).
    #[wasm_bindgen(js_name = __frameOffset, skip_typescript)]
    pub fn frame_offset(&self, offset: f64) {
        if let Some(offset) = integral_u64(offset) {
            self.store.borrow_mut().apply_frame_offset(offset);
        }
    }

    // `applyStreamPosition({ stream, offset })` (tape): where the REST state applied was read.
    #[wasm_bindgen(js_name = applyStreamPosition, skip_typescript)]
    pub fn apply_stream_position(&self) -> Result<(), JsValue> {
        self.mutate_tape(|s, t| api::apply_stream_position(s, &t.arg(0)))
    }

    // `streamPosition()` → `{ stream, offset }` or `null`.
    #[wasm_bindgen(js_name = streamPosition, skip_typescript)]
    pub fn stream_position(&self) -> JsValue {
        match self.store.borrow().stream_position() {
            (Some(stream), Some(offset)) => {
                let position = Object::new();
                set(&position, "stream", &JsValue::from_str(stream));
                // Below 2^53: the decoders refuse larger offsets.
                #[allow(clippy::cast_precision_loss)]
                let offset = offset as f64;
                set(&position, "offset", &JsValue::from_f64(offset));
                position.into()
            }
            _ => JsValue::NULL,
        }
    }

    // `restored()`: hydrated as restored, not yet confirmed by a hello or a task snapshot.
    #[wasm_bindgen(skip_typescript)]
    pub fn restored(&self) -> bool {
        self.store.borrow().restored()
    }

    // `__dehydrate(summaries)` (options on the tape) → the snapshot as JSON text, each held summary
    // written as its index in `summaries` (pushed here) for `store.js` to replace with a copy of
    // the caller's object. No query runs: `lastReason()` stays as it was.
    #[wasm_bindgen(js_name = __dehydrate, skip_typescript)]
    pub fn dehydrate(&self, summaries: Array) -> Result<String, JsValue> {
        let store = self.store.borrow();
        with_tape(|t| {
            api::dehydrate(&store, &t.arg(0), |payload, out| {
                let index = summaries.push(payload).saturating_sub(1);
                crate::text::push_uint(out, u64::from(index));
            })
        })
    }

    // `__hydrate(objects)` (snapshot and options on the tape): this store (a new one, `store.js`
    // made it) becomes the snapshot's; on an error nothing changes.
    #[wasm_bindgen(js_name = __hydrate, skip_typescript)]
    pub fn hydrate(&self, objects: Array) -> Result<(), JsValue> {
        let hydrated = with_tape(|t| api::hydrate(&t.arg(0), &t.arg(1), |v| kept(&objects, v)))?;
        let track = self.store.borrow().tracks_changes();
        let mut store = self.store.borrow_mut();
        *store = hydrated;
        store.set_change_tracking(track);
        *self.cache.borrow_mut() = Default::default();
        self.applied(Reason::Applied);
        Ok(())
    }

    // ---- queries --------------------------------------------------------------------------------

    /// The id argument (the first on the tape) of a query.
    fn query_id(name: &'static str) -> Result<String, JsValue> {
        with_tape(|t| api::id(&t.arg(0), name))
    }

    /// `sessionPendingAction(sessionId)` → `"clarification" | "permission" | null`.
    #[wasm_bindgen(js_name = sessionPendingAction, skip_typescript)]
    pub fn session_pending_action(&self) -> JsResult {
        let id = Self::query_id("sessionId")?;
        Ok(self.session_pending_action_of(&id))
    }

    fn session_pending_action_of(&self, id: &str) -> JsValue {
        let (value, reason) = self.store.borrow().session_pending_action(id);
        self.last_reason.set(reason);
        action(value)
    }

    /// `currentTurnId(sessionId)` → `string | null | undefined`.
    #[wasm_bindgen(js_name = currentTurnId, skip_typescript)]
    pub fn current_turn_id(&self) -> JsResult {
        let id = Self::query_id("sessionId")?;
        Ok(self.current_turn_id_of(&id))
    }

    fn current_turn_id_of(&self, id: &str) -> JsValue {
        let store = self.store.borrow();
        self.cached(
            Query::CurrentTurn,
            id,
            store.discovery_version(id),
            || store.current_turn_id(id),
            |current, key| match current {
                CurrentTurn::Unknown => key.push('u'),
                CurrentTurn::None => key.push('n'),
                CurrentTurn::Turn(turn) => {
                    key.push('t');
                    key.push_str(turn);
                }
            },
            |current| match current {
                CurrentTurn::Unknown => JsValue::UNDEFINED,
                CurrentTurn::None => JsValue::NULL,
                CurrentTurn::Turn(turn) => JsValue::from_str(turn),
            },
        )
    }

    /// `pendingClarification(sessionId)` → `{ pending_id, message_ids } | null`; the same
    /// (frozen) object while the answer is unchanged.
    #[wasm_bindgen(js_name = pendingClarification, skip_typescript)]
    pub fn pending_clarification(&self) -> JsResult {
        let id = Self::query_id("sessionId")?;
        Ok(self.pending_clarification_of(&id))
    }

    fn pending_clarification_of(&self, id: &str) -> JsValue {
        let store = self.store.borrow();
        self.cached(
            Query::Clarification,
            id,
            store.discovery_version(id),
            || store.pending_clarification(id),
            |bundle, key| {
                if bundle.is_none() {
                    key.push('u');
                }
                if let Some(Some(bundle)) = bundle {
                    key.push('b');
                    key.push_str(bundle.pending_id.unwrap_or("\u{2}"));
                    for m in &bundle.message_ids {
                        key.push('\u{1}');
                        key.push_str(m);
                    }
                }
            },
            |bundle| match bundle {
                None => JsValue::UNDEFINED,
                Some(None) => JsValue::NULL,
                Some(Some(bundle)) => {
                    let object = Object::new();
                    let pending_id = bundle.pending_id.map_or(JsValue::NULL, JsValue::from_str);
                    set(&object, "pending_id", &pending_id);
                    let ids: Array = bundle
                        .message_ids
                        .iter()
                        .map(|m| JsValue::from_str(m))
                        .collect();
                    Object::freeze(&ids);
                    set(&object, "message_ids", &ids);
                    object.into()
                }
            },
        )
    }

    /// `hiddenMessageIds(sessionId)` → the ids an overlay renders (hide them from the
    /// transcript); the same (frozen) array while the answer is unchanged.
    #[wasm_bindgen(js_name = hiddenMessageIds, skip_typescript)]
    pub fn hidden_message_ids(&self) -> JsResult {
        let id = Self::query_id("sessionId")?;
        Ok(self.hidden_message_ids_of(&id))
    }

    fn hidden_message_ids_of(&self, id: &str) -> JsValue {
        let store = self.store.borrow();
        self.cached(
            Query::Hidden,
            id,
            store.discovery_version(id),
            || store.hidden_message_ids(id),
            |ids, key| {
                let Some(ids) = ids else {
                    key.push('u');
                    return;
                };
                key.push('k');
                for (i, m) in ids.iter().enumerate() {
                    if i > 0 {
                        key.push('\u{1}');
                    }
                    key.push_str(m);
                }
            },
            |ids| match ids {
                None => JsValue::UNDEFINED,
                Some(ids) => ids
                    .iter()
                    .map(|m| JsValue::from_str(m))
                    .collect::<Array>()
                    .into(),
            },
        )
    }

    /// `hasPendingPermission(sessionId)` → boolean.
    #[wasm_bindgen(js_name = hasPendingPermission, skip_typescript)]
    pub fn has_pending_permission(&self) -> JsResult {
        let id = Self::query_id("sessionId")?;
        Ok(self.has_pending_permission_of(&id))
    }

    fn has_pending_permission_of(&self, id: &str) -> JsValue {
        let (blocked, reason) = self.store.borrow().has_pending_permission(id);
        self.last_reason.set(reason);
        blocked.map_or(JsValue::UNDEFINED, JsValue::from_bool)
    }

    /// The session queries by handle (`store.js`, for a session id it has interned): `query`
    /// 0 `sessionPendingAction`, 1 `currentTurnId`, 2 `pendingClarification`, 3
    /// `hiddenMessageIds`, 4 `hasPendingPermission`. The same answers as by id, without copying
    /// the id into wasm.
    #[wasm_bindgen(js_name = __sessionQuery, skip_typescript)]
    pub fn session_query(&self, query: u8, handle: u32) -> JsResult {
        let names = self.names.borrow();
        let Some(id) = handle
            .checked_sub(1)
            .and_then(|h| names.get(usize::try_from(h).ok()?))
        else {
            return Err(misuse("handle"));
        };
        Ok(match query {
            fast::query::SESSION_PENDING_ACTION => self.session_pending_action_of(id),
            fast::query::CURRENT_TURN_ID => self.current_turn_id_of(id),
            fast::query::PENDING_CLARIFICATION => self.pending_clarification_of(id),
            fast::query::HIDDEN_MESSAGE_IDS => self.hidden_message_ids_of(id),
            fast::query::HAS_PENDING_PERMISSION => self.has_pending_permission_of(id),
            _ => return Err(misuse("query")),
        })
    }

    /// `taskPendingAction(taskId)` → `"clarification" | "permission" | null`.
    #[wasm_bindgen(js_name = taskPendingAction, skip_typescript)]
    pub fn task_pending_action(&self) -> JsResult {
        let id = Self::query_id("taskId")?;
        let (value, reason) = self.store.borrow().task_pending_action(&id);
        self.last_reason.set(reason);
        Ok(action(value))
    }

    /// `taskStatusSummary(taskId)` → the held summary (your own object) or `null`.
    #[wasm_bindgen(js_name = taskStatusSummary, skip_typescript)]
    pub fn task_status_summary(&self) -> JsResult {
        let id = Self::query_id("taskId")?;
        let store = self.store.borrow();
        let (summary, reason) = store.task_status_summary(&id);
        self.last_reason.set(reason);
        Ok(match summary {
            None => JsValue::UNDEFINED,
            Some(held) => held.cloned().unwrap_or(JsValue::NULL),
        })
    }

    /// The `(taskId, preferredSessionId?)` arguments of the owner queries.
    fn owner_args() -> Result<(String, Option<String>), JsValue> {
        with_tape(|t| {
            let id = api::id(&t.arg(0), "taskId")?;
            let preferred = crate::wire::optional_string(
                &t.arg(1),
                &crate::wire::Path::Root("preferredSessionId"),
            )?;
            Ok((id, preferred))
        })
    }

    /// `pendingOwner(taskId, preferredSessionId?)` → the session to open, or `""` for task-only.
    #[wasm_bindgen(js_name = pendingOwner, skip_typescript)]
    pub fn pending_owner(&self) -> JsResult {
        let (id, preferred) = Self::owner_args()?;
        let store = self.store.borrow();
        let (owner, reason) = store.pending_owner(&id, preferred.as_deref());
        self.last_reason.set(reason);
        Ok(owner.map_or(JsValue::UNDEFINED, |o| JsValue::from_str(o.unwrap_or(""))))
    }

    /// `lastReason()`: the machine-readable reason of the last query or event, e.g.
    /// `"open_turn_outranks_completed"`, `"older_revision_rejected"`, `"owner_not_input_capable"`.
    #[wasm_bindgen(js_name = lastReason, skip_typescript)]
    pub fn last_reason(&self) -> String {
        self.last_reason.get().code().to_owned()
    }

    /// `lastApplyReason()`: the reason of the last apply call (an event, a REST input, a frame),
    /// which queries do not overwrite: what to log after a render.
    #[wasm_bindgen(js_name = lastApplyReason, skip_typescript)]
    pub fn last_apply_reason(&self) -> String {
        self.last_apply.get().code().to_owned()
    }

    // ---- selection ------------------------------------------------------------------------------

    /// `beginSelection(taskId, { preferredSessionId })` → `{ ticket, reload }`.
    #[wasm_bindgen(js_name = beginSelection, skip_typescript)]
    pub fn begin_selection(&self) -> JsResult {
        // Written without `core::fmt` (`to_string` would link it into the wasm).
        let ticket = uuid::Uuid::new_v4()
            .hyphenated()
            .encode_lower(&mut uuid::Uuid::encode_buffer())
            .to_owned();
        let begun = with_tape(|t| {
            api::begin_selection(&mut self.store.borrow_mut(), &t.arg(0), &t.arg(1), ticket)
        })?;
        let object = Object::new();
        set(&object, "ticket", &JsValue::from_str(&begun.ticket));
        set(&object, "reload", &JsValue::from_bool(begun.reload));
        Ok(object.into())
    }

    /// `setActiveTask(taskId | null)`: navigation changed the active task.
    #[wasm_bindgen(js_name = setActiveTask, skip_typescript)]
    pub fn set_active_task(&self) -> Result<(), JsValue> {
        with_tape(|t| api::set_active_task(&mut self.store.borrow_mut(), &t.arg(0)))
    }

    /// `settleSelection(ticket, outcome)` with `outcome` = `{ sessions }`, `{ error }` or
    /// `{ aborted: true }` → `{ kind: "session", sessionId } | { kind: "task_only" } | { kind: "inert" }`.
    #[wasm_bindgen(js_name = settleSelection, skip_typescript)]
    pub fn settle_selection(&self) -> JsResult {
        if self.disposed.get() {
            return Ok(navigation(&Navigation::Inert));
        }
        let (outcome, reason) = with_tape(|t| {
            api::settle_selection(&mut self.store.borrow_mut(), &t.arg(0), &t.arg(1))
        })?;
        self.last_reason.set(reason);
        Ok(navigation(&outcome))
    }

    // ---- notification, lifecycle ---------------------------------------------------------------

    /// `__track(on)`: whether the store records which tasks and sessions change (`store.js`
    /// turns it on while anyone listens; off, the record is dropped).
    #[wasm_bindgen(js_name = __track, skip_typescript)]
    pub fn track(&self, on: bool) {
        let mut store = self.store.borrow_mut();
        store.set_change_tracking(on);
        if !on {
            store.clear_changes();
        }
    }

    /// `__takeChanges()` → `{ tasks, sessions }` changed since the last call, or `null`.
    #[wasm_bindgen(js_name = __takeChanges, skip_typescript)]
    pub fn take_changes(&self) -> JsValue {
        let changes = self.store.borrow_mut().take_changes();
        if changes.is_empty() {
            return JsValue::NULL;
        }
        let event = Object::new();
        let tasks: Array = changes.tasks.iter().map(|t| JsValue::from_str(t)).collect();
        let sessions: Array = changes
            .sessions
            .iter()
            .map(|s| JsValue::from_str(s))
            .collect();
        set(&event, "tasks", &tasks);
        set(&event, "sessions", &sessions);
        event.into()
    }

    /// `version()`: increases on every change (for `useSyncExternalStore`'s snapshot).
    #[wasm_bindgen(skip_typescript)]
    pub fn version(&self) -> f64 {
        // Far below 2^53 changes.
        #[allow(clippy::cast_precision_loss)]
        let version = self.store.borrow().version() as f64;
        version
    }

    /// `dispose()`: drops all state and listeners; every outstanding ticket becomes inert. Call
    /// `free()` afterwards to release the wasm memory of the object itself.
    #[wasm_bindgen(skip_typescript)]
    pub fn dispose(&self) {
        self.disposed.set(true);
        *self.store.borrow_mut() = Store::without_change_tracking();
        *self.cache.borrow_mut() = Default::default();
    }
}

// Development build only (Cargo feature `development`, the package's `development` export
// condition): explanations, the state digest, memory statistics and the trace recorder's hook.
// The production build leaves them and their strings out; `store.js` then throws
// `development_only` for them.
#[cfg(feature = "development")]
#[wasm_bindgen(js_class = ProjectionStore)]
impl JsProjectionStore {
    /// `explain(sessionId)` → the session's explanation as JSON text (`store.js` parses it).
    #[wasm_bindgen(js_name = explain, skip_typescript)]
    pub fn explain(&self) -> Result<String, JsValue> {
        let id = Self::query_id("sessionId")?;
        Ok(self.store.borrow().explain(&id).to_json())
    }

    /// `explainOwner(taskId, preferredSessionId?)` → the owner explanation as JSON text.
    #[wasm_bindgen(js_name = explainOwner, skip_typescript)]
    pub fn explain_owner(&self) -> Result<String, JsValue> {
        let (id, preferred) = Self::owner_args()?;
        let store = self.store.borrow();
        Ok(store.explain_owner(&id, preferred.as_deref()).to_json())
    }

    /// `digest()`: a hash of the decision-relevant state, as a decimal string (tests compare it
    /// before and after a rejected call).
    #[wasm_bindgen(skip_typescript)]
    pub fn digest(&self) -> String {
        crate::text::decimal(self.store.borrow().digest())
    }

    /// `stats()` → `{ messages, messageBytes }` (memory benchmark).
    #[wasm_bindgen(skip_typescript)]
    pub fn stats(&self) -> JsValue {
        let store = self.store.borrow();
        let object = Object::new();
        #[allow(clippy::cast_precision_loss)]
        let (messages, bytes) = (
            store.message_count() as f64,
            store.message_heap_bytes() as f64,
        );
        set(&object, "messages", &JsValue::from_f64(messages));
        set(&object, "messageBytes", &JsValue::from_f64(bytes));
        object.into()
    }

    // `__held(false)` → `{ engine, tasks, sessions }`: the crate version and the ids held, for
    // the trace recorder (`js/trace.js`), which then asks their answers through the public
    // queries; `__held(true)` afterwards puts back the `lastReason()` those queries overwrote.
    // (Not a doc comment: wasm-bindgen would copy it into the JS glue.)
    #[wasm_bindgen(js_name = __held, skip_typescript)]
    pub fn held(&self, restore: bool) -> JsValue {
        if restore {
            self.last_reason.set(self.kept_reason.get());
            return JsValue::UNDEFINED;
        }
        self.kept_reason.set(self.last_reason.get());
        let store = self.store.borrow();
        let held = Object::new();
        set(
            &held,
            "engine",
            &JsValue::from_str(env!("CARGO_PKG_VERSION")),
        );
        set(
            &held,
            "tasks",
            &store.task_ids().map(JsValue::from_str).collect::<Array>(),
        );
        set(
            &held,
            "sessions",
            &store
                .session_ids()
                .map(JsValue::from_str)
                .collect::<Array>(),
        );
        held.into()
    }
}
