//! Throughput of the race explorer (`trace::explore`, docs/trace-format.md "Explorer"):
//! `cargo bench --bench explore`. It prints numbers; nothing is asserted.
//!
//! The trace is a simulated backend's history (tests/history, the generator of
//! tests/store_convergence.rs) of at least 1,000 inputs on two tasks, recorded by the native
//! recorder. Each order delivers every input 1–3 times in a random order, then compares every
//! id's final answers with the recorded order's: the number is orders per second on one core,
//! with the steps (delivered inputs) per second and the cost of one in-order replay beside it.
//! `EXPLORE_BENCH_ORDERS` (default 300) and `EXPLORE_BENCH_INPUTS` (default 1000) change the run.

#[path = "../tests/history/mod.rs"]
mod history;

use std::time::Instant;

use task_projection::trace::{self, explore};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let orders = env("EXPLORE_BENCH_ORDERS", 300);
    let inputs = env("EXPLORE_BENCH_INPUTS", 1000) as usize;
    let history = history::long(7, inputs);
    let text = history::record(&history, 1 << 28);
    let parsed = trace::parse(&text).expect("the recorded trace parses");

    // One in-order replay (the reference), for scale.
    let started = Instant::now();
    let plan = explore::plan(&parsed);
    let reps = 20;
    for _ in 0..reps {
        std::hint::black_box(explore::Reference::new(&plan, &explore::ENGINE));
    }
    let replay = started.elapsed().as_secs_f64() / f64::from(reps);

    let started = Instant::now();
    let report = explore::explore(&parsed, orders, 0x5eed, &explore::ENGINE);
    let seconds = started.elapsed().as_secs_f64();
    assert!(report.races.is_empty(), "a simulated history must converge");
    let per_order = report.steps as f64 / orders as f64;
    println!(
        "explore: trace of {} inputs ({} lines, {} KB), {} pinned; {} orders, {:.0} steps per order",
        report.inputs,
        parsed.steps.len(),
        text.len() / 1024,
        report.pinned,
        orders,
        per_order
    );
    println!(
        "explore: {:.1} orders/s, {:.0} steps/s ({:.2} µs per step), {:.2} ms per order; one in-order replay {:.2} ms",
        orders as f64 / seconds,
        report.steps as f64 / seconds,
        seconds * 1e6 / report.steps as f64,
        seconds * 1e3 / orders as f64,
        replay * 1e3
    );
}
