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

/// Results of one query by session id: each id's place in `entries` (entries are only added, and
/// the whole cache is dropped at once). A map of `u32`s, the type of the message index's names
/// map (`store::messages::slots`), so the wasm holds one instantiation of the table's code for
/// both instead of one more for `Cached` values.
#[derive(Default)]
pub(super) struct Cache {
    places: HashMap<Box<str>, u32>,
    entries: Vec<Cached>,
}

impl Cache {
    /// The entry of `id`; a new one starts with no value. `None` would take 2^32 entries (more
    /// than a wasm32 memory holds).
    fn entry(&mut self, id: &str) -> Option<&mut Cached> {
        let at = match self.places.get(id) {
            Some(at) => *at,
            None => {
                let at = u32::try_from(self.entries.len()).ok()?;
                self.places.insert(Box::from(id), at);
                self.entries.push(Cached {
                    version: 0,
                    value: None,
                    reason: Reason::Unchanged,
                    content: String::new(),
                });
                at
            }
        };
        self.entries.get_mut(usize::try_from(at).ok()?)
    }
}

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
        let Some(entry) = per_query.entry(id) else {
            return JsValue::UNDEFINED;
        };
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
