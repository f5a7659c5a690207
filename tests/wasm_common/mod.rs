//! Runs tests/fixtures/scenarios.json through the wasm binding's exports with real JS values.

use js_sys::{Array, Object, Reflect};
use serde_json::Value;
use task_projection::wasm as tp;
use wasm_bindgen::{JsCast, JsValue};

#[path = "../common/mod.rs"]
mod common;
pub mod store;

use common::{is_undefined, load, position_of, Case, Expect};

/// JSON → JS, with `{"$undefined": true}` as `undefined` (a present key holding `undefined`).
pub(crate) fn to_js(value: &Value) -> JsValue {
    if is_undefined(value) {
        return JsValue::UNDEFINED;
    }
    match value {
        Value::Null => JsValue::NULL,
        Value::Bool(b) => JsValue::from_bool(*b),
        Value::Number(n) => JsValue::from_f64(n.as_f64().unwrap()),
        Value::String(s) => JsValue::from_str(s),
        Value::Array(items) => items.iter().map(to_js).collect::<Array>().into(),
        Value::Object(map) => {
            let object = Object::new();
            for (k, v) in map {
                Reflect::set(&object, &JsValue::from_str(k), &to_js(v)).unwrap();
            }
            object.into()
        }
    }
}

pub(crate) fn from_js(value: &JsValue) -> Option<Value> {
    if value.is_undefined() {
        return None;
    }
    let text: String = js_sys::JSON::stringify(value).unwrap().into();
    Some(serde_json::from_str(&text).unwrap())
}

fn call(case: &Case, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let a = |i: usize| args.get(i).cloned().unwrap_or(JsValue::UNDEFINED);
    match case.call.as_str() {
        "currentTurnId" => tp::current_turn_id(a(0), a(1)),
        "visibleTurnHistory" => picked(args, tp::visible_turn_history(a(0))),
        "findPendingClarification" => tp::find_pending_clarification(a(0), a(1))
            .map(|i| usize::try_from(i).map_or(JsValue::NULL, |i| element(args, i))),
        "pendingClarificationBundle" => picked(args, tp::pending_clarification_bundle(a(0), a(1))),
        "visibleTranscriptMessages" => picked(args, tp::visible_transcript_messages(a(0), a(1))),
        "hasPendingPermission" => tp::has_pending_permission(a(0)),
        "sessionPendingAction" => tp::session_pending_action(a(0)),
        "taskPendingAction" => tp::task_pending_action(a(0)),
        "effectiveTaskPendingAction" => tp::effective_task_pending_action(a(0)),
        "compareRevisions" => tp::compare_revisions(a(0), a(1)),
        "canReplaceRevision" => tp::can_replace_revision(a(0), a(1)),
        "mergePendingProjection" => tp::merge_pending_projection(a(0), a(1)),
        "resolveTaskSessionId" => tp::resolve_task_session_id(a(0)),
        "selectionOutcome" => tp::selection_outcome(a(0)),
        "isNewerStatusSummary" => tp::is_newer_status_summary(a(0), a(1)),
        "mergeFetchedStatusSummary" => tp::merge_fetched_status_summary(a(0)).map(|chosen| {
            // What js/api.js does with the answer: the caller's own object, or null.
            let get = |v: &JsValue, k: &str| Reflect::get(v, &JsValue::from_str(k)).unwrap();
            let summary = match chosen {
                0 => get(&a(0), "held"),
                1 => get(&get(&a(0), "response"), "status_summary"),
                _ => JsValue::NULL,
            };
            if summary.is_undefined() {
                JsValue::NULL
            } else {
                summary
            }
        }),
        "normalizeStartPolicy" => Ok(tp::normalize_start_policy(a(0))),
        "normalizeEndPolicy" => Ok(tp::normalize_end_policy(a(0))),
        other => panic!("{}: unknown call {other}", case.name),
    }
}

fn element(args: &[JsValue], index: usize) -> JsValue {
    args[0].unchecked_ref::<Array>().get(index as u32)
}

/// The caller's elements of `args[0]` at the indices an export returned (what js/api.js does).
fn picked(args: &[JsValue], indices: Result<Vec<u32>, JsValue>) -> Result<JsValue, JsValue> {
    indices.map(|indices| {
        indices
            .iter()
            .map(|&i| element(args, i as usize))
            .collect::<Array>()
            .into()
    })
}

