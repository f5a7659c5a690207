//! The files generated from the one description of the wire shapes (`src/wire/shape.rs`), the
//! tape's constants (`src/wire/tape.rs`) and the fast-path codes (`src/wire/fast.rs`):
//! - the region of `js/read.js` between its `generated` markers: the schemas it walks, `TAG` and
//!   the tape's sizes, `FAST`, and the code of the shapes it writes out and copies;
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
use task_projection::wire::{fast, held, tape};

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

// ---- js/read.js ----------------------------------------------------------------------------------

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
// `nodes` are the nodes of `keys`, `shape*` remember where the node's shape was written on which
// tape, and `write` / `copy` are the generated code of the shapes written out (below).
const node = (t, keys, of) => ({
  t, keys, of, nodes: keys.map((k) => of[k]), shapeTape: undefined, shapeGen: 0, shapeAt: 0, write: undefined, copy: undefined,
});
const obj = (keys) => node(OBJECT, Object.keys(keys), keys);
const arr = (of) => ({
  t: ARRAY, keys: [], of, nodes: [], shapeTape: undefined, shapeGen: 0, shapeAt: 0, write: undefined, copy: undefined,
});
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

/// `text` as a JS string literal (the texts here are ASCII without double quotes or backslashes).
fn js_string(text: &str) -> String {
    assert!(
        text.chars().all(|c| c.is_ascii() && c != '"' && c != '\\'),
        "{text}"
    );
    format!("\"{text}\"")
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

/// The generated region of `js/read.js`.
fn read_js_region() -> String {
    let mut js = Js {
        out: String::new(),
        written: HashSet::new(),
    };
    let out = &mut js.out;
    out.push_str(
        "//\n\
         // What crosses the boundary, described once in Rust: the tape's constants (src/wire/tape.rs),\n\
         // the store's fast-path codes (src/wire/fast.rs), the schemas this file walks onto the tape\n\
         // (src/wire/shape.rs: what the wasm decoders read of each argument, in order), and the\n\
         // shapes written out (`WRITTEN_OUT`, `COPIED`).\n\n",
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
    let _ = writeln!(
        out,
        "// ---- what the store holds of a status summary (src/wire/held.rs) ----\n\n\
         /** A held summary nests at most this many levels of objects and arrays (itself the first),\n \
         * holds at most this many values, and this many UTF-16 code units of keys and strings. */\n\
         export const HELD_DEPTH = {};\nexport const HELD_VALUES = {};\nexport const HELD_TEXT = {};\n\
         /** How a summary beyond a bound is refused (`invalid_value`), as the native check words it. */\n\
         export const HELD_PROBLEM = Object.freeze({{ depth: {}, values: {}, text: {} }});\n",
        held::DEPTH,
        held::VALUES,
        held::TEXT,
        js_string(held::TOO_DEEP),
        js_string(held::TOO_MANY),
        js_string(held::TOO_LONG),
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
    written_out(&mut js.out);
    js.out
}

// ---- the shapes written out --------------------------------------------------------------------

/// `some_key` → `SomeKey`; `SOME_NAME` → `SomeName`.
fn camel(text: &str) -> String {
    text.split(['_', '.'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let w = w.to_ascii_lowercase();
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The variable holding the value at `path` (`metadata.pending_id` → `metadataPendingId`).
fn var(path: &str) -> String {
    let name = camel(path);
    let mut c = name.chars();
    let name = c
        .next()
        .map(|f| f.to_ascii_lowercase().to_string() + c.as_str())
        .unwrap_or_default();
    // The names the generated functions use for themselves (and JS's reserved words).
    assert!(
        ![
            "t", "v", "at", "cell", "shape", "key", "error", "copy", "path", "text", "leaf",
            "field", "words", "fresh", "new", "delete", "default", "function", "class", "var"
        ]
        .contains(&name.as_str()),
        "{path}: its variable {name} is taken; rename in tests/generated.rs"
    );
    name
}

/// The object a field of a written-out shape holds, if any (its fields must be leaves).
fn nested(s: &Shape, f: &Field) -> Option<&'static Shape> {
    match f.node {
        Node::Leaf => None,
        Node::Object(inner) => {
            assert!(
                !inner.name.is_empty() && inner.read().all(|g| matches!(g.node, Node::Leaf)),
                "{}.{}: a shape written out holds leaves or named objects of leaves",
                s.name,
                f.key
            );
            Some(inner)
        }
        _ => panic!(
            "{}.{}: a shape written out holds leaves or named objects of leaves",
            s.name, f.key
        ),
    }
}

/// The reads of `s`'s fields (and of their objects' fields) into variables, in the schema's order,
/// the key being read kept in `key` for a caller's exception.
fn reads(out: &mut String, s: &Shape) {
    let mut vars = Vec::new();
    let mut flags = Vec::new();
    for f in s.read() {
        vars.push(var(f.key));
        if let Some(inner) = nested(s, f) {
            flags.push(format!("{}Is = false", var(f.key)));
            for g in inner.read() {
                vars.push(var(&format!("{}.{}", f.key, g.key)));
            }
        }
    }
    let first = s.read().next().map_or("", |f| f.key);
    let _ = writeln!(out, "  let key = '{first}';");
    let _ = writeln!(out, "  let {};", vars.join(", "));
    if !flags.is_empty() {
        let _ = writeln!(out, "  let {};", flags.join(", "));
    }
    out.push_str("  try {\n");
    for (i, f) in s.read().enumerate() {
        let name = var(f.key);
        if i == 0 {
            let _ = writeln!(out, "    {name} = v.{};", f.key);
        } else {
            let _ = writeln!(out, "    key = '{0}'; {name} = v.{0};", f.key);
        }
        if let Some(inner) = nested(s, f) {
            let _ = writeln!(out, "    {name}Is = isPlainObject({name});");
            let _ = writeln!(out, "    if ({name}Is) {{");
            for g in inner.read() {
                let path = format!("{}.{}", f.key, g.key);
                let _ = writeln!(
                    out,
                    "      key = '{path}'; {} = {name}.{};",
                    var(&path),
                    g.key
                );
            }
            out.push_str("    }\n");
        }
    }
    out.push_str("  } catch (error) {\n    throw unreadableAt(error, key);\n  }\n");
}

/// `write<Shape>(t, v)` for each shape of `WRITTEN_OUT` (and `write<Object>` for the objects
/// they hold), `copy<Shape>(v)` for each of `COPIED`, and the nodes' `write` / `copy` set.
fn written_out(out: &mut String) {
    out.push_str(
        "\n// ---- the shapes written out (src/wire/shape.rs: `WRITTEN_OUT`, `COPIED`) ----\n\
         //\n\
         // `object(t, v, node)` written out for the large inputs (message, turn and session lists: a\n\
         // stateless call reads the whole transcript) and store.js's copies of every message: the same\n\
         // reads in the same order and the same tape as the walk by the schema\n\
         // (tests/js/boundary.test.mjs compares them), with named property reads instead of the walk's\n\
         // keyed ones. All fields are read first (the key being read kept for error paths), then written.\n",
    );
    let mut objects: Vec<&'static Shape> = Vec::new();
    for s in shape::WRITTEN_OUT {
        for f in s.read() {
            if let Some(inner) = nested(s, f) {
                if !objects.iter().any(|o| o.name == inner.name) {
                    objects.push(inner);
                }
            }
        }
    }
    for o in &objects {
        let params: Vec<String> = o.read().map(|g| var(g.key)).collect();
        let _ = writeln!(
            out,
            "\n/** A {} of leaf fields at the field `key` (already read). */",
            o.name
        );
        let _ = writeln!(
            out,
            "function write{}(t, key, {}) {{",
            camel(o.name),
            params.join(", ")
        );
        out.push_str("  path.push(key);\n");
        let _ = writeln!(out, "  const shape = shapeOf(t, {});", o.name);
        let _ = writeln!(out, "  const at = words(t, {});", o.read().count() + 1);
        out.push_str("  t.w[at] = shape;\n");
        for (i, g) in o.read().enumerate() {
            let _ = writeln!(
                out,
                "  {}cell = field(t, {}, '{}');",
                if i == 0 { "let " } else { "" },
                var(g.key),
                g.key
            );
            let _ = writeln!(out, "  t.w[at + {}] = cell;", i + 1);
        }
        out.push_str("  path.pop();\n  return cellOf(t, at, TAG.object);\n}\n");
    }
    for s in shape::WRITTEN_OUT {
        let _ = writeln!(out, "\n/** A {} by its schema, written out. */", s.name);
        let _ = writeln!(out, "function write{}(t, v) {{", camel(s.name));
        reads(out, s);
        out.push_str("  fresh(t);\n");
        let _ = writeln!(out, "  const shape = shapeOf(t, {});", s.name);
        let _ = writeln!(out, "  const at = words(t, {});", s.read().count() + 1);
        out.push_str(
            "  t.w[at] = shape;\n  \
             // Each cell is written after it is made: making it may grow the words (a new `t.w`).\n",
        );
        for (i, f) in s.read().enumerate() {
            let name = var(f.key);
            let value = match nested(s, f) {
                None => format!("field(t, {name}, '{}')", f.key),
                Some(inner) => {
                    let args: Vec<String> = inner
                        .read()
                        .map(|g| var(&format!("{}.{}", f.key, g.key)))
                        .collect();
                    format!(
                        "{name}Is ? write{}(t, '{}', {}) : field(t, {name}, '{}')",
                        camel(inner.name),
                        f.key,
                        args.join(", "),
                        f.key
                    )
                }
            };
            let _ = writeln!(out, "  {}cell = {value};", if i == 0 { "let " } else { "" });
            let _ = writeln!(out, "  t.w[at + {}] = cell;", i + 1);
        }
        out.push_str("  return cellOf(t, at, TAG.object);\n}\n");
    }
    for s in shape::COPIED {
        let _ = writeln!(
            out,
            "\n/** A {} read into a plain copy (each leaf as `leaf` makes it). */",
            s.name
        );
        let _ = writeln!(out, "function copy{}(v) {{", camel(s.name));
        out.push_str("  if (!isPlainObject(v)) return leaf(v);\n");
        reads(out, s);
        out.push_str("  return {\n");
        for f in s.read() {
            let name = var(f.key);
            match nested(s, f) {
                None => {
                    let _ = writeln!(out, "    {0}: text({name}, '{0}'),", f.key);
                }
                Some(inner) => {
                    let fields: Vec<String> = inner
                        .read()
                        .map(|g| {
                            let path = format!("{}.{}", f.key, g.key);
                            format!("{}: text({}, '{path}')", g.key, var(&path))
                        })
                        .collect();
                    let _ = writeln!(
                        out,
                        "    {}: {name}Is\n      ? {{ {} }}\n      : leaf({name}),",
                        f.key,
                        fields.join(", ")
                    );
                }
            }
        }
        out.push_str("  };\n}\n");
    }
    out.push('\n');
    for s in shape::WRITTEN_OUT {
        let _ = writeln!(out, "{}.write = write{};", s.name, camel(s.name));
    }
    for s in shape::COPIED {
        let _ = writeln!(out, "{}.copy = copy{};", s.name, camel(s.name));
    }
}

#[test]
fn js_read_region_is_generated() {
    let file = "js/read.js";
    ensure(file, &with_region(file, &read_js_region()));
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
        "src/wire/action.rs",
        "src/wire/decode.rs",
        "src/wire/events.rs",
        "src/wire/api.rs",
        "src/wire/snapshot.rs",
        "src/wire/store_api.rs",
        "src/wire/inbox.rs",
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
