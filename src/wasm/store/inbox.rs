//! The workspace inbox's calls (SPEC §14) in one export: a page (whose rows `store.js` keeps, as
//! the store names them by index), the boot seed, a failed read, and the answer as a flat array
//! `store.js` turns into the `Inbox` object.

use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::{JsProjectionStore, JsResult};
use crate::store::Reason;
use crate::wasm::convert::with_tape;
use crate::wire::store_api as api;

#[wasm_bindgen(js_class = ProjectionStore)]
impl JsProjectionStore {
    // `__inbox(call)`, the arguments on the tape: 0 `applyInboxPage(workspaceId, page, at?)`, 1
    // `applyInboxSeed(seed)`, 2 `inboxReadFailed(workspaceId, at?)` (each `undefined`), 3
    // `inbox(workspaceId, now)` → `[state, reread, more, hiddenCount, nextSnoozeExpiry, seedCount,
    // seedHasMore, ...rows]`, each row `index` (of the page) or `-1, pendingId, sessionId, taskId,
    // createdAt`; `state` is the reason code, `seedCount` -1 for none.
    #[wasm_bindgen(js_name = __inbox, skip_typescript)]
    pub fn inbox(&self, call: u32) -> JsResult {
        if call < 3 {
            self.mutate_tape(|s, t| match call {
                0 => api::apply_inbox_page(s, &t.arg(0), &t.arg(1), &t.arg(2)),
                1 => api::apply_inbox_seed(s, &t.arg(0)),
                _ => api::inbox_read_failed(s, &t.arg(0), &t.arg(1)),
            })?;
            return Ok(JsValue::UNDEFINED);
        }
        let (workspace, now) = with_tape(|t| api::inbox_args(&t.arg(0), &t.arg(1)))?;
        let store = self.store.borrow();
        let answer = store.inbox(&workspace, now.as_ref());
        self.last_reason.set(Reason::Inbox(answer.state));
        let out = Array::new();
        let push = |v: JsValue| {
            out.push(&v);
        };
        let text = |t: &str| JsValue::from_str(t);
        #[allow(clippy::cast_precision_loss)]
        let number = |n: u64| JsValue::from(n as f64);
        push(text(answer.state.as_str()));
        push(JsValue::from_bool(answer.state.reread()));
        push(JsValue::from_bool(answer.more));
        push(number(answer.hidden_count));
        push(
            answer
                .next_snooze_expiry
                .map_or(JsValue::NULL, |t| text(&t.text())),
        );
        push(answer.seed.map_or(JsValue::from(-1), |s| number(s.count)));
        push(JsValue::from_bool(answer.seed.is_some_and(|s| s.has_more)));
        for row in &answer.rows {
            match row.row {
                #[allow(clippy::cast_precision_loss)]
                Some(i) => push(JsValue::from(i as f64)),
                None => {
                    push(JsValue::from(-1));
                    push(text(row.pending_id));
                    push(text(row.session_id));
                    push(row.task_id.map_or(JsValue::NULL, text));
                    push(text(&row.created_at.text()));
                }
            }
        }
        Ok(out.into())
    }
}
