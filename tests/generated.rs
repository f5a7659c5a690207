//! The files generated from the one description of the wire shapes (`src/wire/shape.rs`), the
//! tape's constants (`src/wire/tape.rs`) and the fast-path codes (`src/wire/fast.rs`):
//! - `js/wire-shapes.js`: the schemas `js/read.js` walks, `TAG` and the tape's sizes, `FAST`;
//! - the wire interfaces of `src/wasm/types/wire.d.ts` and `src/wasm/types/store.d.ts`, between
//!   their `generated` markers (the rest of those files is hand-written).
//!
//! Each test renders its file and compares it with the committed one: a difference fails (so CI's
//! `cargo test` fails on a stale file). `UPDATE_GENERATED=1 cargo test --test generated` writes
//! the files instead.

// Native only: it reads (and writes) the source tree.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;
use std::path::Path;

use task_projection::wire::shape::{self, Field, Node, Shape, Ts};
use task_projection::wire::{fast, tape};

const REGENERATE: &str = "UPDATE_GENERATED=1 cargo test --test generated";

/// `text` is what `file` (from the repository root) must hold: written under
/// `UPDATE_GENERATED=1`, else compared.
fn ensure(file: &str, text: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed == text {
        return;
    }
    if std::env::var_os("UPDATE_GENERATED").is_some() {
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("writing {file}: {e}"));
        eprintln!("updated {file}");
        return;
    }
    let line = committed
        .lines()
        .zip(text.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| committed.lines().count().min(text.lines().count()));
    panic!(
        "{file} differs from what tests/generated.rs writes from src/wire/shape.rs (first \
         difference at line {}): do not edit the generated text by hand (change src/wire/shape.rs, \
         or a .d.ts file outside its `generated` markers), then regenerate with `{REGENERATE}` and \
         commit the result",
        line + 1
    );
}

// ---- js/wire-shapes.js --------------------------------------------------------------------------

/// The schema nodes' constructors (the same in every generated file).
const NODES_JS: &str = "\
// Schema nodes. LEAF: any primitive is copied; an object, array or function becomes a stand-in.
export const LEAF = 0;
export const OBJECT = 1;
export const ARRAY = 2;
/** An object the engine keeps and hands back (a status summary): read like OBJECT, and the
 * caller's object itself is passed along (`send()` returns them). */
export const KEPT = 3;

// Every node has the same fields from the start (one hidden class: the walk stays monomorphic);
// `nodes` are the nodes of `keys`, and `shape*` remember where the node's shape was written on
// which tape (js/read.js sets `write` of the nodes it writes out).
const node = (t, keys, of) => ({
  t, keys, of, nodes: keys.map((k) => of[k]), shapeTape: undefined, shapeGen: 0, shapeAt: 0, write: undefined,
});
const obj = (keys) => node(OBJECT, Object.keys(keys), keys);
const arr = (of) => ({ t: ARRAY, keys: [], of, nodes: [], shapeTape: undefined, shapeGen: 0, shapeAt: 0, write: undefined });
const kept = (n) => node(KEPT, n.keys, n.of);

/** The schema of a stand-in object: no keys. */
export const NO_KEYS = obj({});
";

