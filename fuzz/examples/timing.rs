//! A native timing harness for the target bodies (no libFuzzer, no coverage instrumentation):
//! runs every file of the given directories through a target's `run` in a loop and prints the
//! executions per second, overall and for the slowest files.
//!
//!   cd fuzz && cargo run --release --example timing -- store [rounds] dir...
//!   cd fuzz && cargo run --release --example timing -- store check dir...   (each file once:
//!   passes, or the first line of its panic)
//!   cd fuzz && cargo run --release --example timing -- store min file...   (a failing store
//!   input reduced to its fewest calls, JSON form)
#[allow(dead_code)]
#[path = "../targets/store.rs"]
mod store;

#[allow(dead_code)]
#[path = "../targets/wire_decode.rs"]
mod wire_decode;

use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let target = args.next().expect("target: store | wire_decode");
    let run: fn(&[u8]) = match target.as_str() {
        "store" => store::run,
        "wire_decode" => wire_decode::run,
        other => panic!("unknown target {other}"),
    };
    let mut rest: Vec<String> = args.collect();
    if target == "store" && rest.first().is_some_and(|r| r == "min") {
        for file in &rest[1..] {
            let data = std::fs::read(file).expect("read");
            match store::minimize(&data) {
                None => println!("{file}: passes"),
                Some((why, text)) => {
                    println!("{file}: {why}\n{}", String::from_utf8_lossy(&text));
                }
            }
        }
        return;
    }
    let check = rest.first().is_some_and(|r| r == "check");
    if check {
        rest.remove(0);
    }
    let rounds: usize = match rest.first().and_then(|r| r.parse().ok()) {
        Some(n) => {
            rest.remove(0);
            n
        }
        None => 3,
    };
    let mut inputs = Vec::new();
    for dir in &rest {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .expect("a directory")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for f in files {
            inputs.push((f.display().to_string(), std::fs::read(&f).expect("read")));
        }
    }
    if check {
        std::panic::set_hook(Box::new(|_| {}));
        for (name, data) in &inputs {
            let why = match std::panic::catch_unwind(|| run(data)) {
                Ok(()) => "passes".to_owned(),
                Err(panic) => panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default(),
            };
            println!("{name}: {}", why.lines().next().unwrap_or_default());
        }
        return;
    }
    let mut per: Vec<(Duration, &str, usize)> = Vec::new();
    let start = Instant::now();
    for (name, data) in &inputs {
        let t = Instant::now();
        for _ in 0..rounds {
            run(data);
        }
        per.push((t.elapsed() / rounds as u32, name, data.len()));
    }
    let total = start.elapsed();
    let n = inputs.len() * rounds;
    println!(
        "{target}: {} inputs x {rounds} = {n} runs in {:.2}s: {:.0} exec/s, {:.1} us/exec",
        inputs.len(),
        total.as_secs_f64(),
        n as f64 / total.as_secs_f64(),
        total.as_secs_f64() * 1e6 / n as f64
    );
    per.sort_by(|a, b| b.0.cmp(&a.0));
    for (d, name, len) in per.iter().take(8) {
        println!("  {:>8.1} us  {len:>6} B  {name}", d.as_secs_f64() * 1e6);
    }
}
