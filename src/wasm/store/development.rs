//! Development build only (Cargo feature `development`, the package's `development` export
//! condition): explanations, the state digest, memory statistics and the trace recorder's hook.
//! The production build leaves them and their strings out; `store.js` then throws
//! `development_only` for them.

use js_sys::{Array, Object};
use wasm_bindgen::prelude::*;

use super::JsProjectionStore;
use crate::wasm::convert::set;

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

    // `__held(false)` → `{ engine, tasks, sessions, sessionTasks }`: the crate version, the ids
    // held and, for each session (same index), its task's id or `null`; for the trace recorder
    // (`js/trace.js`) and the devtools panel (`js/devtools-dom.js`), which then ask their answers
    // through the public queries; `__held(true)` afterwards puts back the `lastReason()` those
    // queries overwrote. (Not a doc comment: wasm-bindgen would copy it into the JS glue.)
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
        let (sessions, tasks) = (Array::new(), Array::new());
        for (id, task) in store.session_tasks() {
            sessions.push(&JsValue::from_str(id));
            tasks.push(&task.map_or(JsValue::NULL, JsValue::from_str));
        }
        set(&held, "sessions", &sessions);
        set(&held, "sessionTasks", &tasks);
        held.into()
    }
}
