//! The wasm-bindgen binding: each export decodes its JS arguments through [`crate::wire::api`],
//! which calls exactly one rule, and converts the result back. No rule logic lives here.
//!
//! These exports are the package's internals: `js/api.js` and `js/store.js` wrap every one of
//! them. The wrappers read each caller value exactly once, in JS, into plain objects (`js/read.js`)
//! and pass only those here, so no caller code (a getter, a Proxy trap) ever runs under a wasm
//! frame; results that are the caller's own objects are returned as indices and picked in JS.
//!
//! Declarations for TypeScript are hand-written in `types.d.ts` (shipped through a
//! `typescript_custom_section`), so every export is typed precisely; the exports themselves skip
//! wasm-bindgen's generated `any` signatures.

mod convert;
mod store;

pub use store::JsProjectionStore;

use std::cmp::Ordering;

use js_sys::Object;
use wasm_bindgen::prelude::*;

use crate::rules::summary::FetchedSummary;
use crate::rules::turn::CurrentTurn;
use crate::wire::api::{self, Selection};
use convert::{js_error, set, Js};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = include_str!("types.d.ts");

type JsResult = Result<JsValue, JsValue>;

/// `currentTurnId(turns, sessionState?)` → `string | null | undefined`.
#[wasm_bindgen(js_name = currentTurnId, skip_typescript)]
pub fn current_turn_id(turns: JsValue, session_state: JsValue) -> JsResult {
    match api::current_turn_id(&Js(turns), &Js(session_state)).map_err(js_error)? {
        CurrentTurn::Unknown => Ok(JsValue::UNDEFINED),
        CurrentTurn::None => Ok(JsValue::NULL),
        CurrentTurn::Turn(id) => Ok(JsValue::from_str(&id)),
    }
}

/// `visibleTurnHistory(turns)` → the indices of the turns to show, ascending (`js/api.js` hands
/// back the caller's own turns at them).
#[wasm_bindgen(js_name = visibleTurnHistory, skip_typescript)]
pub fn visible_turn_history(turns: JsValue) -> Result<Vec<u32>, JsValue> {
    let order = api::visible_turn_history(&Js(turns)).map_err(js_error)?;
    Ok(indices(&order))
}

/// `findPendingClarification(messages, scope?)` → the index of the pending request, or -1.
#[wasm_bindgen(js_name = findPendingClarification, skip_typescript)]
pub fn find_pending_clarification(messages: JsValue, scope: JsValue) -> Result<i32, JsValue> {
    let found = api::find_pending_clarification(&Js(messages), &Js(scope)).map_err(js_error)?;
    Ok(found
        .and_then(|index| i32::try_from(index).ok())
        .unwrap_or(-1))
}

/// `pendingClarificationBundle(messages, scope?)` → the indices of the bundle's messages.
#[wasm_bindgen(js_name = pendingClarificationBundle, skip_typescript)]
pub fn pending_clarification_bundle(
    messages: JsValue,
    scope: JsValue,
) -> Result<Vec<u32>, JsValue> {
    let bundle = api::pending_clarification_bundle(&Js(messages), &Js(scope)).map_err(js_error)?;
    Ok(indices(&bundle))
}

