//! The wasm side of `ProjectionStore`: [`crate::store::ProjectionStore`] over JS values, with
//! query results that keep their identity while the session or task they describe is unchanged
//! (for React's `useSyncExternalStore`). `js/store.js` wraps it: it reads every argument once
//! into plain values before calling here, keeps the listeners and delivers change notifications
//! (so no caller code runs under a wasm frame), and hides the `__` boundary methods.
//! Translation only: every decision is the store's (and so the rules').

mod cache;
#[cfg(feature = "development")]
mod development;
mod handles;
#[cfg(feature = "inbox")]
mod inbox;
mod queries;

use std::cell::{Cell, RefCell};

use js_sys::{Array, Object};
use wasm_bindgen::prelude::*;

use crate::rules::model::PendingAction;
use crate::store::{Navigation, ProjectionStore as Store, Reason};
use crate::wire::integral_u64;
use crate::wire::store_api as api;

use super::convert::{js_error, navigation, set, with_tape};

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

/// The stateful engine. Feed it every REST snapshot and WebSocket event; read small answers.
#[wasm_bindgen(js_name = ProjectionStore, skip_typescript)]
pub struct JsProjectionStore {
    store: RefCell<Store<JsValue>>,
    /// The session queries' answers handed out ([`cache`]).
    cache: RefCell<[cache::Cache; 3]>,
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
    /// Handle `h` is `names[h - 1]`; 0 means absent ([`handles`]).
    names: RefCell<Vec<Box<str>>>,
    /// Where `store.js` writes the text that does not repeat (message id, timestamps) for the
    /// next fast-path call: one buffer, no allocation per string.
    scratch: RefCell<Vec<u8>>,
    /// The last cached query key built (reused: no allocation when the answer is unchanged).
    key: RefCell<String>,
}

type JsResult = Result<JsValue, JsValue>;

