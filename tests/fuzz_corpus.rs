//! The fuzz corpora as ordinary tests: every file of `fuzz/corpus/<target>/` (the committed
//! seeds) and `fuzz/regressions/<target>/` (crashes found by `scripts/fuzz.sh`) runs through the
//! target's body, `fuzz/targets/<target>.rs`, the very code `cargo fuzz run <target>` runs.
//! The `server_respond` corpus is the server crate's to replay
//! (`cargo test -p task-projection-server --test fuzz_corpus`, server/tests/fuzz_corpus.rs).
//!
//! The seed corpus is written from tests/fixtures/scenarios.json and store_scenarios.json by
//! `cargo test --test fuzz_corpus -- --ignored write_seed_corpus` (the server target's from its
//! scripted scenarios by the same test of the server crate).
#![cfg(not(target_arch = "wasm32"))]
// Each target body includes its own copy of fuzz/targets/common.rs (the fuzz binaries build one
// target each).
#![allow(clippy::duplicate_mod)]

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

#[allow(dead_code)]
#[path = "../fuzz/targets/wire_decode.rs"]
mod wire_decode;

#[allow(dead_code)]
#[path = "../fuzz/targets/store.rs"]
mod store;

#[path = "../fuzz/targets/corpus.rs"]
mod corpus;

use corpus::{files, replay, write_seeds};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

#[test]
fn wire_decode_corpus() {
    replay("wire_decode", wire_decode::run);
}

#[test]
fn store_corpus() {
    replay("store", store::run);
}

// ---- seed corpus ---------------------------------------------------------------------------------

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("a fixture file is JSON")
}

fn slug(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    out.truncate(40);
    out.trim_matches('-').to_owned()
}

/// A deterministic byte stream (seeds of the store target's binary form).
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Never `[` or `{` first: that is the JSON form.
            (state >> 24) as u8 & 0x7f
        })
        .collect()
}

#[test]
#[ignore = "writes fuzz/corpus/: run by hand after changing a target's input format"]
fn write_seed_corpus() {
    // wire_decode: the arguments of up to two scenario cases per call, plus edge values.
    let scenarios = fixture("scenarios.json");
    let mut per_call: std::collections::HashMap<String, usize> = Default::default();
    let mut seeds = Vec::new();
    for (i, case) in scenarios["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let call = case["call"].as_str().unwrap_or_default().to_owned();
        let n = per_call.entry(call.clone()).or_default();
        if *n >= 2 {
            continue;
        }
        *n += 1;
        let bytes = serde_json::to_vec(&case["args"]).expect("args serialize");
        seeds.push((format!("scenario-{i:03}-{}.json", slug(&call)), bytes));
    }
    let edges = [
        (
            "edge-long-action",
            json!([[{"id": "m", "type": "clarification_request", "metadata": {"status": "x".repeat(300)}}], {"pendingAction": "y".repeat(300)}]),
        ),
        (
            "edge-long-epoch",
            json!([{"epoch": "9".repeat(250), "sequence": 1}, {"epoch": "1a".repeat(150), "sequence": 2}]),
        ),
        (
            "edge-multibyte-kind",
            json!(["€".repeat(150), {"message_id": "m", "session_id": "s"}]),
        ),
        (
            "edge-numbers",
            json!([{"revision": 18_446_744_073_709_551_615_u64}, {"revision": 1e300}, {"epoch": "1", "sequence": 9_007_199_254_740_993_u64}, -0.0]),
        ),
        (
            "edge-timestamps",
            json!([
                "2026-11-29T12:00:00Z",
                "2026-11-29T12:00:00.000000000Z",
                "2026-11-29T12:00:00.1Z",
                "2026-11-29T12:00:00.1ZZ",
                "9999-99-99T99:99:99.999999999Z",
                ""
            ]),
        ),
        (
            "edge-nesting",
            json!([[[[[[[[[[[[[[[[{"id": [[[["s"]]]]}]]]]]]]]]]]]]]]]),
        ),
    ];
    for (name, value) in edges {
        seeds.push((
            format!("{name}.json"),
            serde_json::to_vec(&value).expect("serialize"),
        ));
    }
    write_seeds("wire_decode", &seeds);

    // store: every sixth store-scenario case and every convergence case (JSON form), plus the
    // binary form from a few deterministic streams.
    let cases = fixture("store_scenarios.json");
    let mut seeds = Vec::new();
    for (i, case) in cases["cases"].as_array().into_iter().flatten().enumerate() {
        let name = case["name"].as_str().unwrap_or_default();
        if i % 6 != 0 && !name.starts_with("convergence:") {
            continue;
        }
        let bytes = store::seed_of_case(case);
        if bytes.len() > 16 * 1024 {
            continue;
        }
        seeds.push((format!("case-{i:03}-{}.json", slug(name)), bytes));
    }
    for k in 0..8u64 {
        let len = 48 + 32 * usize::try_from(k).unwrap_or(0);
        seeds.push((format!("binary-{k}.bin"), noise(k + 1, len)));
    }
    write_seeds("store", &seeds);
}

/// Prints every failing store regression reduced to its fewest calls (JSON form; write one to a
/// file under fuzz/regressions/store/ to keep the readable form).
#[test]
#[ignore = "a debugging aid: cargo test --test fuzz_corpus -- --ignored --nocapture minimize_store"]
fn minimize_store_regressions() {
    for path in files("regressions", "store") {
        let data = fs::read(&path).expect("a regression file");
        match store::minimize(&data) {
            None => println!("{}: passes", path.display()),
            Some((why, text)) => println!(
                "{}: {why}\n{}\n",
                path.display(),
                String::from_utf8_lossy(&text)
            ),
        }
    }
}
