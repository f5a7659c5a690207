//! The module layout of `server/src/http` has no cycle: every module imports only modules listed
//! before it in the "Dependency order" of `server/src/http/mod.rs`, and exactly the ones listed
//! there. Read from the sources: every `super::…` and `crate::http::…` path in the code
//! (comments and string literals left out; `use` trees with their groups expanded), resolved to
//! the module it reaches. No module may reach the adapter's root (`http/mod.rs`) or a directory
//! module (`sim/mod.rs`), which only declares its modules.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module of `http`, as its path below `http` (`[]` is `http` itself).
type Module = Vec<String>;

fn http_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/http")
}

fn name(module: &[String]) -> String {
    if module.is_empty() {
        "http".to_owned()
    } else {
        module.join("::")
    }
}

/// Every `.rs` file below `dir` with its module path.
fn modules(dir: &Path, prefix: &[String], out: &mut BTreeMap<Module, PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .expect("read src/http")
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
            let mut child = prefix.to_vec();
            child.push(stem);
            modules(&path, &child, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let mut module = prefix.to_vec();
            if stem != "mod" {
                module.push(stem);
            }
            out.insert(module, path);
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

/// Every path of `code` that starts with `super::` or `crate::http::`, as
/// (base module, segments after the base).
fn http_paths(code: &str, module: &[String]) -> Vec<(Module, Vec<String>)> {
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let boundary = i == 0
            || chars
                .get(i - 1)
                .is_some_and(|c| !(c.is_alphanumeric() || *c == '_' || *c == ':'));
        let rest: String = chars[i..chars.len().min(i + 13)].iter().collect();
        let (base, skip) = if boundary && rest.starts_with("crate::http::") {
            (Some(Vec::new()), "crate::http::".len())
        } else if boundary && rest.starts_with("super::") {
            let mut base = module.to_vec();
            let mut at = i;
            loop {
                let here: String = chars[at..chars.len().min(at + 7)].iter().collect();
                if here != "super::" {
                    break;
                }
                assert!(
                    base.pop().is_some(),
                    "{}: `super` above src/http",
                    name(module)
                );
                at += 7;
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

#[test]
fn use_trees_are_expanded() {
    let code = "use super::{a::{b, c as d}, e};\nlet x = crate::http::f::g(1);\n\
                let y = super::super::h::<u8>();";
    let module = vec!["sim".to_owned(), "agent".to_owned()];
    let paths = http_paths(code, &module);
    let shown: Vec<String> = paths
        .iter()
        .map(|(base, path)| format!("{}|{}", name(base), path.join("::")))
        .collect();
    assert_eq!(
        shown,
        ["sim|a::b", "sim|a::c", "sim|e", "http|f::g", "http|h"]
    );
    let code = code_only("let a = \"super::x\"; // super::y\n/* super::z */ let c = '\"';");
    assert!(!code.contains("super"), "{code}");
}

#[test]
fn http_modules_follow_the_documented_order() {
    let mut files = BTreeMap::new();
    modules(&http_dir(), &[], &mut files);
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
    let root = fs::read_to_string(http_dir().join("mod.rs")).expect("read http/mod.rs");
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
        .map(|m| name(m))
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
                name(module)
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
        for (base, path) in http_paths(&code, module) {
            let mut target = base;
            for segment in &path {
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
            if &target == module {
                continue;
            }
            if directories.contains(&target) {
                problems.push(format!(
                    "{} reaches the directory module {} ({}): import the module it means",
                    name(module),
                    name(&target),
                    path.join("::")
                ));
                continue;
            }
            reached.insert(name(&target));
        }
        let me = name(module);
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
