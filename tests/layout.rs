//! The layout of every crate of the workspace, read from the sources:
//!
//! - **No import cycle between sibling modules.** Every `super::…`, `crate::…` (and, in the
//!   server crate, `task_projection::…`) path in the code (comments and string literals left
//!   out; `use` trees with their groups expanded) is resolved to the module it reaches. A
//!   reference from module A to module B is an edge between the two children of their nearest
//!   common ancestor that contain them (a module using its parent's or its children's items is no
//!   edge): under each parent the modules form an acyclic graph, so each can be read, tested and
//!   moved without the ones that depend on it.
//! - **No catch-all file**: no source file holds more than [`MAX_LOGIC_LINES`] lines of logic
//!   (lines that are neither blank nor comments, before the file's `#[cfg(test)]` module).
//! - **The reference server's HTTP adapter follows its documented order** (`server/src/http`:
//!   each module imports only modules listed before it in the "Dependency order" of its
//!   `mod.rs`, exactly the ones listed; no module reaches `http` itself or a directory module
//!   such as `sim`, which only declares its modules).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The bound on a source file's lines of logic (tests, comments and blank lines not counted).
const MAX_LOGIC_LINES: usize = 600;

/// A module, as its path below its crate root (`[]` is the crate root).
type Module = Vec<String>;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace's crates: (name, source root). A binary (`src/bin/`) is a crate of its own: only
/// its size is checked.
fn crates() -> Vec<(&'static str, PathBuf)> {
    let mut all = vec![("task_projection", workspace().join("src"))];
    let server = workspace().join("server/src");
    if server.is_dir() {
        all.push(("task_projection_server", server));
    }
    all
}

fn name(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_owned()
    } else {
        module.join("::")
    }
}

/// Every `.rs` file below `dir` with its module path (`lib.rs` and `mod.rs` are their
/// directory's module; `bin/` is left out).
fn modules(dir: &Path, prefix: &[String], out: &mut BTreeMap<Module, PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .expect("read a source directory")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("file name")
            .to_owned();
        if path.is_dir() {
            if prefix.is_empty() && stem == "bin" {
                continue;
            }
            let mut child = prefix.to_vec();
            child.push(stem);
            modules(&path, &child, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let mut module = prefix.to_vec();
            if stem != "mod" && !(prefix.is_empty() && stem == "lib") {
                module.push(stem);
            }
            out.insert(module, path);
        }
    }
}

/// Every `.rs` file below `dir`, binaries included.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read a source directory") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code without comments, and with string and char literals blanked (so neither a doc line
/// nor a URL in a string reads as a path).
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0usize;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_before(&chars, i) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    Some(_) => j += 1,
                }
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && next == Some('\\') {
            // '\n', '\'', '\u{…}'
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0
        && chars
            .get(i - 1)
            .is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// A tiny reader of a `use` tree (or an inline path) after its prefix.
struct Tree<'a> {
    text: &'a [char],
    at: usize,
}

impl Tree<'_> {
    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(|c| c.is_whitespace()) {
            self.at += 1;
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        let token: Vec<char> = token.chars().collect();
        if self.text.get(self.at..self.at + token.len()) == Some(&token[..]) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn ident(&mut self) -> Option<String> {
        self.skip_space();
        let start = self.at;
        while self
            .text
            .get(self.at)
            .is_some_and(|c| c.is_alphanumeric() || *c == '_')
        {
            self.at += 1;
        }
        (self.at > start).then(|| self.text[start..self.at].iter().collect())
    }

    /// The paths of one tree: `a::b`, `a::{b, c::d as e}`, `*`.
    fn paths(&mut self) -> Vec<Vec<String>> {
        if self.eat("{") {
            let mut all = Vec::new();
            loop {
                if self.eat("}") {
                    break;
                }
                all.extend(self.paths());
                if !self.eat(",") {
                    assert!(self.eat("}"), "unclosed use group");
                    break;
                }
            }
            return all;
        }
        if self.eat("*") {
            return vec![Vec::new()];
        }
        let Some(segment) = self.ident() else {
            return vec![Vec::new()];
        };
        let before = self.at;
        if self.eat("::") {
            if self.eat("<") {
                // A turbofish: the path ends here.
                self.at = before;
                return vec![vec![segment]];
            }
            return self
                .paths()
                .into_iter()
                .map(|mut rest| {
                    rest.insert(0, segment.clone());
                    rest
                })
                .collect();
        }
        let save = self.at;
        if self.eat("as") && self.text.get(self.at).is_some_and(|c| c.is_whitespace()) {
            let _alias = self.ident();
        } else {
            self.at = save;
        }
        vec![vec![segment]]
    }
}

