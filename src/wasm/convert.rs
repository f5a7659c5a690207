//! Conversion helpers of the binding: the tape buffer the arguments arrive in
//! ([`crate::wire::tape`]), typed errors as JS `Error`s, and result builders. No rule logic.

use std::cell::RefCell;

use js_sys::{Object, Reflect};
use wasm_bindgen::JsValue;

use crate::error::{WireError, WireErrorKind};
use crate::store::Navigation;
use crate::wire::tape::{Tape, LARGE_BYTES, LARGE_WORDS, SPILL};

/// One tape's buffers.
#[derive(Default)]
struct Buffers {
    words: Vec<u32>,
    bytes: Vec<u8>,
}

impl Buffers {
    fn large(&self) -> bool {
        self.words.len() > LARGE_WORDS || self.bytes.len() > LARGE_BYTES
    }
}

/// The two tapes. `js/read.js` writes a call's arguments into `direct` in place, while it reads
/// them; a call made while that walk is under way (a caller's getter calling the package) has its
/// arguments copied into `spill` right before the call, and marks `direct`'s first word with
/// [`SPILL`], which `direct`'s own send overwrites with its length.
#[derive(Default)]
struct Tapes {
    direct: Buffers,
    spill: Buffers,
}

thread_local! {
    static TAPE: RefCell<Tapes> = RefCell::default();
}

/// `__tape(which, words, bytes)` → the address of `words` words of tape `which` (0: direct, 1:
/// spill), with what they held kept; the address of its `bytes` bytes is `__tapeBytes(which)`.
/// Valid until the next `__tape` or a call that used a large tape. A size the memory cannot hold
/// is a typed error, not an abort.
pub fn tape_reserve(which: u32, words: f64, bytes: f64) -> Result<u32, JsValue> {
    let size = |n: f64, field: &str| {
        crate::wire::integral_u64(n)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| misuse(field))
    };
    let (words, bytes) = (size(words, "words")?, size(bytes, "bytes")?);
    TAPE.with(|tape| {
        let mut tapes = tape.try_borrow_mut().map_err(|_| misuse("tape"))?;
        let tape = match which {
            0 => &mut tapes.direct,
            1 => &mut tapes.spill,
            _ => return Err(misuse("which")),
        };
        let too_large = || {
            js_error(WireError::from(WireErrorKind::InvalidValue {
                field: "arguments".into(),
                problem: "too large for the memory left".into(),
            }))
        };
        grow(&mut tape.words, words).map_err(|_| too_large())?;
        grow(&mut tape.bytes, bytes).map_err(|_| too_large())?;

        // wasm32: an address fits u32.
        u32::try_from(tape.words.as_ptr() as usize).map_err(|_| misuse("words"))
    })
}

/// `v` at least `n` elements long (new ones zeroed, the others kept).
fn grow<T: Copy + Default>(
    v: &mut Vec<T>,
    n: usize,
) -> Result<(), std::collections::TryReserveError> {
    if n > v.len() {
        v.try_reserve_exact(n.saturating_sub(v.len()))?;
        v.resize(n, T::default());
    }
    Ok(())
}

/// `__tapeBytes(which)` → the address of tape `which`'s bytes.
pub fn tape_bytes(which: u32) -> u32 {
    TAPE.with(|tape| {
        tape.try_borrow()
            .ok()
            .and_then(|t| {
                let bytes = match which {
                    0 => &t.direct.bytes,
                    _ => &t.spill.bytes,
                };
                u32::try_from(bytes.as_ptr() as usize).ok()
            })
            .unwrap_or(0)
    })
}

/// `f` over the tape of the current call; a decoding error becomes a JS `TaskProjectionError`.
pub fn with_tape<R>(f: impl FnOnce(Tape<'_>) -> Result<R, WireError>) -> Result<R, JsValue> {
    // The generic part is only this: every export has its own copy of it, so the tape's
    // borrowing and checks live once, in `on_tape`.
    let mut f = Some(f);
    let mut out = None;
    on_tape(&mut |tape| out = f.take().map(|f| f(tape)))?;
    out.ok_or_else(|| misuse("tape"))?.map_err(js_error)
}

#[inline(never)]
fn on_tape(f: &mut dyn FnMut(Tape<'_>)) -> Result<(), JsValue> {
    let (spill, large) = TAPE.with(|tape| {
        let tapes = tape.try_borrow().map_err(|_| misuse("tape"))?;
        let spill = tapes.direct.words.first() == Some(&SPILL);
        let buffers = if spill { &tapes.spill } else { &tapes.direct };
        let read = Tape::new(&buffers.words, &buffers.bytes).ok_or_else(|| misuse("tape"))?;
        f(read);
        Ok::<_, JsValue>((spill, buffers.large()))
    })?;
    if large {
        TAPE.with(|tape| {
            if let Ok(mut tapes) = tape.try_borrow_mut() {
                *(if spill {
                    &mut tapes.spill
                } else {
                    &mut tapes.direct
                }) = Buffers::default();
            }
        });
    }
    Ok(())
}

/// Puts `tape` where the next call takes its arguments from, as `js/read.js` does (the
/// wasm-bindgen tests call the exports this way).
pub fn load_tape(tape: &crate::wire::tape::Writer) {
    TAPE.with(|t| {
        if let Ok(mut t) = t.try_borrow_mut() {
            t.direct.words.clone_from(&tape.words);
            t.direct.bytes.clone_from(&tape.bytes);
        }
    });
}

/// A boundary argument only the package's own JS could get wrong.
pub fn misuse(field: &str) -> JsValue {
    js_error(WireError::from(WireErrorKind::InvalidValue {
        field: field.into(),
        problem: "not a value the package's JS passes".into(),
    }))
}

/// A typed error as a JS `Error` with `name` `TaskProjectionError`, a stable `code` and the
/// offending `field`.
pub fn js_error(error: WireError) -> JsValue {
    let js = js_sys::Error::new(&error.message());
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

/// `{ kind: "session", sessionId } | { kind: "task_only" } | { kind: "inert" }`: where a settled
/// selection navigates (`selectionOutcome`, `settleSelection`).
pub fn navigation(outcome: &Navigation) -> JsValue {
    let object = Object::new();
    let kind = match outcome {
        Navigation::Session(_) => "session",
        Navigation::TaskOnly => "task_only",
        Navigation::Inert => "inert",
    };
    set(&object, "kind", &JsValue::from_str(kind));
    if let Navigation::Session(id) = outcome {
        set(&object, "sessionId", &JsValue::from_str(id));
    }
    object.into()
}

/// Sets a property of an object this binding created (cannot fail).
pub fn set(object: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(object, &JsValue::from_str(key), value);
}
