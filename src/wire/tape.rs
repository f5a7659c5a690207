//! The tape: how the arguments of a call cross from JS into wasm. `js/read.js` walks each
//! argument once (by the schema of what the decoders read) and writes what it read as numbers
//! into two arrays in wasm memory: 32-bit words (the structure) and bytes (UTF-8 text). The one
//! decoder of [`super::decode`] then reads that form through [`Wire`], exactly as it reads a
//! `serde_json::Value` natively. No JS value is read from wasm, so no caller code can run under a
//! wasm frame, and every field has been read once, by construction.
//!
//! # Format
//! A *cell* is one word: a tag in the low 4 bits ([`tag`]) and a payload above (28 bits). Scalars
//! live in the cell; everything else in a *block* of words at the payload's word index:
//!
//! | tag        | payload / block                                                      |
//! |------------|----------------------------------------------------------------------|
//! | `UNDEFINED`, `NULL`, `FALSE`, `TRUE`, `OTHER` | unused (`OTHER`: a function, a symbol, a BigInt outside 0..2^64) |
//! | `INT`      | the value: an integer Number in 0..2^28 (not -0)                   |
//! | `NUMBER`   | block `[low, high]`: the bits of any other Number (`f64`)            |
//! | `BIG`      | block `[low, high]`: a BigInt in 0..2^64                             |
//! | `STRING`   | block `[offset, length]` of its UTF-8 in the bytes                   |
//! | `ARRAY`    | block `[n, cell × n]`                                                |
//! | `OBJECT`   | block `[shape, cell × n]`, the cells in the shape's key order        |
//! | `KEPT`     | block `[shape, kept, cell × n]`: an object the store keeps and hands back (a status summary), `kept` its index among the call's kept objects |
//!
//! A shape is a block `[n, (offset, length) × n]`: the UTF-8 of each key in the bytes (one per
//! schema node and call). The first two words are the header `[words used, bytes used]`; the
//! root, at word 2, is the block of an array of the call's arguments.
//!
//! Reading never trusts the tape: every index is checked, and whatever does not fit reads as
//! `undefined` (only a bug of `js/read.js` could produce it; it then fails as a typed error of
//! the decoder, never as a trap).

use std::cell::Cell;

use super::{integral_u64, Kind, Wire};

thread_local! {
    static MISSED: Cell<u32> = const { Cell::new(0) };
    /// Tapes made so far: each [`Tape`] has its own number, which keys [`FOUND`].
    static TAPES: Cell<u32> = const { Cell::new(0) };
    /// Where keys were last found: a key's position in a shape, by tape, shape and key (the
    /// decoders read one key of many objects of one shape; a hit is two compares instead of a
    /// scan of the shape's key texts). Direct-mapped by the key's address.
    static FOUND: [Cell<Found>; FOUND_SLOTS] = const { [const { Cell::new(Found::NONE) }; FOUND_SLOTS] };
}

/// Slots of [`FOUND`]: more than the keys one decoder reads; a prime, so the addresses of keys a
/// few bytes apart take different slots.
const FOUND_SLOTS: usize = 61;

/// A key found at `index` of the shape at word `shape` of tape `tape`; the key by the address
/// and length of its (static) text.
#[derive(Clone, Copy)]
struct Found {
    tape: u32,
    shape: usize,
    key: usize,
    len: usize,
    index: usize,
}

impl Found {
    /// Matches no lookup: no tape is numbered 0.
    const NONE: Found = Found {
        tape: 0,
        shape: 0,
        key: 0,
        len: 0,
        index: 0,
    };

    /// The slot of the key at address `key`.
    fn slot(key: usize) -> usize {
        key % FOUND_SLOTS
    }
}

/// How many reads of a key were not in the object's shape since the last call (reads of a
/// stand-in's empty shape aside). With the schemas of `js/read.js` every key a decoder reads is in
/// the shape, so tests/js/boundary.test.mjs expects 0 after the scenarios.
pub fn take_missed() -> u32 {
    MISSED.with(|m| m.replace(0))
}

/// The tags of a cell (`TAG` in `js/read.js`, which tests/generated.rs writes from these).
pub mod tag {
    pub const UNDEFINED: u32 = 0;
    pub const NULL: u32 = 1;
    pub const FALSE: u32 = 2;
    pub const TRUE: u32 = 3;
    pub const INT: u32 = 4;
    pub const NUMBER: u32 = 5;
    pub const BIG: u32 = 6;
    pub const OTHER: u32 = 7;
    pub const STRING: u32 = 8;
    pub const ARRAY: u32 = 9;
    pub const OBJECT: u32 = 10;
    pub const KEPT: u32 = 11;