/// Every path of `code` that starts with `super::` or `crate::`, as (base module, segments after
/// the base). (Paths into another crate of the workspace cannot close a cycle: the crates' own
/// dependency graph is acyclic.)
fn paths_in(code: &str, module: &[String]) -> Vec<(Module, Vec<String>)> {
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    let starts = |at: usize, text: &str| {
        let text: Vec<char> = text.chars().collect();
        chars.get(at..at + text.len()) == Some(&text[..])
    };
    while i < chars.len() {
        let boundary = i == 0
            || chars
                .get(i - 1)
                .is_some_and(|c| !(c.is_alphanumeric() || *c == '_' || *c == ':'));
        let (base, skip) = if boundary && starts(i, "crate::") {
            (Some(Vec::new()), "crate::".len())
        } else if boundary && starts(i, "super::") {
            // `super` of a module is its parent (a `mod.rs` file is its directory's module).
            let mut base = module.to_vec();
            let mut at = i;
            while starts(at, "super::") {
                assert!(
                    base.pop().is_some(),
                    "{}: `super` above the crate",
                    name(module)
                );
                at += "super::".len();
            }
            (Some(base), at - i)
        } else {
            (None, 0)
        };
        match base {
            Some(base) => {
                let mut tree = Tree {
                    text: &chars,
                    at: i + skip,
                };
                for path in tree.paths() {
                    found.push((base.clone(), path));
                }
                i = tree.at.max(i + 1);
            }
            None => i += 1,
        }
    }
    found
}

/// The code of a file before its test module (`#[cfg(test)]` at the start of a line).
fn before_tests(source: &str) -> &str {
    source
        .find("\n#[cfg(test)]")
        .map_or(source, |at| &source[..at])
}

/// The module `path` reaches from `base`: the longest prefix that is a module.
fn resolve(all: &BTreeSet<Module>, base: Module, path: &[String]) -> Module {
    let mut target = base;
    for segment in path {
        if segment == "self" {
            continue;
        }
        let mut child = target.clone();
        child.push(segment.clone());
        if all.contains(&child) {
            target = child;
        } else {
            break;
        }
    }
    target
}

/// The sibling edge a reference from `from` to `to` makes, if any: the children of their
/// nearest common ancestor that contain each.
fn sibling_edge(from: &[String], to: &[String]) -> Option<(Module, String, String)> {
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    let (a, b) = (from.get(common)?, to.get(common)?);
    Some((from[..common].to_vec(), a.clone(), b.clone()))
}

/// Every reference between sibling modules of one crate, as parent → (from → to → an example).
type Edges = BTreeMap<Module, BTreeMap<String, BTreeMap<String, String>>>;

fn sibling_edges(root: &Path) -> Edges {
    let mut files = BTreeMap::new();
    modules(root, &[], &mut files);
    let all: BTreeSet<Module> = files.keys().cloned().collect();
    let mut edges = Edges::new();
    for (module, file) in &files {
        let source = fs::read_to_string(file).expect("read a source file");
        let code = code_only(before_tests(&source));
        for (base, path) in paths_in(&code, module) {
            let target = resolve(&all, base, &path);
            if let Some((parent, a, b)) = sibling_edge(module, &target) {
                let example = format!("{} uses {}", name(module), path.join("::"));
                edges
                    .entry(parent)
                    .or_default()
                    .entry(a)
                    .or_default()
                    .entry(b)
                    .or_insert(example);
            }
        }
    }
    edges
}

