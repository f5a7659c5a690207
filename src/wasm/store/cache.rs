//! Query answers that keep their identity while the session they describe is unchanged (React's
//! `useSyncExternalStore` compares by identity): the value handed out, by query and session id,
//! with the version it was computed at and its content.

use js_sys::Object;
use wasm_bindgen::prelude::*;

use super::JsProjectionStore;
use crate::store::hash::HashMap;
use crate::store::Reason;

/// Which cached query a result belongs to (its index in the cache array).
#[derive(Clone, Copy)]
pub(super) enum Query {
    CurrentTurn = 0,
    Clarification = 1,
    Hidden = 2,
}

/// A cached query result: the version it was computed at, the JS value handed out, its reason,
/// and its content (to keep the JS value when a recomputation gives the same answer).
pub(super) struct Cached {
    version: u64,
    /// `None` until first computed.
    value: Option<JsValue>,
    reason: Reason,
    content: String,
}

/// Results of one query by session id.
pub(super) type Cache = HashMap<Box<str>, Cached>;

impl JsProjectionStore {
    /// A query result from the cache while `version` is unchanged. After a change the answer is
    /// recomputed, and the cached JS object is still returned when the answer's content (its
    /// `key`) is the same: identity changes only when the answer does.
    pub(super) fn cached<T>(
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
}
