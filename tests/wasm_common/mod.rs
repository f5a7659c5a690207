//! Runs tests/fixtures/scenarios.json through the wasm binding's exports with real JS values.

use js_sys::{Array, Object, Reflect};
use serde_json::{json, Value};
use task_projection::wasm as tp;
use task_projection::wire::tape::Writer;
use wasm_bindgen::{JsCast, JsValue};

pub mod store;

// The scenario file's types, through the store runner's copy (one module per file).
use store::store_common::common;

use common::{is_undefined, position_of, Case, Expect};

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

/// The tape of a call's arguments, as `js/read.js` writes them: a marker argument is `undefined`
/// and a marker-valued property an absent key (the schemas write an absent key as `undefined`
/// too, so the two read the same).
pub(crate) fn tape_of(args: &[Value]) -> Writer {
    let plain: Vec<Option<Value>> = args.iter().map(common::without_undefined).collect();
    let refs: Vec<Option<&Value>> = plain.iter().map(Option::as_ref).collect();
    Writer::args(&refs)
}

/// Loads `tape` for the next export call; the kept objects as JS values (what `send()` hands
/// back in js/read.js: the caller's own objects, in the order their cells index them).
pub(crate) fn load_args(tape: &Writer) -> Array {
    tp::load_tape(tape);
    tape.kept.iter().map(to_js).collect()
}

/// The export of `case.call` over the case's arguments on the tape; `args` are the caller's own
/// JS values (what js/api.js hands back at the indices the export returns).
fn call(case: &Case, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let tape = tape_of(&case.args);
    let kept = load_args(&tape);
    match case.call.as_str() {
        "currentTurnId" => tp::current_turn_id(),
        "visibleTurnHistory" => picked(args, tp::visible_turn_history()),
        "findPendingClarification" => tp::find_pending_clarification()
            .map(|i| usize::try_from(i).map_or(JsValue::NULL, |i| element(args, i))),
        "pendingClarificationBundle" => picked(args, tp::pending_clarification_bundle()),
        "visibleTranscriptMessages" => picked(args, tp::visible_transcript_messages()),
        "hasPendingPermission" => tp::has_pending_permission(),
        "sessionPendingAction" => tp::session_pending_action(),
        "taskPendingAction" => tp::task_pending_action(),
        "effectiveTaskPendingAction" => tp::effective_task_pending_action(),
        "compareRevisions" => tp::compare_revisions(),
        "canReplaceRevision" => tp::can_replace_revision(),
        "mergePendingProjection" => tp::merge_pending_projection(),
        "resolveTaskSessionId" => tp::resolve_task_session_id(),
        "selectionOutcome" => tp::selection_outcome(),
        "isNewerStatusSummary" => tp::is_newer_status_summary(),
        "mergeFetchedStatusSummary" => tp::merge_fetched_status_summary().map(|chosen| {
            // What js/api.js does with the answer: the caller's own (kept) object, or null.
            u32::try_from(chosen).map_or(JsValue::NULL, |i| {
                assert!(
                    i < kept.length(),
                    "{}: kept index {i} out of range",
                    case.name
                );
                kept.get(i)
            })
        }),
        "normalizeStartPolicy" => tp::normalize_start_policy(),
        "normalizeEndPolicy" => tp::normalize_end_policy(),
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
    let file = common::load();
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

/// The `code` of a thrown TaskProjectionError.
fn code_of(error: &JsValue) -> Option<String> {
    assert!(
        error.is_instance_of::<js_sys::Error>(),
        "thrown value is not an Error"
    );
    Reflect::get(error, &JsValue::from_str("code"))
        .ok()
        .and_then(|c| c.as_string())
}

/// A malformed call throws, and the instance keeps answering afterwards (no trap).
pub fn errors_leave_the_instance_usable() {
    for _ in 0..3 {
        load_args(&Writer::tape(&[&json!(1.0), &Value::Null]));
        let err = tp::compare_revisions().unwrap_err();
        assert_eq!(code_of(&err).as_deref(), Some("invalid_revision"));
        // `scope` not passed: `undefined`.
        load_args(&Writer::tape(&[&json!([3.0])]));
        let err = tp::find_pending_clarification().unwrap_err();
        assert_eq!(code_of(&err).as_deref(), Some("invalid_type"));
        // A tape whose header claims more than there is (only a bug of js/read.js could send it):
        // a typed error, not a trap.
        load_args(&Writer {
            words: vec![64, 0],
            ..Writer::default()
        });
        let err = tp::current_turn_id().unwrap_err();
        assert_eq!(code_of(&err).as_deref(), Some("invalid_value"));
    }
    let turns = json!([{"id": "t1", "started_at": "2026-11-29T12:00:00Z"}]);
    load_args(&Writer::args(&[Some(&turns), None]));
    assert_eq!(
        tp::current_turn_id().unwrap().as_string().as_deref(),
        Some("t1")
    );
}

/// `null` and `undefined` stay apart across the boundary where the contract needs it. On the
/// tape an `undefined` property is an absent key (js/read.js writes both as `undefined`).
pub fn null_and_undefined_stay_apart() {
    let revision = json!({"epoch": "7", "sequence": 2});
    let held = json!({"pending_action": "clarification", "pending_action_revision": {"epoch": "7", "sequence": 1}});
    let omitted = json!({ "pending_action_revision": revision });
    load_args(&Writer::args(&[Some(&held), Some(&omitted)]));
    let kept = tp::merge_pending_projection().unwrap();
    assert_eq!(
        Reflect::get(&kept, &"pending_action".into())
            .unwrap()
            .as_string()
            .as_deref(),
        Some("clarification")
    );
    let cleaned = json!({"pending_action_revision": revision, "pending_action": null});
    load_args(&Writer::args(&[Some(&held), Some(&cleaned)]));
    let merged = tp::merge_pending_projection().unwrap();
    assert!(Reflect::has(&merged, &"pending_action".into()).unwrap());
    assert!(Reflect::get(&merged, &"pending_action".into())
        .unwrap()
        .is_null());
    // An `undefined` incoming projection keeps the held one; a `null` one too.
    for incoming in [None, Some(&Value::Null)] {
        load_args(&Writer::args(&[Some(&held), incoming]));
        let merged = tp::merge_pending_projection().unwrap();
        assert_eq!(
            Reflect::get(&merged, &"pending_action".into())
                .unwrap()
                .as_string()
                .as_deref(),
            Some("clarification")
        );
    }
    // currentTurnId: undefined turns → undefined, null → undefined, [] → null
    load_args(&Writer::args(&[None, None]));
    assert!(tp::current_turn_id().unwrap().is_undefined());
    load_args(&Writer::args(&[Some(&Value::Null), None]));
    assert!(tp::current_turn_id().unwrap().is_undefined());
    load_args(&Writer::args(&[Some(&json!([])), None]));
    assert!(tp::current_turn_id().unwrap().is_null());
    // An argument not passed at all reads as `undefined` too.
    load_args(&Writer::args(&[]));
    assert!(tp::current_turn_id().unwrap().is_undefined());
    // canReplaceRevision: nothing held (undefined or null) → true; a held revision and an
    // undefined incoming one → false.
    let newer = json!({"epoch": "7", "sequence": 3});
    for nothing in [None, Some(&Value::Null)] {
        load_args(&Writer::args(&[nothing, Some(&newer)]));
        assert_eq!(tp::can_replace_revision().unwrap().as_bool(), Some(true));
    }
    load_args(&Writer::args(&[Some(&newer), None]));
    assert_eq!(tp::can_replace_revision().unwrap().as_bool(), Some(false));
}
