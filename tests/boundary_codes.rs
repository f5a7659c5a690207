//! `js/store.js` passes the fast path's kinds, actions and queries as numbers: its `FAST` object
//! must name exactly the values of `task_projection::wire::fast`.

use std::collections::BTreeSet;

use task_projection::wire::fast;

/// The `(group, name, value)` triples of `FAST = Object.freeze({ group: Object.freeze({ name: 0, ... }) })`.
fn js_codes() -> BTreeSet<(String, String, u8)> {
    let js = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/js/store.js")).unwrap();
    let start = js
        .find("export const FAST = ")
        .expect("js/store.js defines FAST");
    let rest = &js[start..];
    let text = &rest[..rest.find("\n});").expect("FAST ends")];
    let mut out = BTreeSet::new();
    let mut group = String::new();
    // Tokens: identifiers, numbers, and the punctuation between them.
    let tokens: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '{'))
        .filter(|t| !t.is_empty())
        .collect();
    for pair in tokens.windows(2) {
        let (name, next) = (pair[0], pair[1]);
        if next == "Object" && name != "FAST" && name != "freeze" {
            group = name.to_owned();
        } else if let Ok(value) = next.parse::<u8>() {
            out.insert((group.clone(), name.to_owned(), value));
        }
    }
    out
}

#[test]
fn store_js_fast_codes_are_the_rust_ones() {
    let rust: BTreeSet<(String, String, u8)> = fast::ALL
        .iter()
        .map(|(g, n, v)| ((*g).to_owned(), (*n).to_owned(), *v))
        .collect();
    assert_eq!(js_codes(), rust);
}

/// `name: value` pairs of `export const NAME = Object.freeze({ ... });` in a JS file.
fn js_object(file: &str, name: &str) -> BTreeSet<(String, u32)> {
    let js = std::fs::read_to_string(format!("{}/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let start = js
        .find(&format!("export const {name} = Object.freeze({{"))
        .unwrap_or_else(|| panic!("{file} defines {name}"));
    let rest = &js[start..];
    let body = &rest[rest.find('{').unwrap() + 1..rest.find("});").unwrap()];
    body.split(',')
        .filter_map(|pair| {
            let (k, v) = pair.split_once(':')?;
            Some((k.trim().to_owned(), v.trim().parse().ok()?))
        })
        .collect()
}

/// `export const NAME = 1 << n;` in a JS file.
fn js_shift(file: &str, name: &str) -> usize {
    let js = std::fs::read_to_string(format!("{}/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let line = js
        .lines()
        .find(|l| l.starts_with(&format!("export const {name} = 1 << ")))
        .unwrap_or_else(|| panic!("{file} defines {name} as 1 << n"));
    let n: u32 = line
        .rsplit("<< ")
        .next()
        .unwrap()
        .trim_end_matches(';')
        .parse()
        .unwrap();
    1 << n
}

#[test]
fn read_js_tape_tags_and_sizes_are_the_rust_ones() {
    use task_projection::wire::tape;
    let rust: BTreeSet<(String, u32)> = tape::tag::ALL
        .iter()
        .map(|(n, v)| ((*n).to_owned(), *v))
        .collect();
    assert_eq!(js_object("js/read.js", "TAG"), rust);
    assert_eq!(rust.len(), 12);
    assert_eq!(js_shift("js/read.js", "LARGE_WORDS"), tape::LARGE_WORDS);
    assert_eq!(js_shift("js/read.js", "LARGE_BYTES"), tape::LARGE_BYTES);
    let js = std::fs::read_to_string(format!("{}/js/read.js", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let spill = js
        .lines()
        .find_map(|l| l.strip_prefix("export const SPILL_MARK = 0x"))
        .expect("js/read.js defines SPILL_MARK in hex");
    assert_eq!(
        u32::from_str_radix(spill.trim_end_matches(';'), 16).unwrap(),
        tape::SPILL
    );
}
