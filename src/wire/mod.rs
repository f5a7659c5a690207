//! Translation of the backend's wire objects (SPEC §1) into rule types.
//!
//! Decoding is written once, generic over [`Wire`]: a read-only view of a JSON-like value.
//! `serde_json::Value` implements it here (native callers, the server, the native tests); the
//! tape (`tape::Value`, the arguments `js/read.js` writes into wasm memory) implements it for the
//! wasm binding. Errors name the offending field by path.

pub mod action;
pub mod api;
mod decode;
pub mod events;
pub mod fast;
pub mod held;
pub mod inbox;
mod json;
pub mod shape;
pub mod snapshot;
pub mod store_api;
pub mod tape;

use std::fmt;

pub use decode::*;
pub use json::Json;

/// The JSON/JS type of a value, as far as decoding cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// JS `undefined`, or an absent key.
    Undefined,
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
    /// Anything else (functions, symbols, bigints).
    Other,
}

impl Kind {
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Undefined => "undefined",
            Kind::Null => "null",
            Kind::Bool => "boolean",
            Kind::Number => "number",
            Kind::String => "string",
            Kind::Array => "array",
            Kind::Object => "object",
            Kind::Other => "a non-JSON value",
        }
    }
}

/// A read-only view of a JSON-like value.
#[allow(clippy::len_without_is_empty)]
pub trait Wire: Sized {
    /// A string's text as the value holds it (`&str` borrowed from the input, outliving the
    /// view: decoders can keep it without a copy).
    type Text: AsRef<str> + Copy + Into<String>;
    fn kind(&self) -> Kind;
    /// The property `key` of an object; [`Kind::Undefined`] when absent or not an object.
    /// Keys are static so a binding can cache their JS strings.
    fn get(&self, key: &'static str) -> Self;
    /// The length of an array (0 for anything else).
    fn len(&self) -> usize;
    /// The element `index` of an array; [`Kind::Undefined`] when out of range.
    fn at(&self, index: usize) -> Self;
    fn string(&self) -> Option<Self::Text>;
    fn number(&self) -> Option<f64>;
    fn boolean(&self) -> Option<bool>;
    /// A non-negative integer that fits `u64` (exactly, where the source can say so).
    fn unsigned(&self) -> Option<u64> {
        integral_u64(self.number()?)
    }
    fn is_undefined(&self) -> bool {
        self.kind() == Kind::Undefined
    }
    fn is_null(&self) -> bool {
        self.kind() == Kind::Null
    }
    /// `undefined` (or an absent key) or `null`.
    fn is_absent(&self) -> bool {
        self.is_undefined() || self.is_null()
    }
    /// A plain object (not an array, not `null`).
    fn is_object(&self) -> bool {
        self.kind() == Kind::Object
    }
    fn is_array(&self) -> bool {
        self.kind() == Kind::Array
    }
    /// Whether a status summary the store is to hold is within [`held`]'s bounds (checked here
    /// natively; on the tape `js/read.js` has checked them, and copied the summary).
    fn check_held(&self, path: &Path<'_>) -> Result<(), crate::error::WireError> {
        let _ = path;
        Ok(())
    }
}

/// `n` as a `u64` when it is a non-negative integer below 2^64 (every such `f64` converts
/// exactly).
pub fn integral_u64(n: f64) -> Option<u64> {
    (n >= 0.0 && n.fract() == 0.0 && n < 18_446_744_073_709_551_616.0).then(|| {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let n = n as u64;
        n
    })
}

/// The path of a value inside the arguments, for error messages (`messages[2].metadata.status`).
#[derive(Clone, Copy, Debug)]
pub enum Path<'a> {
    Root(&'static str),
    Key(&'a Path<'a>, &'static str),
    Index(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    pub fn key(&'a self, key: &'static str) -> Path<'a> {
        Path::Key(self, key)
    }
    pub fn index(&'a self, index: usize) -> Path<'a> {
        Path::Index(self, index)
    }
}

impl Path<'_> {
    /// The path as text, `messages[2].metadata.status` (without `core::fmt`: the wasm builds
    /// link none of it).
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Path::Root(name) => out.push_str(name),
            Path::Key(parent, key) => {
                parent.write(out);
                out.push('.');
                out.push_str(key);
            }
            Path::Index(parent, index) => {
                parent.write(out);
                out.push('[');
                crate::text::push_uint(out, *index as u64);
                out.push(']');
            }
        }
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}
