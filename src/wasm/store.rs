//! The `ProjectionStore` class: [`crate::store::ProjectionStore`] over JS values, with change
//! notification coalesced per microtask and query results that keep their identity while the
//! session or task they describe is unchanged (for React's `useSyncExternalStore`).
//! Translation only: every decision is the store's (and so the rules').

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;

use hashbrown::HashMap;
use js_sys::{Array, Function, Object, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::rules::model::PendingAction;
use crate::rules::model::Revision;
use crate::rules::revision::PendingProjection;
use crate::rules::turn::CurrentTurn;
use crate::store::{MessageEvent, MessageEventKind};
use crate::store::{Navigation, ProjectionStore as Store, Reason};
use crate::wire::store_api as api;
use crate::wire::{integral_u64, MessageFields};

use super::convert::{js_error, set, Js};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = queueMicrotask)]
    fn queue_microtask(callback: &Function);
}

thread_local! {
    static CLARIFICATION: JsValue = JsValue::from_str(PendingAction::Clarification.as_str());
    static PERMISSION: JsValue = JsValue::from_str(PendingAction::Permission.as_str());
}

fn action(action: Option<PendingAction>) -> JsValue {
    match action {
        Some(PendingAction::Clarification) => CLARIFICATION.with(Clone::clone),
        Some(PendingAction::Permission) => PERMISSION.with(Clone::clone),
        None => JsValue::NULL,
    }
}

type Shared = Rc<RefCell<Store<JsValue>>>;

#[derive(Default)]
struct Listeners {
    next: u32,
    entries: Vec<(u32, Function)>,
}

/// Which cached query a result belongs to.
#[derive(Clone, Copy, Hash, PartialEq, Eq)]
enum Query {
    CurrentTurn,
    Clarification,
    Hidden,
}

/// A cached query result: the version it was computed at, the JS value handed out, its reason,
/// and its content (to keep the JS value when a recomputation gives the same answer).
struct Cached {
    version: u64,
    value: JsValue,
    reason: Reason,
    content: String,
}

/// Results of one query by session id.
type Cache = HashMap<Box<str>, Cached>;

/// The stateful engine. Feed it every REST snapshot and WebSocket event; read small answers.
#[wasm_bindgen(js_name = ProjectionStore, skip_typescript)]
pub struct JsProjectionStore {
    store: Shared,
    listeners: Rc<RefCell<Listeners>>,
    flush_scheduled: Rc<Cell<bool>>,
    cache: RefCell<HashMap<Query, Cache>>,
    last_reason: Cell<Reason>,
    disposed: Cell<bool>,
    /// Whether a row of the message page being applied by `store.js` changed something.
    page_changed: Cell<bool>,
}

type JsResult = Result<JsValue, JsValue>;