// The exports are split by concern: applies, frames, snapshots, selection and lifecycle here;
// the queries in `queries`, their answer cache in `cache`, the message fast path in `handles`,
// the development build's exports in `development`. Doc comments of exports are copied into
// the JS glue, whose gzip budget is nearly full: they stay short.

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

    /// `removeSession(sessionId)`.
    #[wasm_bindgen(js_name = removeSession, skip_typescript)]
    pub fn remove_session(&self) -> Result<(), JsValue> {
        self.mutate_tape(|s, t| api::remove_session(s, &t.arg(0)))
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
    pub fn frame_offset(&self, offset: f64, begin: bool) {
        let offset = integral_u64(offset);
        let mut store = self.store.borrow_mut();
        match offset {
            Some(offset) if !begin => store.apply_frame_offset(offset),
            // The frame at `offset` begins (`-1`: the input now is no frame).
            _ => store.begin_frame(offset),
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

    // `__snapshot(objects, hydrate)` (the snapshot, and with `hydrate` its options, on the tape):
    // with `hydrate` this store (a new one, `store.js` made it) becomes the snapshot's, else
    // another page's snapshot merges into it (SPEC §12); on an error nothing changes.
    #[wasm_bindgen(js_name = __snapshot, skip_typescript)]
    pub fn take_snapshot(&self, objects: Array, hydrate: bool) -> Result<(), JsValue> {
        let track = self.store.borrow().tracks_changes();
        let reason = with_tape(|t| {
            let options = t.arg(1);
            let options = hydrate.then_some(&options);
            let store = &mut self.store.borrow_mut();
            api::take_snapshot(store, &t.arg(0), options, |v| kept(&objects, v))
        })?;
        if hydrate {
            self.store.borrow_mut().set_change_tracking(track);
            *self.cache.borrow_mut() = Default::default();
        }
        self.applied(reason);
        Ok(())
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

    // ---- the user's actions (SPEC §13) ----------------------------------------------------------

    /// `respondStart(sessionId, pendingId, kind?)` → `{ attempt, fresh }`, or the refusal's code
    /// (a string: `store.js` throws it).
    #[wasm_bindgen(js_name = respondStart, skip_typescript)]
    pub fn respond_start(&self) -> JsResult {
        let started = with_tape(|t| {
            api::respond_start(
                &mut self.store.borrow_mut(),
                &t.arg(0),
                &t.arg(1),
                &t.arg(2),
            )
        })?;
        Ok(match started {
            Ok(started) => {
                let object = Object::new();
                #[allow(clippy::cast_precision_loss)]
                set(
                    &object,
                    "attempt",
                    &JsValue::from_f64(started.attempt as f64),
                );
                set(&object, "fresh", &JsValue::from_bool(started.fresh));
                object.into()
            }
            Err(refusal) => JsValue::from_str(refusal.as_str()),
        })
    }

    /// `respondReply(attempt, reply)` → `{ outcome, failure, applied, reason }`.
    #[wasm_bindgen(js_name = respondReply, skip_typescript)]
    pub fn respond_reply(&self) -> JsResult {
        let replied =
            with_tape(|t| api::respond_reply(&mut self.store.borrow_mut(), &t.arg(0), &t.arg(1)))?;
        let object = Object::new();
        set(
            &object,
            "outcome",
            &JsValue::from_str(replied.outcome.as_str()),
        );
        let failure = match replied.outcome {
            crate::rules::action::Outcome::Failed(f) => JsValue::from_str(f.as_str()),
            _ => JsValue::NULL,
        };
        set(&object, "failure", &failure);
        set(&object, "applied", &JsValue::from_bool(replied.applied));
        let reason = replied
            .stale
            .map_or(JsValue::NULL, |s| JsValue::from_str(s.as_str()));
        set(&object, "reason", &reason);
        Ok(object.into())
    }

    /// `respondState(sessionId, pendingId)` → `{ attempt, phase, outcome }` or `null`.
    #[wasm_bindgen(js_name = respondState, skip_typescript)]
    pub fn respond_state(&self) -> JsResult {
        let store = self.store.borrow();
        let state = with_tape(|t| {
            let session = api::id(&t.arg(0), "sessionId")?;
            let pending = api::id(&t.arg(1), "pendingId")?;
            Ok(store
                .respond_state(&session, &pending)
                .map(|a| (a.attempt, a.phase.clone())))
        })?;
        let Some((attempt, phase)) = state else {
            return Ok(JsValue::NULL);
        };
        use crate::rules::action::Phase;
        let (phase, outcome) = match phase {
            Phase::InFlight => ("in_flight", None),
            Phase::Settled { outcome, .. } => ("settled", Some(outcome)),
            Phase::Open(outcome) => ("open", Some(outcome)),
        };
        let object = Object::new();
        #[allow(clippy::cast_precision_loss)]
        set(&object, "attempt", &JsValue::from_f64(attempt as f64));
        set(&object, "phase", &JsValue::from_str(phase));
        let outcome = outcome.map_or(JsValue::NULL, |o| JsValue::from_str(o.as_str()));
        set(&object, "outcome", &outcome);
        Ok(object.into())
    }

    /// `sessionAfterDelete(taskId, openSessionId, deletedSessionId)` → the session to open,
    /// `null` for none, `undefined` while the task's session list is not known.
    #[wasm_bindgen(js_name = sessionAfterDelete, skip_typescript)]
    pub fn session_after_delete(&self) -> JsResult {
        let store = self.store.borrow();
        let after = with_tape(|t| {
            let task = api::id(&t.arg(0), "taskId")?;
            let open = api::optional_id(&t.arg(1), "openSessionId")?;
            let deleted = api::id(&t.arg(2), "deletedSessionId")?;
            Ok(store
                .session_after_delete(&task, open.as_deref(), &deleted)
                .map(|s| s.map(String::from)))
        })?;
        Ok(match after {
            None => JsValue::UNDEFINED,
            Some(None) => JsValue::NULL,
            Some(Some(id)) => JsValue::from_str(&id),
        })
    }

    /// `offeredActions(sessionId)` → `{ respond, cancel, send }`, or `undefined` while not known.
    #[wasm_bindgen(js_name = offeredActions, skip_typescript)]
    pub fn offered_actions(&self) -> JsResult {
        let store = self.store.borrow();
        let session = with_tape(|t| api::id(&t.arg(0), "sessionId"))?;
        let Some(offered) = store.offered_actions(&session) else {
            return Ok(JsValue::UNDEFINED);
        };
        let object = Object::new();
        set(&object, "respond", &JsValue::from_bool(offered.respond));
        set(&object, "cancel", &JsValue::from_bool(offered.cancel));
        set(&object, "send", &JsValue::from_bool(offered.send));
        Ok(object.into())
    }

    /// `pendingPermission(sessionId)` → `{ messageId, pendingId, status, answerable }`, `null`
    /// (none blocks the session) or `undefined` (not known yet).
    #[wasm_bindgen(js_name = pendingPermission, skip_typescript)]
    pub fn pending_permission(&self) -> JsResult {
        let store = self.store.borrow();
        let session = with_tape(|t| api::id(&t.arg(0), "sessionId"))?;
        Ok(match store.pending_permission(&session).0 {
            None => JsValue::UNDEFINED,
            Some(None) => JsValue::NULL,
            Some(Some(p)) => {
                let object = Object::new();
                set(&object, "messageId", &JsValue::from_str(p.message_id));
                let pending = p.pending_id.map_or(JsValue::NULL, JsValue::from_str);
                set(&object, "pendingId", &pending);
                set(&object, "status", &JsValue::from_str(p.shown.as_str()));
                set(&object, "answerable", &JsValue::from_bool(p.answerable));
                object.into()
            }
        })
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
        // Every build (the production one has no inbox: always false), one shape.
        set(&event, "inbox", &JsValue::from_bool(changes.inbox));
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
