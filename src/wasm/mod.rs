//! The wasm-bindgen binding: each export decodes its JS arguments through [`crate::wire::api`],
//! which calls exactly one rule, and converts the result back. No rule logic lives here.
//!
//! These exports are the package's internals: `js/api.js` and `js/store.js` wrap every one of
//! them. The wrappers read each caller value exactly once, in JS (`js/read.js`), and write what
//! they read onto the tape ([`crate::wire::tape`]) right before the call; the exports take their
//! arguments from the tape, so no JS value is read from here and no caller code (a getter, a
//! Proxy trap) ever runs under a wasm frame. Results that are the caller's own objects are
//! returned as indices and picked in JS.
//!
//! Declarations for TypeScript are hand-written in `types.d.ts` (shipped through a
//! `typescript_custom_section`), so every export is typed precisely; the exports themselves skip
//! wasm-bindgen's generated `any` signatures.

mod alloc;
mod convert;
mod store;

#[global_allocator]
static ALLOCATOR: alloc::Geometric = alloc::Geometric;

pub use convert::load_tape;
pub use store::JsProjectionStore;

use std::cmp::Ordering;

use js_sys::Object;
use wasm_bindgen::prelude::*;

use crate::rules::summary::FetchedSummary;
use crate::rules::turn::CurrentTurn;
use crate::wire::api::{self, Selection};
use crate::wire::Wire;
use convert::{set, with_tape};

/// `__tape(which, words, bytes)`: room for a call's arguments ([`convert::tape_reserve`]).
#[wasm_bindgen(js_name = __tape, skip_typescript)]
pub fn tape(which: u32, words: f64, bytes: f64) -> Result<u32, JsValue> {
    convert::tape_reserve(which, words, bytes)
}

/// `__tapeBytes(which)`: the address of tape `which`'s bytes.
#[wasm_bindgen(js_name = __tapeBytes, skip_typescript)]
pub fn tape_bytes(which: u32) -> u32 {
    convert::tape_bytes(which)
}

/// `__tapeMissed()`: how many key reads the shapes did not have since the last call
/// ([`crate::wire::tape::take_missed`]; tests check the schemas of `js/read.js` with it).
#[wasm_bindgen(js_name = __tapeMissed, skip_typescript)]
pub fn tape_missed() -> u32 {
    crate::wire::tape::take_missed()
}

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = include_str!("types.d.ts");

type JsResult = Result<JsValue, JsValue>;

/// `currentTurnId(turns, sessionState?)` → `string | null | undefined`.
#[wasm_bindgen(js_name = currentTurnId, skip_typescript)]
pub fn current_turn_id() -> JsResult {
    match with_tape(|t| api::current_turn_id(&t.arg(0), &t.arg(1)))? {
        CurrentTurn::Unknown => Ok(JsValue::UNDEFINED),
        CurrentTurn::None => Ok(JsValue::NULL),
        CurrentTurn::Turn(id) => Ok(JsValue::from_str(&id)),
    }
}

/// `visibleTurnHistory(turns)` → the indices of the turns to show, ascending (`js/api.js` hands
/// back the caller's own turns at them).
#[wasm_bindgen(js_name = visibleTurnHistory, skip_typescript)]
pub fn visible_turn_history() -> Result<Vec<u32>, JsValue> {
    let order = with_tape(|t| api::visible_turn_history(&t.arg(0)))?;
    Ok(indices(&order))
}

/// `findPendingClarification(messages, scope?)` → the index of the pending request, or -1.
#[wasm_bindgen(js_name = findPendingClarification, skip_typescript)]
pub fn find_pending_clarification() -> Result<i32, JsValue> {
    let found = with_tape(|t| api::find_pending_clarification(&t.arg(0), &t.arg(1)))?;
    Ok(found
        .and_then(|index| i32::try_from(index).ok())
        .unwrap_or(-1))
}

/// `pendingClarificationBundle(messages, scope?)` → the indices of the bundle's messages.
#[wasm_bindgen(js_name = pendingClarificationBundle, skip_typescript)]
pub fn pending_clarification_bundle() -> Result<Vec<u32>, JsValue> {
    let bundle = with_tape(|t| api::pending_clarification_bundle(&t.arg(0), &t.arg(1)))?;
    Ok(indices(&bundle))
}

/// `visibleTranscriptMessages(messages, scope?)` → the indices of the messages to show.
#[wasm_bindgen(js_name = visibleTranscriptMessages, skip_typescript)]
pub fn visible_transcript_messages() -> Result<Vec<u32>, JsValue> {
    let visible = with_tape(|t| api::visible_transcript_messages(&t.arg(0), &t.arg(1)))?;
    Ok(indices(&visible))
}

/// Rule indices as a `Uint32Array` (an array's indices fit `u32` in JS).
fn indices(order: &[usize]) -> Vec<u32> {
    order
        .iter()
        .filter_map(|&index| u32::try_from(index).ok())
        .collect()
}

/// `hasPendingPermission(messages)` → boolean.
#[wasm_bindgen(js_name = hasPendingPermission, skip_typescript)]
pub fn has_pending_permission() -> JsResult {
    let blocked = with_tape(|t| api::has_pending_permission(&t.arg(0)))?;
    Ok(JsValue::from_bool(blocked))
}

/// `sessionPendingAction({ session, turns, messages })` → action or `null`.
#[wasm_bindgen(js_name = sessionPendingAction, skip_typescript)]
pub fn session_pending_action() -> JsResult {
    let action = with_tape(|t| api::session_pending_action(&t.arg(0)))?;
    Ok(convert::action(action))
}

