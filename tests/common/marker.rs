//! The scenario files' `{"$undefined": true}` marker: an argument passed as `undefined`, or a
//! property holding `undefined` (an absent key). Shared by the test runners (tests/common) and
//! the fuzz target bodies (fuzz/targets/common.rs).

use serde_json::{Map, Value};

/// Is this the `{"$undefined": true}` marker?
pub fn is_undefined(value: &Value) -> bool {
    matches!(value, Value::Object(map) if map.len() == 1 && map.get("$undefined") == Some(&Value::Bool(true)))
}

/// The value with every marker-valued property removed (an `undefined` property is an absent
/// key; `null` inside arrays, which cannot hold an absent element); `None` when the value itself
/// is the marker.
pub fn without_undefined(value: &Value) -> Option<Value> {
    if is_undefined(value) {
        return None;
    }
    Some(match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter_map(|(k, v)| without_undefined(v).map(|v| (k.clone(), v)))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| without_undefined(v).unwrap_or(Value::Null))
                .collect(),
        ),
        other => other.clone(),
    })
}
