//! The scenario file through the wasm binding, in headless Chromium (wasm-bindgen-test with
//! `CHROMEDRIVER=/usr/bin/chromedriver`).
#![cfg(target_arch = "wasm32")]

mod wasm_common;

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn scenarios_in_chromium() {
    wasm_common::run_all();
}

#[wasm_bindgen_test]
fn errors_leave_the_instance_usable() {
    wasm_common::errors_leave_the_instance_usable();
}

#[wasm_bindgen_test]
fn null_and_undefined_stay_apart() {
    wasm_common::null_and_undefined_stay_apart();
}

#[wasm_bindgen_test]
fn store_scenarios_in_chromium() {
    wasm_common::store::run_all();
}