/// `n` as JS: `1 << k` for a power of two above 255, else decimal.
fn js_number(n: u64) -> String {
    if n > 255 && n.is_power_of_two() {
        format!("1 << {}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

/// A doc comment at `indent`: `/** line */`, or a block for several lines.
fn doc(out: &mut String, indent: &str, text: &str) {
    if text.is_empty() {
        return;
    }
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    if lines.len() == 1 {
        let _ = writeln!(out, "{indent}/** {} */", lines[0]);
        return;
    }
    let _ = writeln!(out, "{indent}/**");
    for line in lines {
        let _ = writeln!(out, "{indent} * {line}");
    }
    let _ = writeln!(out, "{indent} */");
}

struct Js {
    out: String,
    written: HashSet<&'static str>,
}

impl Js {
    /// Writes the named shapes `node` refers to that are not written yet.
    fn dependencies(&mut self, node: Node) {
        match node {
            Node::Object(s) | Node::Kept(s) => {
                if s.name.is_empty() {
                    self.fields_dependencies(s);
                } else {
                    self.shape(s);
                }
            }
            Node::Array(of) => self.dependencies(*of),
            Node::Leaf | Node::Ignored => {}
        }
    }

    fn fields_dependencies(&mut self, s: &'static Shape) {
        for f in s.read() {
            self.dependencies(f.node);
        }
    }

    /// `export const NAME = obj({ ... });` for a named shape, once.
    fn shape(&mut self, s: &'static Shape) {
        if !self.written.insert(s.name) {
            return;
        }
        self.fields_dependencies(s);
        doc(&mut self.out, "", s.doc);
        let value = object(s, 0);
        let _ = writeln!(self.out, "export const {} = {value};", s.name);
    }

    fn schema(&mut self, schema: &shape::Schema) {
        match schema.node {
            Node::Object(s) if s.name == schema.name => self.shape(s),
            node => {
                if !self.written.insert(schema.name) {
                    return;
                }
                self.dependencies(node);
                let value = expr(node, 0);
                let _ = writeln!(self.out, "export const {} = {value};", schema.name);
            }
        }
    }
}

/// A node as a JS expression, a named shape by its name, at `indent` spaces.
fn expr(node: Node, indent: usize) -> String {
    match node {
        Node::Leaf | Node::Ignored => "LEAF".to_owned(),
        Node::Object(s) if !s.name.is_empty() => s.name.to_owned(),
        Node::Object(s) => object(s, indent),
        Node::Kept(s) if !s.name.is_empty() => format!("kept({})", s.name),
        Node::Kept(s) => format!("kept({})", object(s, indent)),
        Node::Array(of) => format!("arr({})", expr(*of, indent)),
    }
}

/// `obj({ key: node, ... })` of a shape's read fields: on one line when it fits in 100
/// characters, else a field a line.
fn object(s: &Shape, indent: usize) -> String {
    let inner = " ".repeat(indent + 2);
    let fields: Vec<String> = s
        .read()
        .map(|f| format!("{}: {}", f.key, expr(f.node, indent + 2)))
        .collect();
    let line = format!("obj({{ {} }})", fields.join(", "));
    if fields.is_empty() {
        return "obj({})".to_owned();
    }
    if indent + line.len() + 20 <= 100 && !line.contains('\n') {
        return line;
    }
    let mut out = "obj({\n".to_owned();
    for f in &fields {
        let _ = writeln!(out, "{inner}{f},");
    }
    out.push_str(&" ".repeat(indent));
    out.push_str("})");
    out
}

fn wire_shapes_js() -> String {
    let mut js = Js {
        out: String::new(),
        written: HashSet::new(),
    };
    let out = &mut js.out;
    out.push_str(
        "// GENERATED by tests/generated.rs from src/wire/shape.rs — do not edit; regenerate: \
         UPDATE_GENERATED=1 cargo test --test generated\n\
         //\n\
         // What crosses the boundary, described once in Rust: the tape's constants (src/wire/tape.rs),\n\
         // the store's fast-path codes (src/wire/fast.rs) and the schemas js/read.js walks onto the\n\
         // tape (src/wire/shape.rs: what the wasm decoders read of each argument, in order). js/read.js\n\
         // re-exports all of it.\n\n",
    );
    out.push_str("// ---- the tape (src/wire/tape.rs: the format) ----\n\n");
    out.push_str("/** Cell tags (`tape::tag`). */\nexport const TAG = Object.freeze({\n ");
    let tags: Vec<String> = tape::tag::ALL
        .iter()
        .map(|(name, value)| format!("{name}: {value}"))
        .collect();
    let _ = writeln!(out, " {},\n}});", tags.join(", "));
    let _ = writeln!(
        out,
        "/** A cell's payload (an INT's value, a block's word index) is below this. */\n\
         export const PAYLOAD_LIMIT = {};",
        js_number(u64::from(tape::PAYLOAD_LIMIT))
    );
    let _ = writeln!(
        out,
        "/** Tape buffers beyond these sizes are released by wasm after the call (src/wasm/convert.rs),\n \
         * so room is asked for again. */\n\
         export const LARGE_WORDS = {};\nexport const LARGE_BYTES = {};",
        js_number(tape::LARGE_WORDS as u64),
        js_number(tape::LARGE_BYTES as u64)
    );
    let _ = writeln!(
        out,
        "/** The root block (the call's arguments) starts after the two header words. */\n\
         export const ROOT = {};\n\
         /** Room kept in the root block for a call's arguments. */\n\
         export const MAX_ARGS = {};",
        tape::ROOT,
        tape::MAX_ARGS
    );
    let _ = writeln!(
        out,
        "/** The direct tape's first word when a call's arguments are on the spill tape (`tape::SPILL`). */\n\
         export const SPILL_MARK = 0x{:x};\n",
        tape::SPILL
    );
    out.push_str(
        "// ---- the store's fast path (src/wire/fast.rs) ----\n\n\
         /** The codes of `__applyMessage` and `__sessionQuery`: a message event's or page row's kind, its\n \
         * `pending_action`, a session query. */\n\
         export const FAST = Object.freeze({\n",
    );
    let mut groups: Vec<&str> = Vec::new();
    for (group, _, _) in fast::ALL {
        if !groups.contains(group) {
            groups.push(group);
        }
    }
    for group in groups {
        let codes: Vec<String> = fast::ALL
            .iter()
            .filter(|(g, _, _)| *g == group)
            .map(|(_, name, value)| format!("{name}: {value}"))
            .collect();
        let _ = writeln!(out, "  {group}: Object.freeze({{ {} }}),", codes.join(", "));
    }
    out.push_str("});\n\n");
    out.push_str(NODES_JS);
    out.push_str(
        "\n// ---- the schemas: what the wasm decoders read (src/wire/decode.rs, events.rs, api.rs,\n\
         // snapshot.rs, store_api.rs) ----\n\n",
    );
    for schema in shape::SCHEMAS {
        js.schema(schema);
    }
    js.out
}

#[test]
fn js_wire_shapes_are_generated() {
    ensure("js/wire-shapes.js", &wire_shapes_js());
}

// ---- the TypeScript declarations -----------------------------------------------------------------

const BEGIN: &str =
    "// ---- generated by tests/generated.rs from src/wire/shape.rs (do not edit; regenerate: \
                     UPDATE_GENERATED=1 cargo test --test generated) ----\n";
const END: &str = "// ---- end of generated ----\n";

/// A field's type: `$` as its shape's interface name, or its fields inline.
fn ts_type(f: &Field, indent: &str) -> String {
    let text = f.ts.replace('\n', &format!("\n{indent}"));
    if !text.contains('$') {
        return text;
    }
    let shape = match f.node {
        Node::Object(s) | Node::Kept(s) => s,
        _ => panic!("{}: `$` in the type of a field that is no object", f.key),
    };
    let inline = match shape.ts {
        Ts::Wire(name) | Ts::Store(name) => name.to_owned(),
        Ts::None => {
            let mut out = "{\n".to_owned();
            ts_fields(&mut out, shape.fields(), &format!("{indent}  "));
            out.push_str(indent);
            out.push('}');
            out
        }
    };
    text.replace('$', &inline)
}

fn ts_fields<'a>(out: &mut String, fields: impl Iterator<Item = &'a Field>, indent: &str) {
    for f in fields {
        doc(out, indent, f.doc);
        let _ = writeln!(
            out,
            "{indent}{}{}: {};",
            f.key,
            if f.optional { "?" } else { "" },
            ts_type(f, indent)
        );
    }
}

fn ts_name(s: &Shape) -> &'static str {
    match s.ts {
        Ts::Wire(name) | Ts::Store(name) => name,
        Ts::None => panic!("{} has no TypeScript name", s.name),
    }
}

/// The interfaces of the shapes declared in `file` (their `Ts` variant).
fn interfaces(declared_in: fn(Ts) -> bool) -> String {
    let mut out = String::new();
    for s in shape::DECLARED.iter().filter(|s| declared_in(s.ts)) {
        if !out.is_empty() {
            out.push('\n');
        }
        doc(&mut out, "", s.doc);
        match s.base {
            Some(base) if base.ts != Ts::None => {
                let _ = writeln!(
                    out,
                    "export interface {} extends {} {{",
                    ts_name(s),
                    ts_name(base)
                );
                ts_fields(&mut out, s.own.iter(), "  ");
            }
            _ => {
                let _ = writeln!(out, "export interface {} {{", ts_name(s));
                ts_fields(&mut out, s.fields(), "  ");
            }
        }
        out.push_str("}\n");
    }
    out
}

/// `file` with the text between its markers replaced by `generated`.
fn with_region(file: &str, generated: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let start = text
        .find(BEGIN)
        .unwrap_or_else(|| panic!("{file} has no line {BEGIN:?}"))
        + BEGIN.len();
    let end = start
        + text[start..]
            .find(END)
            .unwrap_or_else(|| panic!("{file} has no line {END:?} after its generated start"));
    [&text[..start], generated, &text[end..]].concat()
}

#[test]
fn typescript_wire_interfaces_are_generated() {
    let file = "src/wasm/types/wire.d.ts";
    ensure(
        file,
        &with_region(file, &interfaces(|ts| matches!(ts, Ts::Wire(_)))),
    );
    let file = "src/wasm/types/store.d.ts";
    ensure(
        file,
        &with_region(file, &interfaces(|ts| matches!(ts, Ts::Store(_)))),
    );
}

// ---- the description and the decoders ----------------------------------------------------------

/// Every key a schema reads, at any depth.
fn schema_keys() -> BTreeSet<&'static str> {
    fn walk(node: Node, out: &mut BTreeSet<&'static str>) {
        match node {
            Node::Object(s) | Node::Kept(s) => {
                for f in s.read() {
                    out.insert(f.key);
                    walk(f.node, out);
                }
            }
            Node::Array(of) => walk(*of, out),
            Node::Leaf | Node::Ignored => {}
        }
    }
    let mut out = BTreeSet::new();
    for schema in shape::SCHEMAS {
        walk(schema.node, &mut out);
    }
    // What a trace records of a `server.hello` frame (the native dispatch reads it back).
    walk(Node::Object(&shape::HELLO_FRAME), &mut out);
    out
}

