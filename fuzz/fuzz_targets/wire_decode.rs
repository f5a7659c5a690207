//! `cargo fuzz run wire_decode`: the body is `targets/wire_decode.rs`, shared with `tests/fuzz_corpus.rs`.
#![no_main]

#[path = "../targets/wire_decode.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
