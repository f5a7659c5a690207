//! `cargo fuzz run store`: the body is `targets/store.rs`, shared with `tests/fuzz_corpus.rs`.
#![no_main]

#[path = "../targets/store.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