/// A cycle of `graph`, if it has one (a depth-first search).
fn find_cycle(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeMap<String, String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_owned(), 1);
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flat_map(BTreeMap::keys) {
            match state.get(next.as_str()) {
                Some(1) => {
                    let from = stack.iter().position(|n| n == next).unwrap_or(0);
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(cycle) = visit(next, graph, state, stack) {
                        return Some(cycle);
                    }
                }
            }
        }
        stack.pop();
        state.insert(node.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if !state.contains_key(node.as_str()) {
            let mut stack = Vec::new();
            if let Some(cycle) = visit(node, graph, &mut state, &mut stack) {
                return Some(cycle);
            }
        }
    }
    None
}

/// Every cycle between sibling modules of `root`, described with an example reference per step.
fn cycles(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for (parent, graph) in sibling_edges(root) {
        if let Some(cycle) = find_cycle(&graph) {
            let steps: Vec<String> = cycle
                .windows(2)
                .map(|w| graph[&w[0]][&w[1]].clone())
                .collect();
            found.push(format!(
                "a cycle under {}: {} ({})",
                name(&parent),
                cycle.join(" → "),
                steps.join("; ")
            ));
        }
    }
    found
}

/// Lines that are neither blank nor only a comment, before the test module.
fn logic_lines(source: &str) -> usize {
    before_tests(source)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .count()
}

#[test]
fn use_trees_are_expanded_and_literals_ignored() {
    let code = "use super::{a::{b, c as d}, e};\nlet x = crate::f::g(1);\n\
                let y = super::super::h::<u8>();";
    let module = vec!["sim".to_owned(), "agent".to_owned()];
    let shown: Vec<String> = paths_in(code, &module)
        .iter()
        .map(|(base, path)| format!("{}|{}", name(base), path.join("::")))
        .collect();
    assert_eq!(
        shown,
        ["sim|a::b", "sim|a::c", "sim|e", "crate|f::g", "crate|h"]
    );
    let code = code_only("let a = \"super::x\"; // super::y\n/* super::z */ let c = '\"';");
    assert!(!code.contains("super"), "{code}");
}

#[test]
fn the_checks_find_a_cycle_and_count_logic_lines() {
    // A cycle two levels down is reported between the siblings that contain its ends.
    let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        graph
            .entry(from.to_owned())
            .or_default()
            .insert(to.to_owned(), String::new());
    }
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    if let Some(c) = graph.get_mut("c") {
        c.remove("a");
    }
    assert_eq!(find_cycle(&graph), None);
    let edge = sibling_edge(
        &["store".into(), "explain".into()],
        &["store".into(), "queries".into()],
    );
    assert_eq!(
        edge,
        Some((vec!["store".into()], "explain".into(), "queries".into()))
    );
    // A module using its parent's items, or a child's, is no edge.
    assert_eq!(
        sibling_edge(&["store".into(), "apply".into()], &["store".into()]),
        None
    );
    assert_eq!(sibling_edge(&[], &["store".into()]), None);
    let source = "//! doc\n\nfn a() {\n    // note\n    b();\n}\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n";
    assert_eq!(logic_lines(source), 3);
}

#[test]
fn no_module_cycle_in_any_crate() {
    let problems: Vec<String> = crates()
        .iter()
        .flat_map(|(krate, root)| {
            cycles(root)
                .into_iter()
                .map(move |c| format!("{krate}: {c}"))
        })
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_source_file_over_the_bound() {
    let mut files = Vec::new();
    for (_, root) in crates() {
        rust_files(&root, &mut files);
    }
    files.sort();
    let over: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let lines = logic_lines(&fs::read_to_string(file).expect("read a source file"));
            let shown = file.strip_prefix(workspace()).unwrap_or(file).display();
            (lines > MAX_LOGIC_LINES).then(|| format!("{shown}: {lines} lines of logic"))
        })
        .collect();
    assert!(
        over.is_empty(),
        "files over {MAX_LOGIC_LINES} lines of logic (split them by concern):\n{}",
        over.join("\n")
    );
}

/// A module of `server/src/http` by its path below `http` (`http` itself for `[]`).
fn http_name(module: &[String]) -> String {
    if module.is_empty() {
        "http".to_owned()
    } else {
        module.join("::")
    }
}

