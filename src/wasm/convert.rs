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

impl Js {
    pub fn arg(value: &JsValue) -> Js {
        Js(value.clone())
    }
}

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
        // A throwing getter or proxy trap reads as absent rather than escaping as a panic.
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
        crate::wire::integral_u64(self.0.as_f64()?)
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

/// The elements of `array` at `indices`, in order (the caller's own objects).
pub fn pick(array: &JsValue, indices: &[usize]) -> Array {
    let out = Array::new_with_length(u32::try_from(indices.len()).unwrap_or(0));
    for (slot, &index) in indices.iter().enumerate() {
        if let (Ok(slot), Ok(index)) = (u32::try_from(slot), u32::try_from(index)) {
            out.set(slot, element(array, index));
        }
    }
    out
}

/// The element `index` of `array`, or `undefined`.
pub fn element(array: &JsValue, index: u32) -> JsValue {
    array
        .dyn_ref::<Array>()
        .map_or(JsValue::UNDEFINED, |a| a.get(index))
}

/// `"clarification" | "permission" | null`.
pub fn action(action: Option<PendingAction>) -> JsValue {
    action.map_or(JsValue::NULL, |a| JsValue::from_str(a.as_str()))
}

/// A fresh `{epoch, sequence}` object.
pub fn revision(revision: &Revision) -> JsValue {
    let object = Object::new();
    #[allow(clippy::cast_precision_loss)]
    let sequence = revision.sequence as f64;
    set(&object, "epoch", &JsValue::from_str(&revision.epoch));
    set(&object, "sequence", &JsValue::from_f64(sequence));
    object.into()
}

/// Sets a property of an object this binding created (cannot fail).
pub fn set(object: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(object, &JsValue::from_str(key), value);
}