#[wasm_bindgen(js_class = ProjectionStore)]
impl JsProjectionStore {
    /// `new ProjectionStore()`.
    #[wasm_bindgen(constructor)]
    pub fn new(_options: JsValue) -> JsProjectionStore {
        JsProjectionStore {
            store: Rc::new(RefCell::new(Store::new())),
            listeners: Rc::new(RefCell::new(Listeners::default())),
            flush_scheduled: Rc::new(Cell::new(false)),
            cache: RefCell::new(HashMap::new()),
            last_reason: Cell::new(Reason::Unchanged),
            disposed: Cell::new(false),
            page_changed: Cell::new(false),
        }
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
                self.last_reason.set(reason);
                self.schedule_flush();
                Ok(())
            }
            Err(error) => Err(js_error(error)),
        }
    }

    /// Tells subscribers, once per microtask, which tasks and sessions changed.
    fn schedule_flush(&self) {
        if self.flush_scheduled.get() || !self.store.borrow().has_changes() {
            return;
        }
        if self.listeners.borrow().entries.is_empty() {
            // Nobody listens: drop the change set instead of growing it.
            self.store.borrow_mut().clear_changes();
            return;
        }
        self.flush_scheduled.set(true);
        let store = Rc::clone(&self.store);
        let listeners = Rc::clone(&self.listeners);
        let scheduled = Rc::clone(&self.flush_scheduled);
        let flush = Closure::once_into_js(move || {
            scheduled.set(false);
            let changes = store.borrow_mut().take_changes();
            if changes.is_empty() {
                return;
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
            let targets: Vec<Function> = listeners
                .borrow()
                .entries
                .iter()
                .map(|(_, f)| f.clone())
                .collect();
            for listener in targets {
                // One listener's exception must not starve the others.
                let _ = listener.call1(&JsValue::UNDEFINED, &event);
            }
        });
        queue_microtask(flush.unchecked_ref());
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
        key: impl FnOnce(&T) -> String,
        build: impl FnOnce(&T) -> JsValue,
    ) -> JsValue {
        let mut cache = self.cache.borrow_mut();
        let per_query = cache.entry(query).or_default();
        if let Some(entry) = per_query.get(id) {
            if entry.version == version {
                self.last_reason.set(entry.reason);
                return entry.value.clone();
            }
        }
        let (answer, reason) = compute();
        self.last_reason.set(reason);
        let content = key(&answer);
        if let Some(entry) = per_query.get_mut(id) {
            if entry.content == content {
                entry.version = version;
                entry.reason = reason;
                return entry.value.clone();
            }
        }
        let value = build(&answer);
        // Shared between callers until the answer changes: frozen, so no caller alters another's.
        if value.is_object() {
            Object::freeze(value.unchecked_ref::<Object>());
        }
        let entry = Cached {
            version,
            value: value.clone(),
            reason,
            content,
        };
        match per_query.get_mut(id) {
            Some(slot) => *slot = entry,
            None => {
                per_query.insert(Box::from(id), entry);
            }
        }
        value
    }

    // ---- REST -----------------------------------------------------------------------------------

    /// `applySessionList(taskId, sessions)`: a task's session list (newest first).
    #[wasm_bindgen(js_name = applySessionList, skip_typescript)]
    pub fn apply_session_list(&self, task_id: JsValue, sessions: JsValue) -> Result<(), JsValue> {
        self.mutate(|s| api::apply_session_list(s, &Js(task_id), &Js(sessions)))
    }

    /// `applyTurnList(sessionId, turns)`.
    #[wasm_bindgen(js_name = applyTurnList, skip_typescript)]
    pub fn apply_turn_list(&self, session_id: JsValue, turns: JsValue) -> Result<(), JsValue> {
        self.mutate(|s| api::apply_turn_list(s, &Js(session_id), &Js(turns)))
    }

    /// `applyMessagePage(sessionId, messages)`.
    #[wasm_bindgen(js_name = applyMessagePage, skip_typescript)]
    pub fn apply_message_page(
        &self,
        session_id: JsValue,
        messages: JsValue,
    ) -> Result<(), JsValue> {
        self.mutate(|s| api::apply_message_page(s, &Js(session_id), &Js(messages)))
    }

    /// `beginTaskFetch()` → token for `applyTaskSnapshot`.
    #[wasm_bindgen(js_name = beginTaskFetch, skip_typescript)]
    pub fn begin_task_fetch(&self) -> f64 {
        // Tokens count up from 1; far below 2^53.
        #[allow(clippy::cast_precision_loss)]
        let token = self.store.borrow_mut().begin_task_fetch() as f64;
        token
    }

    /// `applyTaskSnapshot(token, tasks)`: a task list or boot snapshot.
    #[wasm_bindgen(js_name = applyTaskSnapshot, skip_typescript)]
    pub fn apply_task_snapshot(&self, token: JsValue, tasks: JsValue) -> Result<(), JsValue> {
        self.mutate(|s| api::apply_task_snapshot(s, &Js(token), &Js(tasks), |js| js.0))
    }

    // ---- WebSocket ------------------------------------------------------------------------------

    /// `applyMessageEvent(kind, payload)` with `kind` ∈ `"added" | "updated" | "deleted"`.
    #[wasm_bindgen(js_name = applyMessageEvent, skip_typescript)]
    pub fn apply_message_event(&self, kind: JsValue, payload: JsValue) -> Result<(), JsValue> {
        self.mutate(|s| api::apply_message_event(s, &Js(kind), &Js(payload)))
    }

    /// `applyMessageEvents(kind, payloads)`: a batch, validated whole before any is applied.
    #[wasm_bindgen(js_name = applyMessageEvents, skip_typescript)]
    pub fn apply_message_events(&self, kind: JsValue, payloads: JsValue) -> Result<(), JsValue> {
        self.mutate(|s| api::apply_message_events(s, &Js(kind), &Js(payloads)))
    }

    /// The fast path of `applyMessageEvent` (package `store.js`): the payload's fields, already
    /// read and type-checked in JS, as primitives: one boundary crossing instead of one per
    /// field. `kind`: 0 added, 1 updated, 2 deleted, 4 the first row of a message page, 3 the
    /// page's next rows; `action`: 0 key absent, 1 `null`,
    /// 2 clarification, 3 permission; the revision is present when `epoch` is.
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = __applyMessageFields, skip_typescript)]
    pub fn apply_message_fields(
        &self,
        kind: u8,
        session_id: String,
        task_id: Option<String>,
        id: String,
        turn_id: Option<String>,
        message_type: Option<String>,
        status: Option<String>,
        pending_id: Option<String>,
        question_total: Option<f64>,
        created_at: Option<String>,
        updated_at: Option<String>,
        action: u8,
        epoch: Option<String>,
        sequence: f64,
    ) -> Result<(), JsValue> {
        let misuse = |field: &str| {
            js_error(crate::WireError::InvalidValue {
                field: field.into(),
                problem: "not a value the package's store.js passes".into(),
            })
        };
        let event_kind = match kind {
            0 => Some(MessageEventKind::Added),
            1 => Some(MessageEventKind::Updated),
            2 => Some(MessageEventKind::Deleted),
            // A row of a REST message page (no projection): 4 the first, 3 the next ones.
            3 | 4 => None,
            _ => return Err(misuse("kind")),
        };
        let action = match action {
            0 => None,
            1 => Some(None),
            2 => Some(Some(PendingAction::Clarification)),
            3 => Some(Some(PendingAction::Permission)),
            _ => return Err(misuse("action")),
        };
        let revision = match epoch {
            Some(epoch) => Some(Revision {
                epoch,
                sequence: integral_u64(sequence).ok_or_else(|| misuse("sequence"))?,
            }),
            None => None,
        };
        let projection = (action.is_some() || revision.is_some())
            .then_some(PendingProjection { action, revision });
        let message = MessageFields {
            id,
            turn_id,
            message_type,
            status,
            pending_id,
            question_total,
            created_at,
            updated_at,
        }
        .into_message();
        let Some(event_kind) = event_kind else {
            // The page's reason is the wasm path's: applied when any row changed.
            let page_changed = self.page_changed.get() && kind == 3;
            return self.mutate(|s| {
                let row = s.apply_message_page(&session_id, std::slice::from_ref(&message));
                let changed = page_changed || row == Reason::Applied;
                self.page_changed.set(changed);
                Ok(if changed {
                    Reason::Applied
                } else {
                    Reason::Unchanged
                })
            });
        };
        let kind = event_kind;
        let event = MessageEvent {
            session_id,
            task_id,
            message,
            projection,
        };
        self.mutate(|s| Ok(s.apply_message_event(kind, &event)))
    }

    /// `applyTurnEvent(payload)`: a turn started or completed.
    #[wasm_bindgen(js_name = applyTurnEvent, skip_typescript)]
    pub fn apply_turn_event(&self, payload: JsValue) -> Result<(), JsValue> {
        self.mutate(|s| api::apply_turn_event(s, &Js(payload)))
    }

    /// `applySessionEvent(payload)`: a session's state (and projection) changed.
    #[wasm_bindgen(js_name = applySessionEvent, skip_typescript)]
    pub fn apply_session_event(&self, payload: JsValue) -> Result<(), JsValue> {
        self.mutate(|s| api::apply_session_event(s, &Js(payload)))
    }

    /// `applyStatusSummaryEvent(payload)`: `task.status_summary.updated`.
    #[wasm_bindgen(js_name = applyStatusSummaryEvent, skip_typescript)]
    pub fn apply_status_summary_event(&self, payload: JsValue) -> Result<(), JsValue> {
        self.mutate(|s| api::apply_status_summary_event(s, &Js(payload), |js| js.0))
    }

    /// `applyTaskUpdated(payload)`: `task.updated`.
    #[wasm_bindgen(js_name = applyTaskUpdated, skip_typescript)]
    pub fn apply_task_updated(&self, payload: JsValue) -> Result<(), JsValue> {
        self.mutate(|s| api::apply_task_updated(s, &Js(payload), |js| js.0))
    }

    /// `removeTask(taskId)`.
    #[wasm_bindgen(js_name = removeTask, skip_typescript)]
    pub fn remove_task(&self, task_id: JsValue) -> Result<(), JsValue> {
        self.mutate(|s| api::remove_task(s, &Js(task_id)))
    }

    // ---- queries --------------------------------------------------------------------------------

    fn query_id(value: &JsValue, name: &'static str) -> Result<String, JsValue> {
        api::id(&Js(value.clone()), name).map_err(js_error)
    }

    /// `sessionPendingAction(sessionId)` → `"clarification" | "permission" | null`.
    #[wasm_bindgen(js_name = sessionPendingAction, skip_typescript)]
    pub fn session_pending_action(&self, session_id: JsValue) -> JsResult {
        let id = Self::query_id(&session_id, "sessionId")?;
        let (value, reason) = self.store.borrow().session_pending_action(&id);
        self.last_reason.set(reason);
        Ok(action(value))
    }

    /// `currentTurnId(sessionId)` → `string | null | undefined`.
    #[wasm_bindgen(js_name = currentTurnId, skip_typescript)]
    pub fn current_turn_id(&self, session_id: JsValue) -> JsResult {
        let id = Self::query_id(&session_id, "sessionId")?;
        let store = self.store.borrow();
        Ok(self.cached(
            Query::CurrentTurn,
            &id,
            store.session_version(&id),
            || store.current_turn_id(&id),
            |current| match current {
                CurrentTurn::Unknown => String::from("u"),
                CurrentTurn::None => String::from("n"),
                CurrentTurn::Turn(turn) => format!("t{turn}"),
            },
            |current| match current {
                CurrentTurn::Unknown => JsValue::UNDEFINED,
                CurrentTurn::None => JsValue::NULL,
                CurrentTurn::Turn(turn) => JsValue::from_str(turn),
            },
        ))
    }

    /// `pendingClarification(sessionId)` → `{ pending_id, message_ids } | null`; the same
    /// (frozen) object while the answer is unchanged.
    #[wasm_bindgen(js_name = pendingClarification, skip_typescript)]
    pub fn pending_clarification(&self, session_id: JsValue) -> JsResult {
        let id = Self::query_id(&session_id, "sessionId")?;
        let store = self.store.borrow();
        Ok(self.cached(
            Query::Clarification,
            &id,
            store.session_version(&id),
            || store.pending_clarification(&id),
            |bundle| match bundle {
                None => String::new(),
                Some(bundle) => {
                    let mut key = format!("b{}", bundle.pending_id.unwrap_or("\u{2}"));
                    for m in &bundle.message_ids {
                        key.push('\u{1}');
                        key.push_str(m);
                    }
                    key
                }
            },
            |bundle| match bundle {
                None => JsValue::NULL,
                Some(bundle) => {
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
        ))
    }

    /// `hiddenMessageIds(sessionId)` → the ids an overlay renders (hide them from the
    /// transcript); the same (frozen) array while the answer is unchanged.
    #[wasm_bindgen(js_name = hiddenMessageIds, skip_typescript)]
    pub fn hidden_message_ids(&self, session_id: JsValue) -> JsResult {
        let id = Self::query_id(&session_id, "sessionId")?;
        let store = self.store.borrow();
        Ok(self.cached(
            Query::Hidden,
            &id,
            store.session_version(&id),
            || store.hidden_message_ids(&id),
            |ids| ids.join("\u{1}"),
            |ids| {
                ids.iter()
                    .map(|m| JsValue::from_str(m))
                    .collect::<Array>()
                    .into()
            },
        ))
    }

    /// `hasPendingPermission(sessionId)` → boolean.
    #[wasm_bindgen(js_name = hasPendingPermission, skip_typescript)]
    pub fn has_pending_permission(&self, session_id: JsValue) -> Result<bool, JsValue> {
        let id = Self::query_id(&session_id, "sessionId")?;
        let (blocked, reason) = self.store.borrow().has_pending_permission(&id);
        self.last_reason.set(reason);
        Ok(blocked)
    }

    /// `taskPendingAction(taskId)` → `"clarification" | "permission" | null`.
    #[wasm_bindgen(js_name = taskPendingAction, skip_typescript)]
    pub fn task_pending_action(&self, task_id: JsValue) -> JsResult {
        let id = Self::query_id(&task_id, "taskId")?;
        let (value, reason) = self.store.borrow().task_pending_action(&id);
        self.last_reason.set(reason);
        Ok(action(value))
    }

    /// `taskStatusSummary(taskId)` → the held summary (your own object) or `null`.
    #[wasm_bindgen(js_name = taskStatusSummary, skip_typescript)]
    pub fn task_status_summary(&self, task_id: JsValue) -> JsResult {
        let id = Self::query_id(&task_id, "taskId")?;
        let store = self.store.borrow();
        let (summary, reason) = store.task_status_summary(&id);
        self.last_reason.set(reason);
        Ok(summary.cloned().unwrap_or(JsValue::NULL))
    }

    /// `pendingOwner(taskId, preferredSessionId?)` → the session to open, or `""` for task-only.
    #[wasm_bindgen(js_name = pendingOwner, skip_typescript)]
    pub fn pending_owner(&self, task_id: JsValue, preferred_session_id: JsValue) -> JsResult {
        let id = Self::query_id(&task_id, "taskId")?;
        let preferred = preferred_session_id.as_string();
        let store = self.store.borrow();
        let (owner, reason) = store.pending_owner(&id, preferred.as_deref());
        self.last_reason.set(reason);
        Ok(JsValue::from_str(owner.unwrap_or("")))
    }

    /// `lastReason()`: the machine-readable reason of the last query or event, e.g.
    /// `"open_turn_outranks_completed"`, `"older_revision_rejected"`, `"owner_not_input_capable"`.
    #[wasm_bindgen(js_name = lastReason, skip_typescript)]
    pub fn last_reason(&self) -> String {
        self.last_reason.get().code().to_owned()
    }

    // ---- selection ------------------------------------------------------------------------------

    /// `beginSelection(taskId, { preferredSessionId })` → `{ ticket, reload }`.
    #[wasm_bindgen(js_name = beginSelection, skip_typescript)]
    pub fn begin_selection(&self, task_id: JsValue, options: JsValue) -> JsResult {
        let ticket = uuid::Uuid::new_v4().to_string();
        let begun = api::begin_selection(
            &mut self.store.borrow_mut(),
            &Js(task_id),
            &Js(options),
            ticket,
        )
        .map_err(js_error)?;
        let object = Object::new();
        set(&object, "ticket", &JsValue::from_str(&begun.ticket));
        set(&object, "reload", &JsValue::from_bool(begun.reload));
        Ok(object.into())
    }

    /// `setActiveTask(taskId | null)`: navigation changed the active task.
    #[wasm_bindgen(js_name = setActiveTask, skip_typescript)]
    pub fn set_active_task(&self, task_id: JsValue) -> Result<(), JsValue> {
        api::set_active_task(&mut self.store.borrow_mut(), &Js(task_id)).map_err(js_error)
    }

    /// `settleSelection(ticket, outcome)` with `outcome` = `{ sessions }`, `{ error }` or
    /// `{ aborted: true }` → `{ kind: "session", sessionId } | { kind: "task_only" } | { kind: "inert" }`.
    #[wasm_bindgen(js_name = settleSelection, skip_typescript)]
    pub fn settle_selection(&self, ticket: JsValue, outcome: JsValue) -> JsResult {
        let object = Object::new();
        if self.disposed.get() {
            set(&object, "kind", &JsValue::from_str("inert"));
            return Ok(object.into());
        }
        let result = api::settle_selection(&mut self.store.borrow_mut(), &Js(ticket), &Js(outcome));
        let (navigation, reason) = result.map_err(js_error)?;
        self.last_reason.set(reason);
        self.schedule_flush();
        match navigation {
            Navigation::Session(id) => {
                set(&object, "kind", &JsValue::from_str("session"));
                set(&object, "sessionId", &JsValue::from_str(&id));
            }
            Navigation::TaskOnly => set(&object, "kind", &JsValue::from_str("task_only")),
            Navigation::Inert => set(&object, "kind", &JsValue::from_str("inert")),
        }
        Ok(object.into())
    }

    // ---- notification, lifecycle ---------------------------------------------------------------

    /// `subscribe(listener)` → unsubscribe function. The listener gets
    /// `{ tasks: string[], sessions: string[] }` at most once per microtask.
    #[wasm_bindgen(skip_typescript)]
    pub fn subscribe(&self, listener: Function) -> JsValue {
        let id = {
            let mut listeners = self.listeners.borrow_mut();
            let id = listeners.next;
            listeners.next = listeners.next.wrapping_add(1);
            listeners.entries.push((id, listener));
            id
        };
        let listeners = Rc::downgrade(&self.listeners);
        Closure::<dyn FnMut()>::new(move || {
            if let Some(listeners) = listeners.upgrade() {
                listeners.borrow_mut().entries.retain(|(i, _)| *i != id);
            }
        })
        .into_js_value()
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
        *self.store.borrow_mut() = Store::new();
        self.listeners.borrow_mut().entries.clear();
        self.cache.borrow_mut().clear();
    }

    /// `digest()`: a hash of the decision-relevant state, as a decimal string (tests compare it
    /// before and after a rejected call).
    #[wasm_bindgen(skip_typescript)]
    pub fn digest(&self) -> String {
        self.store.borrow().digest().to_string()
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
}

/// `boundedLoad(promise, timeoutMs)`: waits for a session-list load at most `timeoutMs`; resolves
/// to the `settleSelection` outcome: `{ sessions }`, `{ error }` (rejected) or
/// `{ error: "timeout", timedOut: true }`, so a load that never settles falls back to task-only
/// for a pending task.
#[wasm_bindgen(js_name = boundedLoad, skip_typescript)]
pub fn bounded_load(load: Promise, timeout_ms: f64) -> Promise {
    // NaN or a negative timeout times out at once; one beyond a timer's range (2^31 - 1 ms, about
    // 24.8 days), or Infinity, waits for the load.
    let timeout = if timeout_ms.is_nan() || timeout_ms <= 0.0 {
        Some(0)
    } else if timeout_ms < 2_147_483_647.0 {
        // In range and positive: the conversion is exact up to the fraction.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let ms = timeout_ms.ceil() as u32;
        Some(ms)
    } else {
        None
    };
    wasm_bindgen_futures::future_to_promise(async move {
        let mut load = JsFuture::from(load);
        let mut timer = timeout.map(gloo_timers::future::TimeoutFuture::new);
        let outcome = std::future::poll_fn(|cx| {
            if let Poll::Ready(result) = Pin::new(&mut load).poll(cx) {
                return Poll::Ready(Some(result));
            }
            match timer.as_mut().map(|t| Pin::new(t).poll(cx)) {
                Some(Poll::Ready(())) => Poll::Ready(None),
                _ => Poll::Pending,
            }
        })
        .await;
        let object = Object::new();
        match outcome {
            Some(Ok(sessions)) => set(&object, "sessions", &sessions),
            Some(Err(error)) => set(&object, "error", &error),
            None => {
                set(&object, "error", &JsValue::from_str("timeout"));
                set(&object, "timedOut", &JsValue::TRUE);
            }
        }
        Ok(object.into())
    })
}
