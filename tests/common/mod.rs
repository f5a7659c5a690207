//! The scenario file shared by every runner (see docs/fixture-format.md).
#![allow(dead_code)]

use serde::Deserialize;
use serde_json::{Map, Value};

pub const SCENARIOS: &str = include_str!("../fixtures/scenarios.json");

#[derive(Debug, Deserialize)]
pub struct File {
    pub cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
pub struct Case {
    pub name: String,
    pub call: String,
    #[serde(default)]
    pub args: Vec<Value>,
    #[serde(default, deserialize_with = "present")]
    pub expect: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub expect_message: Option<Value>,
    #[serde(default)]
    pub expect_messages: Option<Vec<String>>,
    #[serde(default)]
    pub error: Option<ExpectedError>,
}

/// Keeps `"expect": null` apart from an absent key.
pub fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

#[derive(Debug, Deserialize)]
pub struct ExpectedError {
    pub code: String,
    pub field: String,
}

/// What a case expects.
#[derive(Debug)]
pub enum Expect<'a> {
    Value(&'a Value),
    /// The element of `args[0]` with this id, or `None` for `null`.
    Message(Option<&'a str>),
    Messages(&'a [String]),
    Error(&'a ExpectedError),
}

impl Case {
    pub fn expectation(&self) -> Expect<'_> {
        let mut found = Vec::new();
        if let Some(v) = &self.expect {
            found.push(Expect::Value(v));
        }
        if let Some(v) = &self.expect_message {
            found.push(Expect::Message(v.as_str()));
        }
        if let Some(v) = &self.expect_messages {
            found.push(Expect::Messages(v));
        }
        if let Some(v) = &self.error {
            found.push(Expect::Error(v));
        }
        assert_eq!(found.len(), 1, "{}: exactly one expectation key", self.name);
        found.remove(0)
    }
}

pub fn load() -> File {
    let file: File = serde_json::from_str(SCENARIOS).expect("scenarios.json parses");
    assert!(!file.cases.is_empty());
    file
}

/// Is this the `{"$undefined": true}` marker?
pub fn is_undefined(value: &Value) -> bool {
    matches!(value, Value::Object(map) if map.len() == 1 && map.get("$undefined") == Some(&Value::Bool(true)))
}

/// The value with every marker-valued property removed (an `undefined` property is an absent
/// key); `None` when the value itself is the marker.
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

/// The id of a message/turn wire object.
pub fn id_of(value: &Value) -> Option<&str> {
    value
        .get("id")
        .and_then(Value::as_str)
        .or_else(|| value.get("message_id").and_then(Value::as_str))
}

/// Position of the element of `args[0]` with this id.
pub fn position_of(args: &[Value], id: &str) -> Option<usize> {
    args.first()?
        .as_array()?
        .iter()
        .position(|m| id_of(m) == Some(id))
}