/// `taskPendingAction(sessions)` → action or `null`.
#[wasm_bindgen(js_name = taskPendingAction, skip_typescript)]
pub fn task_pending_action() -> JsResult {
    let action = with_tape(|t| api::task_pending_action(&t.arg(0)))?;
    Ok(convert::action(action))
}

/// `effectiveTaskPendingAction(task)` → action or `null`.
#[wasm_bindgen(js_name = effectiveTaskPendingAction, skip_typescript)]
pub fn effective_task_pending_action() -> JsResult {
    let action = with_tape(|t| api::effective_task_pending_action(&t.arg(0)))?;
    Ok(convert::action(action))
}

/// `compareRevisions(a, b)` → `-1 | 0 | 1`.
#[wasm_bindgen(js_name = compareRevisions, skip_typescript)]
pub fn compare_revisions() -> JsResult {
    let order = with_tape(|t| api::compare_revisions_of(&t.arg(0), &t.arg(1)))?;
    Ok(JsValue::from_f64(match order {
        Ordering::Less => -1.0,
        Ordering::Equal => 0.0,
        Ordering::Greater => 1.0,
    }))
}

/// `canReplaceRevision(held, incoming)` → boolean.
#[wasm_bindgen(js_name = canReplaceRevision, skip_typescript)]
pub fn can_replace_revision() -> JsResult {
    let replace = with_tape(|t| api::can_replace_revision(&t.arg(0), &t.arg(1)))?;
    Ok(JsValue::from_bool(replace))
}

/// `mergePendingProjection(held, incoming)` → `{ pending_action?, pending_action_revision? }`.
#[wasm_bindgen(js_name = mergePendingProjection, skip_typescript)]
pub fn merge_pending_projection() -> JsResult {
    let merged = with_tape(|t| api::merge_pending_projection(&t.arg(0), &t.arg(1)))?;
    let object = Object::new();
    if let Some(action) = merged.action {
        set(&object, "pending_action", &convert::action(action));
    }
    if let Some(revision) = &merged.revision {
        set(
            &object,
            "pending_action_revision",
            &convert::revision(revision),
        );
    }
    Ok(object.into())
}

/// `resolveTaskSessionId({ task, sessions, preferredSessionId? })` → session id or `""`.
#[wasm_bindgen(js_name = resolveTaskSessionId, skip_typescript)]
pub fn resolve_task_session_id() -> JsResult {
    let id = with_tape(|t| api::resolve_task_session_id(&t.arg(0)))?;
    Ok(JsValue::from_str(&id))
}

/// `selectionOutcome(input)` → `{ kind: "session", sessionId } | { kind: "task_only" } | { kind: "inert" }`.
#[wasm_bindgen(js_name = selectionOutcome, skip_typescript)]
pub fn selection_outcome() -> JsResult {
    let outcome = with_tape(|t| api::selection_outcome(&t.arg(0)))?;
    let object = Object::new();
    match outcome {
        Selection::Session(id) => {
            set(&object, "kind", &JsValue::from_str("session"));
            set(&object, "sessionId", &JsValue::from_str(&id));
        }
        Selection::TaskOnly => set(&object, "kind", &JsValue::from_str("task_only")),
        Selection::Inert => set(&object, "kind", &JsValue::from_str("inert")),
    }
    Ok(object.into())
}

/// `isNewerStatusSummary(incoming, held)` → boolean.
#[wasm_bindgen(js_name = isNewerStatusSummary, skip_typescript)]
pub fn is_newer_status_summary() -> JsResult {
    let newer = with_tape(|t| api::is_newer_status_summary(&t.arg(0), &t.arg(1)))?;
    Ok(JsValue::from_bool(newer))
}

/// `mergeFetchedStatusSummary({ held, taskPresentAtFetchStart, fetchStartRevision, response })`
/// → the index among the call's kept objects of the summary to hold (`held` or
/// `response.status_summary`), or -1 for none (`js/api.js` hands back the caller's own object).
#[wasm_bindgen(js_name = mergeFetchedStatusSummary, skip_typescript)]
pub fn merge_fetched_status_summary() -> Result<i32, JsValue> {
    with_tape(|t| {
        let input = t.arg(0);
        let chosen = match api::merge_fetched_status_summary(&input)? {
            FetchedSummary::KeepHeld => input.get("held").kept(),
            FetchedSummary::TakeResponse => input.get("response").get("status_summary").kept(),
            FetchedSummary::Drop => None,
        };
        Ok(chosen.and_then(|i| i32::try_from(i).ok()).unwrap_or(-1))
    })
}

/// `normalizeStartPolicy(value)` → `"reuse" | "new"`.
#[wasm_bindgen(js_name = normalizeStartPolicy, skip_typescript)]
pub fn normalize_start_policy() -> JsResult {
    let policy = with_tape(|t| Ok(api::normalize_start(&t.arg(0))))?;
    Ok(JsValue::from_str(policy.as_str()))
}

/// `normalizeEndPolicy(value)` → `"complete" | "park"`.
#[wasm_bindgen(js_name = normalizeEndPolicy, skip_typescript)]
pub fn normalize_end_policy() -> JsResult {
    let policy = with_tape(|t| Ok(api::normalize_end(&t.arg(0))))?;
    Ok(JsValue::from_str(policy.as_str()))
}
