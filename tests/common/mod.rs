//! The scenario file shared by every runner (see docs/fixture-format.md).
#![allow(dead_code)]

use serde::Deserialize;
use serde_json::Value;

// The scenario files' `{"$undefined": true}` marker (fuzz/targets/common.rs includes it too).
mod marker;
#[allow(unused_imports)] // not every runner reads the marker itself
pub use marker::{is_undefined, without_undefined};

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