#[test]
fn server_http_modules_follow_the_documented_order() {
    let http_dir = workspace().join("server/src/http");
    let mut files = BTreeMap::new();
    modules(&http_dir, &[], &mut files);
    let all: BTreeSet<Module> = files.keys().cloned().collect();
    // Directory modules: `http` itself and `sim`.
    let directories: BTreeSet<Module> = all
        .iter()
        .filter(|m| {
            all.iter()
                .any(|other| other.len() > m.len() && other.starts_with(m))
        })
        .cloned()
        .collect();

    // The documented order: "//! N. `module`: dep, dep" (or "—"), maybe "(a note)" after.
    let root = fs::read_to_string(http_dir.join("mod.rs")).expect("read http/mod.rs");
    let mut order: Vec<String> = Vec::new();
    let mut documented: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in root.lines() {
        let Some(item) = line.strip_prefix("//! ") else {
            continue;
        };
        let Some((number, rest)) = item.split_once(". `") else {
            continue;
        };
        if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let (module, deps) = rest.split_once("`:").expect("`module`: deps");
        // A note in parentheses after the list is not a module.
        let deps = deps.split('(').next().unwrap_or_default();
        let deps: BTreeSet<String> = deps
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty() && *d != "—")
            .map(str::to_owned)
            .collect();
        order.push(module.to_owned());
        documented.insert(module.to_owned(), deps);
    }
    assert!(!order.is_empty(), "no dependency order in http/mod.rs");

    // Every file module is in the list once, the directory modules are not.
    let listed: BTreeSet<String> = order.iter().cloned().collect();
    assert_eq!(
        listed.len(),
        order.len(),
        "a module listed twice: {order:?}"
    );
    let expected: BTreeSet<String> = all
        .iter()
        .filter(|m| !directories.contains(*m))
        .map(|m| http_name(m))
        .collect();
    assert_eq!(
        listed, expected,
        "the list in http/mod.rs and the files differ"
    );

    // A directory module other than the root only declares its modules.
    for module in directories.iter().filter(|m| !m.is_empty()) {
        let code = code_only(&fs::read_to_string(&files[module]).expect("read"));
        for line in code.lines().map(str::trim).filter(|l| !l.is_empty()) {
            assert!(
                line.starts_with("pub mod ") || line.starts_with("mod "),
                "{} holds more than module declarations: {line:?}",
                http_name(module)
            );
        }
    }

    // What each module reaches.
    let mut problems = Vec::new();
    let position = |m: &str| order.iter().position(|o| o == m);
    for (module, file) in &files {
        if directories.contains(module) {
            continue;
        }
        let code = code_only(&fs::read_to_string(file).expect("read"));
        let mut reached = BTreeSet::new();
        let mut absolute = vec!["http".to_owned()];
        absolute.extend(module.iter().cloned());
        for (base, path) in paths_in(&code, &absolute) {
            // Only paths into `http` (the crate's other modules are not in this order).
            let full: Vec<String> = base.into_iter().chain(path.iter().cloned()).collect();
            let Some(("http", below)) = full.split_first().map(|(h, b)| (h.as_str(), b)) else {
                continue;
            };
            let target = resolve(&all, Vec::new(), below);
            if &target == module {
                continue;
            }
            if directories.contains(&target) {
                problems.push(format!(
                    "{} reaches the directory module {} ({}): import the module it means",
                    http_name(module),
                    http_name(&target),
                    path.join("::")
                ));
                continue;
            }
            reached.insert(http_name(&target));
        }
        let me = http_name(module);
        let mine = position(&me).expect("listed");
        for dep in &reached {
            match position(dep) {
                Some(at) if at < mine => {}
                _ => problems.push(format!("{me} imports {dep}, which is not listed before it")),
            }
        }
        if documented.get(&me) != Some(&reached) {
            let shown: Vec<&str> = reached.iter().map(String::as_str).collect();
            problems.push(format!(
                "{me} imports {{{}}}, http/mod.rs lists {:?}",
                shown.join(", "),
                documented.get(&me)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
