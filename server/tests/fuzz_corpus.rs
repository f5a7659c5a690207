//! The `server_respond` fuzz corpus as an ordinary test: every file of
//! `fuzz/corpus/server_respond/` (the committed seeds) and `fuzz/regressions/server_respond/`
//! (crashes found by `scripts/fuzz.sh`) runs through the target's body,
//! `fuzz/targets/server_respond.rs`, the very code `cargo fuzz run server_respond` runs. The other
//! targets' corpora are the root crate's (tests/fuzz_corpus.rs).
//!
//! Its seeds are written from the target's scripted scenarios by
//! `cargo test -p task-projection-server --test fuzz_corpus -- --ignored write_seed_corpus`.

use std::path::{Path, PathBuf};

#[allow(dead_code)]
#[path = "../../fuzz/targets/server_respond.rs"]
mod server_respond;

#[path = "../../fuzz/targets/corpus.rs"]
mod corpus;

use corpus::{replay, write_seeds};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the server crate is a directory of the repository")
        .join("fuzz")
}

#[test]
fn server_respond_corpus() {
    replay("server_respond", server_respond::run);
}

#[test]
#[ignore = "writes fuzz/corpus/: run by hand after changing the target's input format"]
fn write_seed_corpus() {
    let seeds: Vec<(String, Vec<u8>)> = server_respond::seeds()
        .into_iter()
        .map(|(name, bytes)| (format!("{name}.bin"), bytes))
        .collect();
    write_seeds("server_respond", &seeds);
}
