//! Runs tests/fixtures/store_scenarios.json through the wasm `ProjectionStore` class. Its calls
//! are the class's own methods (the binding under test), not the library's dispatcher
//! (`wire::store_api::dispatch`, which the native runners use); the names it runs are the
//! dispatcher's (`every_dispatched_name_is_run`).

use std::collections::HashMap;

use js_sys::{Object, Reflect};
use serde_json::Value;
use task_projection::wasm::JsProjectionStore;
use task_projection::wire::store_api as api;
use wasm_bindgen::JsValue;

#[path = "../store_common/mod.rs"]
pub(super) mod store_common;

use super::{from_js, load_args, tape_of};
use store_common::{load, resolve, Step};

/// What a step hands the store: its arguments on the tape (loaded for the call) and the kept
/// objects as JS values (the summaries it holds, which `taskStatusSummary` hands back; in the
/// package `js/read.js` hands it its own copies).
fn call(
    store: &JsProjectionStore,
    step: &Step,
    args: &[Value],
    kept: &mut Vec<JsValue>,
) -> Result<JsValue, JsValue> {
    let tape = tape_of(args);
    let objects = load_args(&tape);
    kept.extend(objects.iter());
    let unit = |r: Result<(), JsValue>| r.map(|()| JsValue::UNDEFINED);
    match step.call.as_str() {
        "applySessionList" => unit(store.apply_session_list()),
        "applyTurnList" => unit(store.apply_turn_list()),
        "applyMessagePage" => unit(store.apply_message_page()),
        "applyMessageEvent" => unit(store.apply_message_event()),
        "applyMessageEvents" => unit(store.apply_message_events()),
        "applyTurnEvent" => unit(store.apply_turn_event()),
        "applySessionEvent" => unit(store.apply_session_event()),
        "applyStatusSummaryEvent" => unit(store.apply_status_summary_event(objects)),
        "applyTaskUpdated" => unit(store.apply_task_updated(objects)),
        "removeTask" => unit(store.remove_task()),
        "removeSession" => unit(store.remove_session()),
        "applyTaskSnapshot" => unit(store.apply_task_snapshot(objects)),
        "beginTaskFetch" => Ok(JsValue::from_f64(store.begin_task_fetch())),
        "beginSelection" => store.begin_selection(),
        "setActiveTask" => unit(store.set_active_task()),
        "settleSelection" => store.settle_selection(),
        "dispose" | "renew" => {
            // The wasm class keeps working after dispose (js/store.js refuses it): a fresh state.
            store.dispose();
            Ok(JsValue::UNDEFINED)
        }
        "sessionPendingAction" => store.session_pending_action(),
        "currentTurnId" => store.current_turn_id(),
        "pendingClarification" => store.pending_clarification(),
        "hiddenMessageIds" => store.hidden_message_ids(),
        "hasPendingPermission" => store.has_pending_permission(),
        "taskPendingAction" => store.task_pending_action(),
        "taskStatusSummary" => {
            let summary = store.task_status_summary()?;
            // An object it was handed, not a copy of its own (in the package, the objects it is
            // handed are js/read.js's frozen copies of the caller's summaries).
            assert!(
                summary.is_null()
                    || summary.is_undefined()
                    || kept.iter().any(|k| Object::is(k, &summary)),
                "taskStatusSummary is not an object the store was handed: {:?}",
                from_js(&summary)
            );
            Ok(summary)
        }
        "pendingOwner" => store.pending_owner(),
        other => panic!("unknown call {other}"),
    }
}

fn check_case(case: &store_common::Case) -> Result<(), String> {
    let store = JsProjectionStore::new(JsValue::UNDEFINED);
    let mut saved: HashMap<String, Value> = HashMap::new();
    let mut kept: Vec<JsValue> = Vec::new();
    for (n, step) in case.steps.iter().enumerate() {
        let at = format!("step {n} ({})", step.call);
        let args: Vec<Value> = step.args.iter().map(|a| resolve(a, &saved)).collect();
        let before = store.digest();
        match (call(&store, step, &args, &mut kept), &step.error) {
            (Err(error), Some(expected)) => {
                let get = |k: &str| {
                    Reflect::get(&error, &JsValue::from_str(k))
                        .ok()
                        .and_then(|v| v.as_string())
                };
                if get("code").as_deref() != Some(&expected.code)
                    || get("field").as_deref() != Some(&expected.field)
                {
                    return Err(format!(
                        "{at}: expected {}/{}, got {:?}/{:?}",
                        expected.code,
                        expected.field,
                        get("code"),
                        get("field")
                    ));
                }
                if store.digest() != before {
                    return Err(format!("{at}: a rejected call changed the state"));
                }
            }
            (Err(error), None) => {
                return Err(format!("{at}: unexpected throw {:?}", from_js(&error)))
            }
            (Ok(_), Some(expected)) => {
                return Err(format!("{at}: expected error {}", expected.code))
            }
            (Ok(result), None) => {
                let result_json = from_js(&result);
                if let Some(name) = &step.save {
                    let value = match step.call.as_str() {
                        "beginSelection" => {
                            result_json.as_ref().and_then(|r| r.get("ticket")).cloned()
                        }
                        _ => result_json.clone(),
                    };
                    saved.insert(name.clone(), value.unwrap_or(Value::Null));
                }
                if let Some(reload) = step.expect_reload {
                    let got = result_json
                        .as_ref()
                        .and_then(|r| r.get("reload"))
                        .and_then(Value::as_bool);
                    if got != Some(reload) {
                        return Err(format!("{at}: expected reload {reload}, got {got:?}"));
                    }
                }
                if let Some(expected) = &step.expect {
                    let expected = store_common::common::without_undefined(expected);
                    if expected != result_json {
                        return Err(format!("{at}: expected {expected:?}, got {result_json:?}"));
                    }
                }
                if let Some(code) = &step.reason {
                    if &store.last_reason() != code {
                        return Err(format!(
                            "{at}: expected reason {code}, got {}",
                            store.last_reason()
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// This runner dispatches every name the library's dispatcher does (`store_api::dispatch`; its
/// `applyFrame` excepted: the class has no such method, js/store.js routes frames): the call-name
/// list is the dispatcher's, only the calls are the JS class's own methods.
fn every_dispatched_name_is_run() {
    let store = JsProjectionStore::new(JsValue::UNDEFINED);
    let mut kept = Vec::new();
    let names = api::INPUTS.iter().chain(&api::QUERIES).chain(&api::RESETS);
    for name in names {
        let step = Step {
            call: (*name).to_owned(),
            args: Vec::new(),
            expect: None,
            expect_reload: None,
            reason: None,
            save: None,
            error: None,
        };
        // Without arguments most calls throw their typed error: what matters is that the name
        // reaches a method (an unknown one panics).
        let _ = call(&store, &step, &[], &mut kept);
    }
}

pub fn run_all() {
    every_dispatched_name_is_run();
    let file = load();
    let failures: Vec<String> = file
        .cases
        .iter()
        .filter_map(|case| {
            check_case(case)
                .err()
                .map(|why| format!("{}: {why}", case.name))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