    /// Every tag by its name in `TAG` of `js/read.js`.
    pub const ALL: &[(&str, u32)] = &[
        ("undefined", UNDEFINED),
        ("null", NULL),
        ("false", FALSE),
        ("true", TRUE),
        ("int", INT),
        ("number", NUMBER),
        ("big", BIG),
        ("other", OTHER),
        ("string", STRING),
        ("array", ARRAY),
        ("object", OBJECT),
        ("kept", KEPT),
    ];
}

/// Tape buffers larger than this are released after the call that used them (wasm memory does
/// not shrink, but the allocator reuses it). `js/read.js` (its `LARGE_WORDS`, `LARGE_BYTES`,
/// generated from these) asks for room again after sending one that large.
pub const LARGE_WORDS: usize = 1 << 18;
pub const LARGE_BYTES: usize = 1 << 20;

/// The direct tape's first word (its length in words) when a call's arguments are on the spill
/// tape instead (src/wasm/convert.rs; `SPILL_MARK` in `js/read.js`, generated from this).
/// No tape is that long: a payload stays below 2^28 words.
pub const SPILL: u32 = u32::MAX;

/// Bits of a cell that hold its tag.
const TAG_BITS: u32 = 4;
/// A cell's payload (an `INT`'s value, a block's word index) is below this (`PAYLOAD_LIMIT` in
/// `js/read.js`).
pub const PAYLOAD_LIMIT: u32 = 1 << (32 - TAG_BITS);
/// Word index of the root block (after the header; `ROOT` in `js/read.js`).
pub const ROOT: u32 = 2;
/// The most arguments a call passes: `js/read.js` keeps room for them in the root block
/// (`MAX_ARGS` in `js/read.js`).
pub const MAX_ARGS: u32 = 3;

/// `Number.MAX_SAFE_INTEGER`: a Number beyond it may be a rounded larger integer.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A tape: the words and bytes a call's arguments were written into.
#[derive(Clone, Copy, Debug)]
pub struct Tape<'a> {
    words: &'a [u32],
    bytes: &'a [u8],
    /// This tape's number (from 1), for [`FOUND`].
    number: u32,
}

impl<'a> Tape<'a> {
    /// The tape in `words` and `bytes`, as long as its header says (`None` when the header
    /// claims more than there is).
    pub fn new(words: &'a [u32], bytes: &'a [u8]) -> Option<Tape<'a>> {
        let used = |i: usize| words.get(i).and_then(|&n| usize::try_from(n).ok());
        let (w, b) = (used(0)?, used(1)?);
        let words = words.get(..w)?;
        let bytes = bytes.get(..b)?;
        // Wrapping past 2^32 tapes could meet an old entry only if its tape were still read.
        let number = TAPES.with(|n| {
            let next = n.get().wrapping_add(1).max(1);
            n.set(next);
            next
        });
        Some(Tape {
            words,
            bytes,
            number,
        })
    }

    /// The argument `index` of the call (`undefined` when the call has fewer).
    pub fn arg(self, index: usize) -> Value<'a> {
        Value {
            tape: self,
            cell: (ROOT << TAG_BITS) | tag::ARRAY,
        }
        .at(index)
    }

    fn word(self, index: usize) -> Option<u32> {
        self.words.get(index).copied()
    }

    fn text(self, offset: u32, length: u32) -> Option<&'a [u8]> {
        let start = usize::try_from(offset).ok()?;
        let end = start.checked_add(usize::try_from(length).ok()?)?;
        self.bytes.get(start..end)
    }
}

/// A value on a tape.
#[derive(Clone, Copy, Debug)]
pub struct Value<'a> {
    tape: Tape<'a>,
    cell: u32,
}

impl<'a> Value<'a> {
    fn tag(self) -> u32 {
        self.cell & ((1 << TAG_BITS) - 1)
    }

    fn payload(self) -> usize {
        usize::try_from(self.cell >> TAG_BITS).unwrap_or(usize::MAX)
    }

    /// Word `offset` of this value's block.
    fn block(self, offset: usize) -> Option<u32> {
        self.tape.word(self.payload().checked_add(offset)?)
    }

