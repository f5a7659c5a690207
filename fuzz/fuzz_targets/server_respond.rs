//! `cargo fuzz run server_respond`: the body is `targets/server_respond.rs`, shared with `tests/fuzz_corpus.rs`.
#![no_main]

#[path = "../targets/server_respond.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
