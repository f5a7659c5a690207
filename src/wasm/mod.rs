//! The wasm-bindgen binding. Two modules are built from it, each by a Cargo feature: the store
//! (`store-exports`: [`JsProjectionStore`], the package's `task-projection`) and the stateless rule
//! functions (`rules-exports`: [`rules`], `task-projection/rules`); a page that only uses the store
//! downloads no stateless export. Tests build both. Each export decodes its arguments through
//! [`crate::wire`], calls the store or exactly one rule, and converts the result back. No rule
//! logic lives here.
//!
//! These exports are the package's internals: `js/api.js` and `js/store.js` wrap every one of
//! them. The wrappers read each caller value exactly once, in JS (`js/read.js`), and write what
//! they read onto the tape ([`crate::wire::tape`]) right before the call; the exports take their
//! arguments from the tape, so no JS value is read from here and no caller code (a getter, a
//! Proxy trap) ever runs under a wasm frame. Results that are the caller's own objects are
//! returned as indices and picked in JS.
//!
//! Declarations for TypeScript are hand-written (`types/*.d.ts`, shipped through
//! `typescript_custom_section`s: the wire types in both modules, each module's own API in its
//! own), so every export is typed precisely; the exports themselves skip wasm-bindgen's
//! generated `any` signatures.

mod alloc;
mod convert;
#[cfg(feature = "rules-exports")]
mod rules;
#[cfg(feature = "store-exports")]
mod store;

#[global_allocator]
static ALLOCATOR: alloc::Allocator = alloc::allocator();

pub use convert::load_tape;
#[cfg(feature = "rules-exports")]
pub use rules::*;
#[cfg(feature = "store-exports")]
pub use store::JsProjectionStore;

use wasm_bindgen::prelude::*;

/// `__tape(which, words, bytes)`: room for a call's arguments ([`convert::tape_reserve`]).
#[wasm_bindgen(js_name = __tape, skip_typescript)]
pub fn tape(which: u32, words: f64, bytes: f64) -> Result<u32, JsValue> {
    convert::tape_reserve(which, words, bytes)
}

/// `__tapeBytes(which)`: the address of tape `which`'s bytes.
#[wasm_bindgen(js_name = __tapeBytes, skip_typescript)]
pub fn tape_bytes(which: u32) -> u32 {
    convert::tape_bytes(which)
}

/// `__tapeMissed()`: how many key reads the shapes did not have since the last call
/// ([`crate::wire::tape::take_missed`]; tests check the schemas of `js/read.js` with it).
#[wasm_bindgen(js_name = __tapeMissed, skip_typescript)]
pub fn tape_missed() -> u32 {
    crate::wire::tape::take_missed()
}

/// `__memory()`: the module's `WebAssembly.Memory` (`read.js` writes the tape into it, `store.js`
/// the scratch buffer).
#[wasm_bindgen(js_name = __memory, skip_typescript)]
pub fn memory() -> JsValue {
    wasm_bindgen::memory()
}

/// The wire types and errors, in both modules' declarations.
#[wasm_bindgen(typescript_custom_section)]
const WIRE_TYPES: &'static str = include_str!("types/wire.d.ts");
