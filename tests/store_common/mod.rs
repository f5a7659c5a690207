//! The store scenario file shared by every runner (see docs/store-fixture-format.md).
#![allow(dead_code)]

use serde::Deserialize;
use serde_json::Value;

#[path = "../common/mod.rs"]
pub mod common;

use common::present;
pub use common::ExpectedError;

pub const STORE_SCENARIOS: &str = include_str!("../fixtures/store_scenarios.json");

#[derive(Debug, Deserialize)]
pub struct File {
    pub cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
pub struct Case {
    pub name: String,
    pub steps: Vec<Step>,
}

#[derive(Debug, Deserialize)]
pub struct Step {
    pub call: String,
    #[serde(default)]
    pub args: Vec<Value>,
    #[serde(default, deserialize_with = "present")]
    pub expect: Option<Value>,
    #[serde(default)]
    pub expect_reload: Option<bool>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub save: Option<String>,
    #[serde(default)]
    pub error: Option<ExpectedError>,
}

pub fn load() -> File {
    let file: File = serde_json::from_str(STORE_SCENARIOS).expect("store_scenarios.json parses");
    assert!(!file.cases.is_empty());
    file
}

/// Replaces `{"$saved": name}` by the saved value.
pub fn resolve(value: &Value, saved: &std::collections::HashMap<String, Value>) -> Value {
    match value {
        Value::Object(map) if map.len() == 1 && map.contains_key("$saved") => {
            let name = map["$saved"].as_str().expect("$saved names a string");
            saved
                .get(name)
                .cloned()
                .unwrap_or_else(|| panic!("nothing saved as {name}"))
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), resolve(v, saved)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| resolve(v, saved)).collect()),
        other => other.clone(),
    }
}

/// The calls of the scenario file that are inputs (the rest are queries, and `dispose` /
/// `renew`): the library dispatcher's list.
#[allow(unused_imports)] // not every runner reads it
pub use task_projection::wire::store_api::INPUTS;

/// The arguments of a scenario step as the JS runner passes them: `{"$undefined": true}` an
/// absent key (trailing undefined arguments left out: absent, as in JS).
pub fn args_of(step: &Step, saved: &std::collections::HashMap<String, Value>) -> Vec<Value> {
    let mut args: Vec<Option<Value>> = step
        .args
        .iter()
        .map(|a| common::without_undefined(&resolve(a, saved)))
        .collect();
    while args.last().is_some_and(Option::is_none) {
        args.pop();
    }
    args.into_iter().map(|a| a.unwrap_or(Value::Null)).collect()
}

/// The inbox's answer as the JS class returns it (`inbox(workspaceId)`, SPEC §14).
#[allow(dead_code)]
pub fn inbox_json(inbox: &task_projection::store::InboxAnswer<'_>) -> Value {
    use task_projection::rules::workspace::State;
    let rows: Vec<Value> = inbox
        .rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "pendingId": r.pending_id,
                "sessionId": r.session_id,
                "taskId": r.task_id,
                "createdAt": r.created_at.text(),
                "row": r.row,
            })
        })
        .collect();
    let state = match inbox.state {
        State::Known => "known",
        State::Failed => "error",
        _ => "unknown",
    };
    serde_json::json!({
        "state": state,
        "reason": inbox.state.as_str(),
        "reread": inbox.state.reread(),
        "count": rows.len(),
        "rows": rows,
        "more": inbox.more,
        "hiddenCount": inbox.hidden_count,
        "nextSnoozeExpiry": inbox.next_snooze_expiry.map(|t| t.text()),
        "seed": inbox.seed.map(|s| serde_json::json!({"count": s.count, "hasMore": s.has_more})),
    })
}
