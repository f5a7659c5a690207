//! What the store holds of a status summary beyond the fields the rules read (SPEC §1): the
//! caller's data, as JSON data, within bounds. `js/read.js` (its `held`, with these constants
//! generated into it) reads a summary into a frozen copy of its own at the call and refuses what
//! JSON cannot carry (a cycle, a `BigInt`, `NaN`, a `Date`, a throwing getter) or what exceeds the
//! bounds; natively a `serde_json::Value` is JSON data already, so only the bounds are checked
//! ([`check`], by `Json`'s `check_held`). Whatever the store accepts it can therefore always write
//! (`dehydrate`) and read back (`hydrate`), and nothing the caller still holds is kept.

use serde_json::Value;

use crate::error::{WireError, WireErrorKind};

/// A held summary nests at most this many levels of objects and arrays (the summary itself is
/// the first).
pub const DEPTH: usize = 32;
/// A held summary is at most this many values (every object, array, string, number, boolean and
/// `null` in it, the summary itself included).
pub const VALUES: usize = 10_000;
/// A held summary's keys and strings are at most this many UTF-16 code units together.
pub const TEXT: usize = 1 << 20;

/// The problems, worded as `js/read.js` words them.
pub const TOO_DEEP: &str = "nested deeper than 32 levels (a status summary's bound)";
pub const TOO_MANY: &str = "more than 10000 values (a status summary's bound)";
pub const TOO_LONG: &str =
    "more than 1048576 characters of keys and strings (a status summary's bound)";

/// `value` (a summary at `field`) within the bounds, else `invalid_value` at the first value
/// beyond one, depth first in the map's key order (sorted, unless serde_json's `preserve_order`
/// is on). `js/read.js` reads an object's keys in their own order, so where several values
/// exceed a bound the two may name different ones; the code and the problem are the same.
pub fn check(value: &Value, field: String) -> Result<(), WireError> {
    // The summary itself is the first value.
    let mut budget = Budget {
        values: 1,
        text: 0,
        field,
    };
    budget.value(value, 1)
}

struct Budget {
    values: usize,
    text: usize,
    /// The path of the value being read.
    field: String,
}

impl Budget {
    fn refuse(&self, problem: &str) -> WireError {
        WireError::from(WireErrorKind::InvalidValue {
            field: self.field.clone(),
            problem: String::from(problem),
        })
    }

    fn text(&mut self, text: &str) -> Result<(), WireError> {
        self.text = self.text.saturating_add(text.encode_utf16().count());
        if self.text > TEXT {
            return Err(self.refuse(TOO_LONG));
        }
        Ok(())
    }

    /// An array or object at `depth` with `len` elements: within the depth, its elements
    /// counted before any is read (as `js/read.js` refuses a too-long array before reading it).
    fn enter(&mut self, len: usize, depth: usize) -> Result<(), WireError> {
        if depth > DEPTH {
            return Err(self.refuse(TOO_DEEP));
        }
        self.values = self.values.saturating_add(len);
        if self.values > VALUES {
            return Err(self.refuse(TOO_MANY));
        }
        Ok(())
    }

    /// One value at `depth` (counted already, by its parent or as the summary).
    fn value(&mut self, value: &Value, depth: usize) -> Result<(), WireError> {
        let at = self.field.len();
        let below = depth.saturating_add(1);
        match value {
            Value::String(s) => self.text(s),
            Value::Array(items) => {
                self.enter(items.len(), depth)?;
                for (i, item) in items.iter().enumerate() {
                    self.field.push('[');
                    crate::text::push_uint(&mut self.field, i as u64);
                    self.field.push(']');
                    self.value(item, below)?;
                    self.field.truncate(at);
                }
                Ok(())
            }
            Value::Object(map) => {
                self.enter(map.len(), depth)?;
                for (key, item) in map {
                    self.field.push('.');
                    self.field.push_str(key);
                    self.text(key)?;
                    self.value(item, below)?;
                    self.field.truncate(at);
                }
                Ok(())
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nested(levels: usize) -> Value {
        let mut v = json!({});
        for _ in 1..levels {
            v = json!({ "next": v });
        }
        v
    }

    fn problem(value: &Value) -> Option<(String, String)> {
        match check(value, String::from("payload.status_summary")).map_err(|e| e.kind().clone()) {
            Ok(()) => None,
            Err(WireErrorKind::InvalidValue { field, problem }) => Some((field, problem)),
            Err(other) => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn the_problems_name_the_bounds() {
        assert!(TOO_DEEP.contains(&DEPTH.to_string()));
        assert!(TOO_MANY.contains(&VALUES.to_string()));
        assert!(TOO_LONG.contains(&TEXT.to_string()));
    }

    #[test]
    fn depth_is_bounded_at_32_levels() {
        assert_eq!(problem(&nested(DEPTH)), None);
        let (field, text) = problem(&nested(DEPTH + 1)).expect("too deep");
        assert_eq!(text, TOO_DEEP);
        assert_eq!(
            field,
            format!("payload.status_summary{}", ".next".repeat(DEPTH))
        );
        // An empty array at the 33rd level is too deep as well; a string there is not.
        let mut v = json!([]);
        for _ in 0..DEPTH {
            v = json!({ "a": v });
        }
        assert!(problem(&v).is_some());
        let mut v = json!("leaf");
        for _ in 0..DEPTH {
            v = json!({ "a": v });
        }
        assert_eq!(problem(&v), None);
    }

    #[test]
    fn values_are_bounded() {
        // The summary and its array: 2 values, plus the elements.
        let fits = json!({ "a": vec![0; VALUES - 2] });
        assert_eq!(problem(&fits), None);
        let over = json!({ "a": vec![0; VALUES - 1] });
        let (field, text) = problem(&over).expect("too many");
        assert_eq!(
            (field.as_str(), text.as_str()),
            ("payload.status_summary.a", TOO_MANY)
        );
    }

    #[test]
    fn text_is_bounded_in_utf16_code_units() {
        // "é" is one unit, "😀" two.
        let fits = json!({ "k": "😀".repeat((TEXT - 1) / 2) });
        assert_eq!(problem(&fits), None);
        let over = json!({ "k": "😀".repeat(TEXT / 2) });
        let (field, text) = problem(&over).expect("too long");
        assert_eq!(
            (field.as_str(), text.as_str()),
            ("payload.status_summary.k", TOO_LONG)
        );
        let key = json!({ "x".repeat(TEXT + 1): 1 });
        assert!(problem(&key).is_some(), "keys count too");
    }

    #[test]
    fn a_summary_as_the_backend_sends_it_is_held() {
        let summary = json!({
            "revision": 4, "updated_at": "2026-12-06T10:00:00Z", "pending_action": "clarification",
            "primary_session": { "id": "s1", "state": "WAITING_FOR_INPUT" },
            "git": { "branch": "main", "ahead": 2, "files": [{ "path": "a.rs", "added": 3 }] },
        });
        assert_eq!(problem(&summary), None);
    }
}