/// The keys the decoders read by name (`get("key")`, and their helpers `key`, `field`, `flag`),
/// outside their tests.
fn decoder_keys() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for file in [
        "src/wire/decode.rs",
        "src/wire/events.rs",
        "src/wire/api.rs",
        "src/wire/snapshot.rs",
        "src/wire/store_api.rs",
        "src/trace.rs",
    ] {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for call in ["get(\"", "key(\"", "field(\"", "flag(\""] {
            for (at, _) in code.match_indices(call) {
                let rest = &code[at + call.len()..];
                if let Some(end) = rest.find('"') {
                    out.insert(rest[..end].to_owned());
                }
            }
        }
    }
    out
}

#[test]
fn every_key_a_schema_lists_is_one_a_decoder_reads_and_the_other_way_round() {
    let schemas: BTreeSet<String> = schema_keys().into_iter().map(str::to_owned).collect();
    let decoders = decoder_keys();
    let unread: Vec<_> = schemas.difference(&decoders).collect();
    assert!(
        unread.is_empty(),
        "keys src/wire/shape.rs lists that no decoder reads: {unread:?}"
    );
    let missing: Vec<_> = decoders.difference(&schemas).collect();
    assert!(
        missing.is_empty(),
        "keys a decoder reads that no schema of src/wire/shape.rs lists (the tape would not carry \
         them): {missing:?}"
    );
}