    fn cell(self, cell: Option<u32>) -> Value<'a> {
        Value {
            tape: self.tape,
            cell: cell.unwrap_or(tag::UNDEFINED),
        }
    }

    /// The 64 bits of a `NUMBER` or `BIG` block.
    fn bits(self) -> Option<u64> {
        Some(u64::from(self.block(0)?) | (u64::from(self.block(1)?) << 32))
    }

    /// Where an object's cells start, and its shape.
    fn fields(self) -> Option<(usize, usize)> {
        let first = match self.tag() {
            tag::OBJECT => 1,
            tag::KEPT => 2,
            _ => return None,
        };
        let shape = usize::try_from(self.block(0)?).ok()?;
        Some((self.payload().checked_add(first)?, shape))
    }

    /// The index among the call's kept objects of a `KEPT` object.
    pub fn kept(self) -> Option<usize> {
        if self.tag() != tag::KEPT {
            return None;
        }
        usize::try_from(self.block(1)?).ok()
    }

    fn find(self, key: &'static str) -> Option<u32> {
        let (cells, shape) = self.fields()?;
        let tape = self.tape;
        // The same key in another object of this shape on this tape: the same position.
        let address = key.as_ptr() as usize;
        let slot = Found::slot(address);
        let found = FOUND.with(|f| f.get(slot).map(Cell::get))?;
        if found.tape == tape.number
            && found.shape == shape
            && found.key == address
            && found.len == key.len()
        {
            return tape.word(cells.checked_add(found.index)?);
        }
        let key = key.as_bytes();
        let n = usize::try_from(tape.word(shape)?).ok()?;
        let mut at = shape.checked_add(1)?;
        for i in 0..n {
            let name = tape.text(tape.word(at)?, tape.word(at.checked_add(1)?)?)?;
            // Keys of one length mostly differ in their first byte (`started_at`, `created_at`,
            // `updated_at`): that settles them without a call of wasm's bytewise `memcmp`.
            if name.first() == key.first() && name == key {
                let found = Found {
                    tape: tape.number,
                    shape,
                    key: address,
                    len: key.len(),
                    index: i,
                };
                FOUND.with(|f| f.get(slot).map(|s| s.set(found)));
                return tape.word(cells.checked_add(i)?);
            }
            at = at.checked_add(2)?;
        }
        if n > 0 {
            MISSED.with(|m| m.set(m.get().saturating_add(1)));
        }
        None
    }
}

impl<'a> Wire for Value<'a> {
    type Text = &'a str;
    #[inline(never)]
    fn kind(&self) -> Kind {
        match self.tag() {
            tag::UNDEFINED => Kind::Undefined,
            tag::NULL => Kind::Null,
            tag::FALSE | tag::TRUE => Kind::Bool,
            tag::INT | tag::NUMBER => Kind::Number,
            tag::STRING => Kind::String,
            tag::ARRAY => Kind::Array,
            tag::OBJECT | tag::KEPT => Kind::Object,
            _ => Kind::Other,
        }
    }

    fn get(&self, key: &'static str) -> Self {
        self.cell(self.find(key))
    }

    #[inline(never)]
    fn len(&self) -> usize {
        match self.tag() {
            tag::ARRAY => self
                .block(0)
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(0),
            _ => 0,
        }
    }

    #[inline(never)]
    fn at(&self, index: usize) -> Self {
        let cell = (index < self.len())
            .then(|| self.block(index.checked_add(1)?))
            .flatten();
        self.cell(cell)
    }

    #[inline(never)]
    fn string(&self) -> Option<&'a str> {
        if self.tag() != tag::STRING {
            return None;
        }
        let bytes = self.tape.text(self.block(0)?, self.block(1)?)?;
        std::str::from_utf8(bytes).ok()
    }

    #[inline(never)]
    fn number(&self) -> Option<f64> {
        match self.tag() {
            // A 28-bit payload converts exactly.
            #[allow(clippy::cast_precision_loss)]
            tag::INT => Some(self.payload() as f64),
            tag::NUMBER => self.bits().map(f64::from_bits),
            _ => None,
        }
    }

    fn boolean(&self) -> Option<bool> {
        match self.tag() {
            tag::FALSE => Some(false),
            tag::TRUE => Some(true),
            _ => None,
        }
    }

    #[inline(never)]
    fn unsigned(&self) -> Option<u64> {
        match self.tag() {
            tag::INT => u64::try_from(self.payload()).ok(),
            // A Number beyond 2^53 - 1 may be a rounded larger integer: only a BigInt is exact
            // there.
            tag::NUMBER => integral_u64(self.number()?).filter(|&n| n <= MAX_SAFE_INTEGER),
            tag::BIG => self.bits(),
            _ => None,
        }
    }

    fn is_undefined(&self) -> bool {
        self.tag() == tag::UNDEFINED
    }

    fn is_null(&self) -> bool {
        self.tag() == tag::NULL
    }
}

