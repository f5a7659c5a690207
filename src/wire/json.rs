//! [`Wire`] for `serde_json::Value`.

use serde_json::Value;

use super::{held, integral_u64, Kind, Path, Wire};
use crate::error::WireError;

/// A borrowed `serde_json::Value`, or an absent one.
#[derive(Clone, Copy, Debug)]
pub struct Json<'a>(pub Option<&'a Value>);

impl<'a> Json<'a> {
    pub fn new(value: &'a Value) -> Self {
        Json(Some(value))
    }
    /// An absent value (an argument that was not passed).
    pub const ABSENT: Json<'static> = Json(None);
}

impl<'a> Wire for Json<'a> {
    type Text = &'a str;
    fn kind(&self) -> Kind {
        match self.0 {
            None => Kind::Undefined,
            Some(Value::Null) => Kind::Null,
            Some(Value::Bool(_)) => Kind::Bool,
            Some(Value::Number(_)) => Kind::Number,
            Some(Value::String(_)) => Kind::String,
            Some(Value::Array(_)) => Kind::Array,
            Some(Value::Object(_)) => Kind::Object,
        }
    }
    fn get(&self, key: &'static str) -> Self {
        Json(self.0.and_then(|v| v.as_object()).and_then(|o| o.get(key)))
    }
    fn len(&self) -> usize {
        self.0.and_then(Value::as_array).map_or(0, Vec::len)
    }
    fn at(&self, index: usize) -> Self {
        Json(self.0.and_then(Value::as_array).and_then(|a| a.get(index)))
    }
    fn string(&self) -> Option<&'a str> {
        self.0.and_then(Value::as_str)
    }
    fn number(&self) -> Option<f64> {
        self.0.and_then(Value::as_f64)
    }
    fn boolean(&self) -> Option<bool> {
        self.0.and_then(Value::as_bool)
    }
    fn unsigned(&self) -> Option<u64> {
        let value = self.0?;
        value.as_u64().or_else(|| integral_u64(value.as_f64()?))
    }
    fn check_held(&self, path: &Path<'_>) -> Result<(), WireError> {
        self.0
            .map_or(Ok(()), |value| held::check(value, path.text()))
    }
}
