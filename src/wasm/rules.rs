//! The stateless rule functions (`task-projection/rules`, feature `rules-exports`): each export
//! takes its arguments from the tape, calls one function of [`crate::wire::api`] (decode, then
//! exactly one rule) and converts the answer back; `js/api.js` wraps every one of them.

use std::cmp::Ordering;

use js_sys::Object;
use wasm_bindgen::prelude::*;

use super::convert::{navigation, set, with_tape};
use crate::rules::model::{PendingAction, Revision};
use crate::rules::summary::FetchedSummary;
use crate::rules::turn::CurrentTurn;
use crate::wire::api;
use crate::wire::Wire;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = include_str!("types/rules.d.ts");

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
    Ok(action_value(action))
}

/// `taskPendingAction(sessions)` → action or `null`.
#[wasm_bindgen(js_name = taskPendingAction, skip_typescript)]
pub fn task_pending_action() -> JsResult {
    let action = with_tape(|t| api::task_pending_action(&t.arg(0)))?;
    Ok(action_value(action))
}

/// `effectiveTaskPendingAction(task)` → action or `null`.
#[wasm_bindgen(js_name = effectiveTaskPendingAction, skip_typescript)]
pub fn effective_task_pending_action() -> JsResult {
    let action = with_tape(|t| api::effective_task_pending_action(&t.arg(0)))?;
    Ok(action_value(action))
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
        set(&object, "pending_action", &action_value(action));
    }
    if let Some(revision) = &merged.revision {
        set(
            &object,
            "pending_action_revision",
            &revision_object(revision),
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
    Ok(navigation(&outcome))
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

/// `"clarification" | "permission" | null`.
fn action_value(action: Option<PendingAction>) -> JsValue {
    action.map_or(JsValue::NULL, |a| JsValue::from_str(a.as_str()))
}

/// `Number.MAX_SAFE_INTEGER`: every integer up to it is exact as a JS Number.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A sequence as JS gets it back: a Number up to 2^53 - 1, a BigInt beyond (exact either way, so
/// it compares as it was given).
fn sequence(sequence: u64) -> JsValue {
    if sequence <= MAX_SAFE_INTEGER {
        #[allow(clippy::cast_precision_loss)]
        let exact = sequence as f64;
        JsValue::from_f64(exact)
    } else {
        JsValue::from(sequence)
    }
}

/// A fresh `{epoch, sequence}` object.
fn revision_object(revision: &Revision) -> JsValue {
    let object = Object::new();
    set(&object, "epoch", &JsValue::from_str(&revision.epoch));
    set(&object, "sequence", &sequence(revision.sequence));
    object.into()
}