/// A tape written from JSON values, the way `js/read.js` writes JS values (every key of every
/// object, in its order; an absent argument is `undefined`; an object under `status_summary` or
/// `held` is kept, as the schemas of `js/read.js` keep the summaries): the native tests, the
/// wasm-bindgen tests and the fuzz targets decode through it and compare with decoding the JSON.
#[derive(Debug, Default)]
pub struct Writer {
    pub words: Vec<u32>,
    pub bytes: Vec<u8>,
    /// The kept objects, by their index in `KEPT` cells.
    pub kept: Vec<serde_json::Value>,
    /// The shapes written, by their keys: objects with the same keys share one, as the objects
    /// of one schema node share one on the tapes of `js/read.js`.
    pub shapes: std::collections::HashMap<Vec<String>, usize>,
}

impl Writer {
    /// A tape of `args` (the call's arguments).
    pub fn tape(args: &[&serde_json::Value]) -> Writer {
        let args: Vec<Option<&serde_json::Value>> = args.iter().map(|&a| Some(a)).collect();
        Writer::args(&args)
    }

    /// A tape of `args`, `None` for an argument passed as `undefined`.
    pub fn args(args: &[Option<&serde_json::Value>]) -> Writer {
        let mut w = Writer {
            words: vec![0, 0],
            ..Writer::default()
        };
        let root = w.block(args.len().saturating_add(1));
        w.set(root, len_word(args.len()));
        for (i, arg) in args.iter().enumerate() {
            let cell = arg.map_or(tag::UNDEFINED, |arg| w.value(arg, false));
            w.set(root.saturating_add(1).saturating_add(i), cell);
        }
        let used = [len_word(w.words.len()), len_word(w.bytes.len())];
        if let Some(header) = w.words.get_mut(..2) {
            header.copy_from_slice(&used);
        }
        w
    }

    /// The tape to read.
    pub fn read(&self) -> Option<Tape<'_>> {
        Tape::new(&self.words, &self.bytes)
    }

    fn block(&mut self, n: usize) -> usize {
        let at = self.words.len();
        self.words.resize(at.saturating_add(n), 0);
        at
    }

    fn set(&mut self, at: usize, word: u32) {
        if let Some(w) = self.words.get_mut(at) {
            *w = word;
        }
    }

    /// The cell of a block at word `at`; beyond the 28-bit payload (which `js/read.js` refuses
    /// with `invalid_value`) an `OTHER` cell, never one pointing at another block.
    fn cell(at: usize, tag: u32) -> u32 {
        match u32::try_from(at) {
            Ok(at) if at < PAYLOAD_LIMIT => (at << TAG_BITS) | tag,
            _ => tag::OTHER,
        }
    }

    fn text(&mut self, text: &str) -> (u32, u32) {
        let at = len_word(self.bytes.len());
        self.bytes.extend_from_slice(text.as_bytes());
        (at, len_word(text.len()))
    }

    fn value(&mut self, value: &serde_json::Value, keep: bool) -> u32 {
        use serde_json::Value as J;
        match value {
            J::Null => tag::NULL,
            J::Bool(false) => tag::FALSE,
            J::Bool(true) => tag::TRUE,
            // As `JSON.parse` gives it to JS: a Number.
            J::Number(n) => match n.as_u64() {
                Some(small) if small < 1 << 28 => {
                    (u32::try_from(small).unwrap_or(0) << TAG_BITS) | tag::INT
                }
                _ => n
                    .as_f64()
                    .map_or(tag::OTHER, |f| self.pair(tag::NUMBER, f.to_bits())),
            },
            J::String(s) => {
                let (offset, length) = self.text(s);
                let at = self.block(2);
                self.set(at, offset);
                self.set(at.saturating_add(1), length);
                Self::cell(at, tag::STRING)
            }
            J::Array(items) => {
                let at = self.block(items.len().saturating_add(1));
                self.set(at, len_word(items.len()));
                for (i, item) in items.iter().enumerate() {
                    let cell = self.value(item, false);
                    self.set(at.saturating_add(1).saturating_add(i), cell);
                }
                Self::cell(at, tag::ARRAY)
            }
            J::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                let shape = match self.shapes.get(&keys) {
                    Some(&shape) => shape,
                    None => {
                        let shape = self.block(map.len().saturating_mul(2).saturating_add(1));
                        self.set(shape, len_word(map.len()));
                        for (i, key) in map.keys().enumerate() {
                            let (offset, length) = self.text(key);
                            let at = shape.saturating_add(1).saturating_add(i.saturating_mul(2));
                            self.set(at, offset);
                            self.set(at.saturating_add(1), length);
                        }
                        self.shapes.insert(keys, shape);
                        shape
                    }
                };
                let first: usize = if keep { 2 } else { 1 };
                let at = self.block(map.len().saturating_add(first));
                self.set(at, len_word(shape));
                if keep {
                    self.set(at.saturating_add(1), len_word(self.kept.len()));
                    self.kept.push(value.clone());
                }
                for (i, (key, item)) in map.iter().enumerate() {
                    let keep = key == "status_summary" || key == "held";
                    let cell = self.value(item, keep);
                    self.set(at.saturating_add(first).saturating_add(i), cell);
                }
                Self::cell(at, if keep { tag::KEPT } else { tag::OBJECT })
            }
        }
    }

    fn pair(&mut self, tag: u32, bits: u64) -> u32 {
        let at = self.block(2);
        // The low and the high half.
        #[allow(clippy::cast_possible_truncation)]
        let (low, high) = (bits as u32, (bits >> 32) as u32);
        self.set(at, low);
        self.set(at.saturating_add(1), high);
        Self::cell(at, tag)
    }
}