fn check(case: &Case) -> Result<(), String> {
    let args: Vec<JsValue> = case.args.iter().map(to_js).collect();
    let result = call(case, &args);
    match (case.expectation(), result) {
        (Expect::Error(expected), Err(error)) => {
            if !error.is_instance_of::<js_sys::Error>() {
                return Err("thrown value is not an Error".into());
            }
            let get = |k: &str| {
                Reflect::get(&error, &JsValue::from_str(k))
                    .unwrap()
                    .as_string()
            };
            let message = get("message").unwrap_or_default();
            if get("code").as_deref() != Some(&expected.code)
                || get("field").as_deref() != Some(&expected.field)
            {
                return Err(format!(
                    "expected {}/{}, got {:?}/{:?} ({message})",
                    expected.code,
                    expected.field,
                    get("code"),
                    get("field")
                ));
            }
            message
                .contains(&expected.field)
                .then_some(())
                .ok_or(format!("message {message:?} does not name the field"))
        }
        (_, Err(error)) => Err(format!("unexpected throw: {:?}", from_js(&error))),
        (Expect::Error(_), Ok(_)) => Err("expected a throw".into()),
        (Expect::Value(expected), Ok(got)) => {
            let expected = common::without_undefined(expected);
            let got = from_js(&got);
            (expected == got)
                .then_some(())
                .ok_or(format!("expected {expected:?}, got {got:?}"))
        }
        (Expect::Message(expected), Ok(got)) => match expected {
            None => got
                .is_null()
                .then_some(())
                .ok_or(format!("expected null, got {:?}", from_js(&got))),
            Some(id) => {
                let index = position_of(&case.args, id).ok_or("expected id not in args[0]")?;
                Object::is(&got, &element(&args, index))
                    .then_some(())
                    .ok_or(format!(
                        "expected the very message {id}, got {:?}",
                        from_js(&got)
                    ))
            }
        },
        (Expect::Messages(expected), Ok(got)) => {
            let got: Array = got.dyn_into().map_err(|_| "result is not an array")?;
            if got.length() as usize != expected.len() {
                return Err(format!("expected {expected:?}, got {:?}", from_js(&got)));
            }
            for (i, id) in expected.iter().enumerate() {
                let index = position_of(&case.args, id).ok_or("expected id not in args[0]")?;
                if !Object::is(&got.get(i as u32), &element(&args, index)) {
                    return Err(format!("expected {expected:?}, got {:?}", from_js(&got)));
                }
            }
            Ok(())
        }
    }
}

pub fn run_all() {
    let file = load();
    let mut failures = Vec::new();
    for case in &file.cases {
        if let Err(why) = check(case) {
            failures.push(format!("{}: {why}", case.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A malformed call throws, and the instance keeps answering afterwards (no trap).
pub fn errors_leave_the_instance_usable() {
    for _ in 0..3 {
        let err = tp::compare_revisions(JsValue::from_f64(1.0), JsValue::NULL).unwrap_err();
        assert!(err.is_instance_of::<js_sys::Error>());
        let messages: JsValue = Array::of1(&JsValue::from_f64(3.0)).into();
        assert!(tp::find_pending_clarification(messages, JsValue::UNDEFINED).is_err());
    }
    let turns = to_js(&serde_json::json!([{"id": "t1", "started_at": "2026-11-29T12:00:00Z"}]));
    assert_eq!(
        tp::current_turn_id(turns, JsValue::UNDEFINED)
            .unwrap()
            .as_string()
            .as_deref(),
        Some("t1")
    );
}

/// `null` and `undefined` stay apart across the boundary where the contract needs it.
pub fn null_and_undefined_stay_apart() {
    let revision = to_js(&serde_json::json!({"epoch": "7", "sequence": 2}));
    let held = to_js(
        &serde_json::json!({"pending_action": "clarification", "pending_action_revision": {"epoch": "7", "sequence": 1}}),
    );
    let omitted = Object::new();
    Reflect::set(&omitted, &"pending_action_revision".into(), &revision).unwrap();
    Reflect::set(&omitted, &"pending_action".into(), &JsValue::UNDEFINED).unwrap();
    let kept = tp::merge_pending_projection(held.clone(), omitted.into()).unwrap();
    assert_eq!(
        Reflect::get(&kept, &"pending_action".into())
            .unwrap()
            .as_string()
            .as_deref(),
        Some("clarification")
    );
    let cleaned = Object::new();
    Reflect::set(&cleaned, &"pending_action_revision".into(), &revision).unwrap();
    Reflect::set(&cleaned, &"pending_action".into(), &JsValue::NULL).unwrap();
    let merged = tp::merge_pending_projection(held, cleaned.into()).unwrap();
    assert!(Reflect::has(&merged, &"pending_action".into()).unwrap());
    assert!(Reflect::get(&merged, &"pending_action".into())
        .unwrap()
        .is_null());
    // currentTurnId: undefined turns → undefined, [] → null
    assert!(tp::current_turn_id(JsValue::UNDEFINED, JsValue::UNDEFINED)
        .unwrap()
        .is_undefined());
    assert!(tp::current_turn_id(JsValue::NULL, JsValue::UNDEFINED)
        .unwrap()
        .is_undefined());
    assert!(tp::current_turn_id(Array::new().into(), JsValue::UNDEFINED)
        .unwrap()
        .is_null());
}
