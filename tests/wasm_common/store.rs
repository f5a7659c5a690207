//! Runs tests/fixtures/store_scenarios.json through the wasm `ProjectionStore` class.

use std::collections::HashMap;

use js_sys::Reflect;
use serde_json::Value;
use task_projection::wasm::JsProjectionStore;
use wasm_bindgen::JsValue;

#[path = "../store_common/mod.rs"]
mod store_common;

use super::{from_js, to_js};
use store_common::{load, resolve, Step};

fn call(store: &JsProjectionStore, step: &Step, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let a = |i: usize| args.get(i).cloned().unwrap_or(JsValue::UNDEFINED);
    let unit = |r: Result<(), JsValue>| r.map(|()| JsValue::UNDEFINED);
    match step.call.as_str() {
        "applySessionList" => unit(store.apply_session_list(a(0), a(1))),
        "applyTurnList" => unit(store.apply_turn_list(a(0), a(1))),
        "applyMessagePage" => unit(store.apply_message_page(a(0), a(1))),
        "applyMessageEvent" => unit(store.apply_message_event(a(0), a(1))),
        "applyMessageEvents" => unit(store.apply_message_events(a(0), a(1))),
        "applyTurnEvent" => unit(store.apply_turn_event(a(0))),
        "applySessionEvent" => unit(store.apply_session_event(a(0))),
        "applyStatusSummaryEvent" => unit(store.apply_status_summary_event(a(0))),
        "applyTaskUpdated" => unit(store.apply_task_updated(a(0))),
        "removeTask" => unit(store.remove_task(a(0))),
        "applyTaskSnapshot" => unit(store.apply_task_snapshot(a(0), a(1))),
        "beginTaskFetch" => Ok(JsValue::from_f64(store.begin_task_fetch())),
        "beginSelection" => store.begin_selection(a(0), a(1)),
        "setActiveTask" => unit(store.set_active_task(a(0))),
        "settleSelection" => store.settle_selection(a(0), a(1)),
        "dispose" | "renew" => {
            // The wasm class keeps working after dispose (js/store.js refuses it): a fresh state.
            store.dispose();
            Ok(JsValue::UNDEFINED)
        }
        "sessionPendingAction" => store.session_pending_action(a(0)),
        "currentTurnId" => store.current_turn_id(a(0)),
        "pendingClarification" => store.pending_clarification(a(0)),
        "hiddenMessageIds" => store.hidden_message_ids(a(0)),
        "hasPendingPermission" => store.has_pending_permission(a(0)).map(JsValue::from_bool),
        "taskPendingAction" => store.task_pending_action(a(0)),
        "taskStatusSummary" => store.task_status_summary(a(0)),
        "pendingOwner" => store.pending_owner(a(0), a(1)),
        other => panic!("unknown call {other}"),
    }
}

fn check_case(case: &store_common::Case) -> Result<(), String> {
    let store = JsProjectionStore::new(JsValue::UNDEFINED);
    let mut saved: HashMap<String, Value> = HashMap::new();
    for (n, step) in case.steps.iter().enumerate() {
        let at = format!("step {n} ({})", step.call);
        let args: Vec<JsValue> = step
            .args
            .iter()
            .map(|a| to_js(&resolve(a, &saved)))
            .collect();
        let before = store.digest();
        match (call(&store, step, &args), &step.error) {
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
                    let expected = super::common::without_undefined(expected);
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

pub fn run_all() {
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