/// A length or index as a word (tapes stay far below 2^32 words).
fn len_word(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn roundtrip(value: serde_json::Value) {
        let w = Writer::tape(&[&value]);
        let tape = w.read().expect("header");
        assert_eq!(to_json(&tape.arg(0)), value);
        assert!(tape.arg(1).is_undefined());
    }

    /// The value read back as JSON (every key, through the shapes).
    fn to_json(v: &Value<'_>) -> serde_json::Value {
        match v.kind() {
            Kind::Null => serde_json::Value::Null,
            Kind::Bool => json!(v.boolean().expect("bool")),
            Kind::Number => match v.unsigned() {
                Some(n) => json!(n),
                None => json!(v.number().expect("number")),
            },
            Kind::Other => json!(v.unsigned().expect("a big integer")),
            Kind::String => json!(v.string().expect("string")),
            Kind::Array => (0..v.len()).map(|i| to_json(&v.at(i))).collect(),
            Kind::Object => {
                let (_, shape) = v.fields().expect("object");
                let t = v.tape;
                let n = t.word(shape).expect("n") as usize;
                (0..n)
                    .map(|i| {
                        let at = shape + 1 + 2 * i;
                        let key = t
                            .text(t.word(at).unwrap(), t.word(at + 1).unwrap())
                            .unwrap();
                        let key = std::str::from_utf8(key).unwrap().to_owned();
                        let leaked: &'static str = Box::leak(key.clone().into_boxed_str());
                        (key, to_json(&v.get(leaked)))
                    })
                    .collect::<serde_json::Map<_, _>>()
                    .into()
            }
            Kind::Undefined => panic!("undefined inside JSON"),
        }
    }

    #[test]
    fn json_round_trips() {
        roundtrip(json!(null));
        roundtrip(json!([
            true,
            false,
            0,
            1,
            268_435_455,
            268_435_456,
            -1.0,
            1.5,
            "é✓",
            ""
        ]));
        roundtrip(json!({"a": {"b": [1, {"c": "d"}]}, "e": [], "f": {}}));
        roundtrip(json!(9_007_199_254_740_991u64));
    }

    #[test]
    fn numbers_read_as_the_js_side_reads_them() {
        let w = Writer::tape(&[&json!(9_007_199_254_740_991u64), &json!(-0.0), &json!(2.5)]);
        let t = w.read().expect("header");
        assert_eq!(t.arg(0).unsigned(), Some(9_007_199_254_740_991));
        assert_eq!(t.arg(0).kind(), Kind::Number);
        assert!(t.arg(1).number().expect("-0").is_sign_negative());
        assert_eq!(t.arg(1).unsigned(), Some(0));
        assert_eq!(t.arg(2).unsigned(), None);
        // Beyond 2^53 - 1 a Number may be rounded: not exact, so not an unsigned.
        let w = Writer::tape(&[&json!(9_007_199_254_740_993u64)]);
        assert_eq!(w.read().expect("header").arg(0).unsigned(), None);
        let absent = Writer::args(&[None, Some(&json!(null))]);
        let t = absent.read().expect("header");
        assert!(t.arg(0).is_undefined() && t.arg(1).is_null());
        // A BigInt: exact up to 2^64 - 1, and not a number.
        let words = [6, 0, 1, (4 << 4) | tag::BIG, u32::MAX, u32::MAX];
        let big = Tape::new(&words, &[]).expect("header").arg(0);
        assert_eq!(big.unsigned(), Some(u64::MAX));
        assert_eq!((big.kind(), big.number()), (Kind::Other, None));
    }

    #[test]
    fn a_remembered_key_position_holds_for_its_tape_and_shape_only() {
        // Objects of one shape share it (as on js/read.js's tapes); "b" is at 1 in the first
        // shape and at 0 in the second, read alternately.
        let rows = json!([{"a": 1, "b": 2}, {"b": 3, "c": 4}, {"a": 5, "b": 6}, {"b": 7, "c": 8}]);
        let w = Writer::tape(&[&rows]);
        let t = w.read().expect("header");
        let b: Vec<_> = (0..4).map(|i| t.arg(0).at(i).get("b").unsigned()).collect();
        assert_eq!(b, [Some(2), Some(3), Some(6), Some(7)]);
        assert_eq!(t.arg(0).at(1).get("a").unsigned(), None);
        // Another tape with its shape at the same word, "b" elsewhere in it: not the first
        // tape's position.
        let first = Writer::tape(&[&json!({"a": 1, "b": 2})]);
        let second = Writer::tape(&[&json!({"b": 3, "c": 4})]);
        assert_eq!(first.words.len(), second.words.len());
        let (one, two) = (first.read().expect("one"), second.read().expect("two"));
        assert_eq!(one.arg(0).get("b").unsigned(), Some(2));
        assert_eq!(two.arg(0).get("b").unsigned(), Some(3));
        assert_eq!(one.arg(0).get("b").unsigned(), Some(2));
    }

    #[test]
    fn summaries_are_kept_by_index() {
        let summary = json!({"revision": 3, "pending_action": null});
        let input =
            json!({"held": summary, "response": {"id": "t", "status_summary": {"revision": 4}}});
        let w = Writer::tape(&[&input]);
        let t = w.read().expect("header");
        assert_eq!(t.arg(0).get("held").kept(), Some(0));
        assert_eq!(
            t.arg(0).get("response").get("status_summary").kept(),
            Some(1)
        );
        assert_eq!(t.arg(0).get("response").kept(), None);
        assert_eq!(w.kept, vec![summary, json!({"revision": 4})]);
        assert_eq!(t.arg(0).get("held").get("revision").unsigned(), Some(3));
    }

    #[test]
    fn a_broken_tape_reads_as_undefined_never_out_of_bounds() {
        assert!(Tape::new(&[5, 0], &[]).is_none(), "header beyond the words");
        assert!(Tape::new(&[2], &[]).is_none(), "no header");
        // A root claiming 3 arguments with no cells, an object whose shape is out of range, a
        // string beyond the bytes.
        let words = [6, 0, 3, 0, (100 << 4) | tag::OBJECT, (7 << 4) | tag::STRING];
        let t = Tape::new(&words, &[]).expect("header");
        assert!(t.arg(0).is_undefined());
        assert_eq!(t.arg(0).len(), 0);
        let cut = Tape::new(&[4, 0, 2, 0], &[]).expect("header");
        assert!(cut.arg(0).is_undefined() && cut.arg(5).is_undefined());
        let words = [
            8,
            1,
            2,
            2,
            (4 << 4) | tag::OBJECT,
            (6 << 4) | tag::STRING,
            99,
            0,
        ];
        let t = Tape::new(&words, b"x").expect("header");
        assert!(t.arg(0).get("a").is_undefined());
        assert_eq!(t.arg(1).string(), None);
        assert_eq!(t.arg(0).kept(), None);
    }
}
