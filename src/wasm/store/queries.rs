//! The store's queries as JS values: each asks the store, records its reason for
//! `lastReason()`, and converts the answer (session answers through the [`super::cache`]).

use js_sys::{Array, Object};
use wasm_bindgen::prelude::*;

use super::cache::Query;
use super::{action, JsProjectionStore, JsResult};
use crate::rules::turn::CurrentTurn;
use crate::wasm::convert::{misuse, set, with_tape};
use crate::wire::fast;
use crate::wire::store_api as api;

// Every query answers `undefined` while not known yet (SPEC §11, `rules::knowledge`); the doc
// comment of each export names its known answers only (they are copied into the JS glue, whose
// gzip budget is nearly full).

#[wasm_bindgen(js_class = ProjectionStore)]
impl JsProjectionStore {
    /// The id argument (the first on the tape) of a query.
    pub(super) fn query_id(name: &'static str) -> Result<String, JsValue> {
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
    pub(super) fn owner_args() -> Result<(String, Option<String>), JsValue> {
        with_tape(|t| api::owner_args(&t.arg(0), &t.arg(1)))
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
}
