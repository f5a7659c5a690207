//! Conversion helpers of the binding: [`Wire`] for `JsValue`, typed errors as JS `Error`s, and
//! result builders. No rule logic.

use std::borrow::Cow;
use std::cell::RefCell;

use crate::store::hash::HashMap;

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use crate::error::WireError;
use crate::rules::model::{PendingAction, Revision};
use crate::wire::{Kind, Wire};

thread_local! {
    /// Property-name strings, created once: making a JS string from Rust costs more than the
    /// property read itself. Keyed by the static key's address and length.
    static KEYS: RefCell<HashMap<(usize, usize), JsValue>> = RefCell::new(HashMap::default());
}

/// A JS value seen through [`Wire`].
#[derive(Clone, Debug)]
pub struct Js(pub JsValue);

impl Wire for Js {
    fn kind(&self) -> Kind {
        let v = &self.0;
        if v.is_undefined() {
            Kind::Undefined
        } else if v.is_null() {
            Kind::Null
        } else if v.as_bool().is_some() {
            Kind::Bool
        } else if v.as_f64().is_some() {
            Kind::Number
        } else if v.is_string() {
            Kind::String
        } else if Array::is_array(v) {
            Kind::Array
        } else if v.is_object() && !v.is_function() {
            Kind::Object
        } else {
            Kind::Other
        }
    }

    fn get(&self, key: &'static str) -> Self {
        if !self.0.is_object() {
            return Js(JsValue::UNDEFINED);
        }
        // Only `js/read.js` snapshots get here (plain objects and arrays, no getters, no
        // proxies); a throwing read would still read as absent rather than unwind.
        Js(KEYS.with(|keys| {
            let mut keys = keys.borrow_mut();
            let key = keys
                .entry((key.as_ptr() as usize, key.len()))
                .or_insert_with(|| JsValue::from_str(key));
            Reflect::get(&self.0, key).unwrap_or(JsValue::UNDEFINED)
        }))
    }

    fn len(&self) -> usize {
        self.0
            .dyn_ref::<Array>()
            .map_or(0, |a| usize::try_from(a.length()).unwrap_or(0))
    }

    fn at(&self, index: usize) -> Self {
        match (self.0.dyn_ref::<Array>(), u32::try_from(index)) {
            (Some(array), Ok(index)) => Js(array.get(index)),
            _ => Js(JsValue::UNDEFINED),
        }
    }

    fn string(&self) -> Option<Cow<'_, str>> {
        self.0.as_string().map(Cow::Owned)
    }

    // Each check below is one cheap call across the boundary; `kind` (up to six) is kept for
    // error messages.
    fn is_undefined(&self) -> bool {
        self.0.is_undefined()
    }

    fn is_null(&self) -> bool {
        self.0.is_null()
    }

    fn is_object(&self) -> bool {
        self.0.is_object() && !Array::is_array(&self.0)
    }

    fn is_array(&self) -> bool {
        Array::is_array(&self.0)
    }

    fn number(&self) -> Option<f64> {
        self.0.as_f64()
    }

    fn boolean(&self) -> Option<bool> {
        self.0.as_bool()
    }

    fn unsigned(&self) -> Option<u64> {
        if self.0.is_bigint() {
            return u64::try_from(self.0.clone()).ok();
        }
        // A Number beyond 2^53 - 1 may be a rounded larger integer: only a BigInt is exact there.
        crate::wire::integral_u64(self.0.as_f64()?).filter(|&n| n <= MAX_SAFE_INTEGER)
    }
}

/// A typed error as a JS `Error` with `name` `TaskProjectionError`, a stable `code` and the
/// offending `field`.
pub fn js_error(error: WireError) -> JsValue {
    let js = js_sys::Error::new(&error.to_string());
    js.set_name("TaskProjectionError");
    // Setting a property on a fresh Error object cannot fail.
    let _ = Reflect::set(
        &js,
        &JsValue::from_str("code"),
        &JsValue::from_str(error.code().as_str()),
    );
    let _ = Reflect::set(
        &js,
        &JsValue::from_str("field"),
        &JsValue::from_str(error.field()),
    );
    js.into()
}

/// `"clarification" | "permission" | null`.
pub fn action(action: Option<PendingAction>) -> JsValue {
    action.map_or(JsValue::NULL, |a| JsValue::from_str(a.as_str()))
}

/// `Number.MAX_SAFE_INTEGER`: every integer up to it is exact as a JS Number.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A sequence as JS gets it back: a Number up to 2^53 - 1, a BigInt beyond (exact either way, so
/// it compares as it was given).
pub fn sequence(sequence: u64) -> JsValue {
    if sequence <= MAX_SAFE_INTEGER {
        #[allow(clippy::cast_precision_loss)]
        let exact = sequence as f64;
        JsValue::from_f64(exact)
    } else {
        JsValue::from(sequence)
    }
}

/// A fresh `{epoch, sequence}` object.
pub fn revision(revision: &Revision) -> JsValue {
    let object = Object::new();
    set(&object, "epoch", &JsValue::from_str(&revision.epoch));
    set(&object, "sequence", &sequence(revision.sequence));
    object.into()
}

/// Sets a property of an object this binding created (cannot fail).
pub fn set(object: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(object, &JsValue::from_str(key), value);
}