/// `visibleTranscriptMessages(messages, scope?)` → the indices of the messages to show.
#[wasm_bindgen(js_name = visibleTranscriptMessages, skip_typescript)]
pub fn visible_transcript_messages(messages: JsValue, scope: JsValue) -> Result<Vec<u32>, JsValue> {
    let visible = api::visible_transcript_messages(&Js(messages), &Js(scope)).map_err(js_error)?;
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
pub fn has_pending_permission(messages: JsValue) -> JsResult {
    let blocked = api::has_pending_permission(&Js(messages)).map_err(js_error)?;
    Ok(JsValue::from_bool(blocked))
}

/// `sessionPendingAction({ session, turns, messages })` → action or `null`.
#[wasm_bindgen(js_name = sessionPendingAction, skip_typescript)]
pub fn session_pending_action(input: JsValue) -> JsResult {
    let action = api::session_pending_action(&Js(input)).map_err(js_error)?;
    Ok(convert::action(action))
}

/// `taskPendingAction(sessions)` → action or `null`.
#[wasm_bindgen(js_name = taskPendingAction, skip_typescript)]
pub fn task_pending_action(sessions: JsValue) -> JsResult {
    let action = api::task_pending_action(&Js(sessions)).map_err(js_error)?;
    Ok(convert::action(action))
}

/// `effectiveTaskPendingAction(task)` → action or `null`.
#[wasm_bindgen(js_name = effectiveTaskPendingAction, skip_typescript)]
pub fn effective_task_pending_action(task: JsValue) -> JsResult {
    let action = api::effective_task_pending_action(&Js(task)).map_err(js_error)?;
    Ok(convert::action(action))
}

/// `compareRevisions(a, b)` → `-1 | 0 | 1`.
#[wasm_bindgen(js_name = compareRevisions, skip_typescript)]
pub fn compare_revisions(a: JsValue, b: JsValue) -> JsResult {
    let order = api::compare_revisions_of(&Js(a), &Js(b)).map_err(js_error)?;
    Ok(JsValue::from_f64(match order {
        Ordering::Less => -1.0,
        Ordering::Equal => 0.0,
        Ordering::Greater => 1.0,
    }))
}

/// `canReplaceRevision(held, incoming)` → boolean.
#[wasm_bindgen(js_name = canReplaceRevision, skip_typescript)]
pub fn can_replace_revision(held: JsValue, incoming: JsValue) -> JsResult {
    let replace = api::can_replace_revision(&Js(held), &Js(incoming)).map_err(js_error)?;
    Ok(JsValue::from_bool(replace))
}

/// `mergePendingProjection(held, incoming)` → `{ pending_action?, pending_action_revision? }`.
#[wasm_bindgen(js_name = mergePendingProjection, skip_typescript)]
pub fn merge_pending_projection(held: JsValue, incoming: JsValue) -> JsResult {
    let merged = api::merge_pending_projection(&Js(held), &Js(incoming)).map_err(js_error)?;
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
pub fn resolve_task_session_id(input: JsValue) -> JsResult {
    let id = api::resolve_task_session_id(&Js(input)).map_err(js_error)?;
    Ok(JsValue::from_str(&id))
}

/// `selectionOutcome(input)` → `{ kind: "session", sessionId } | { kind: "task_only" } | { kind: "inert" }`.
#[wasm_bindgen(js_name = selectionOutcome, skip_typescript)]
pub fn selection_outcome(input: JsValue) -> JsResult {
    let outcome = api::selection_outcome(&Js(input)).map_err(js_error)?;
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
pub fn is_newer_status_summary(incoming: JsValue, held: JsValue) -> JsResult {
    let newer = api::is_newer_status_summary(&Js(incoming), &Js(held)).map_err(js_error)?;
    Ok(JsValue::from_bool(newer))
}

/// `mergeFetchedStatusSummary({ held, taskPresentAtFetchStart, fetchStartRevision, response })`
/// → which summary to hold: 0 `held`, 1 `response.status_summary`, 2 none (`js/api.js` hands back
/// the caller's own object).
#[wasm_bindgen(js_name = mergeFetchedStatusSummary, skip_typescript)]
pub fn merge_fetched_status_summary(input: JsValue) -> Result<u8, JsValue> {
    let decision = api::merge_fetched_status_summary(&Js(input)).map_err(js_error)?;
    Ok(match decision {
        FetchedSummary::KeepHeld => 0,
        FetchedSummary::TakeResponse => 1,
        FetchedSummary::Drop => 2,
    })
}

/// `normalizeStartPolicy(value)` → `"reuse" | "new"`.
#[wasm_bindgen(js_name = normalizeStartPolicy, skip_typescript)]
pub fn normalize_start_policy(value: JsValue) -> JsValue {
    JsValue::from_str(api::normalize_start(&Js(value)).as_str())
}

/// `normalizeEndPolicy(value)` → `"complete" | "park"`.
#[wasm_bindgen(js_name = normalizeEndPolicy, skip_typescript)]
pub fn normalize_end_policy(value: JsValue) -> JsValue {
    JsValue::from_str(api::normalize_end(&Js(value)).as_str())
}
