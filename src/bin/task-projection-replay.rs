//! `task-projection-replay [--check] [--json] trace.ndjson`: replays a trace recorded by
//! `store.startRecording()` (docs/trace-format.md) on this engine and prints each step: its time,
//! the input (ids only, as recorded), its reason and the answers it changed with their reasons.
//!
//! `--check`: exits 1 at the first step whose replayed answers (or reason) differ from the
//! recorded ones, with both. `--json`: one JSON object per step instead of text (what
//! `tests/js/trace.test.mjs` compares with the package's `replayTrace`, `task-projection/trace`). Exit 2: usage, an
//! unreadable file or a malformed trace (the message names the line).
//!
//! `--explore N [--seed S]`: the race explorer (docs/trace-format.md, "Explorer"): the trace's
//! inputs delivered in `N` random orders with duplicates, as the network could deliver them;
//! every final answer that differs from the recorded order's is reported with the smallest
//! delivery that still changes it, written next to the trace as `<trace>.race-<n>.ndjson` (that
//! delivery) and `<trace>.race-<n>.in-order.ndjson` (the same inputs in recorded order), both
//! replayable. The seed (random unless given) is printed, so a report can be reproduced. Exit 0:
//! no answer differs; 1: some do (or an input was refused); 2: usage or a trace that is not
//! complete.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

/// Nothing to run on wasm32 (`cargo test --target wasm32-unknown-unknown` builds every binary).
#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use std::process::ExitCode;

    use serde_json::{json, Value};
    use task_projection::trace::{self, explore, Replayed};

    const USAGE: &str = "usage: task-projection-replay [--check] [--json] trace.ndjson\n       \
                         task-projection-replay --explore N [--seed S] trace.ndjson";

    pub fn main() -> ExitCode {
        let mut check = false;
        let mut as_json = false;
        let mut orders: Option<u64> = None;
        let mut seed: Option<u64> = None;
        let mut file = None;
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--check" => check = true,
                "--json" => as_json = true,
                "--explore" | "--seed" => {
                    let Some(n) = args.next().and_then(|n| n.parse::<u64>().ok()) else {
                        return usage(&format!("{arg} takes a non-negative integer"));
                    };
                    if arg == "--explore" {
                        orders = Some(n);
                    } else {
                        seed = Some(n);
                    }
                }
                "-h" | "--help" => {
                    println!("{USAGE}");
                    return ExitCode::SUCCESS;
                }
                flag if flag.starts_with("--") => return usage(&format!("unknown flag {flag}")),
                path if file.is_none() => file = Some(path.to_owned()),
                _ => return usage("one trace file"),
            }
        }
        let Some(file) = file else {
            return usage("no trace file");
        };
        if orders.is_some() && (check || as_json) {
            return usage("--explore takes neither --check nor --json");
        }
        if seed.is_some() && orders.is_none() {
            return usage("--seed goes with --explore");
        }
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) => return failure(&format!("{file}: {e}")),
        };
        let parsed = match trace::parse(&text) {
            Ok(parsed) => parsed,
            Err(e) => return failure(&format!("{file}: {e}")),
        };
        if (check || orders.is_some()) && !parsed.complete() {
            return failure(&format!(
                "{file}: incomplete trace ({} line(s) dropped by the ring, recording started on {} store): \
                 a replay from an empty store cannot be checked against it",
                parsed.dropped,
                if parsed.fresh { "an empty" } else { "a non-empty" }
            ));
        }
        if let Some(orders) = orders {
            return explore_trace(&file, &parsed, orders, seed.unwrap_or_else(random_seed));
        }
        let steps = trace::replay(&parsed);
        if !as_json && !parsed.complete() {
            println!(
                "note: incomplete trace ({} line(s) dropped; fresh: {}): answers may differ from the recording",
                parsed.dropped, parsed.fresh
            );
        }
        for step in &steps {
            if as_json {
                println!("{}", step_json(step));
            } else {
                print_step(step);
            }
            if check && !step.same() {
                eprintln!(
                    "--check: step {} (line {}) differs from the recording",
                    step.step, step.line
                );
                eprintln!(
                    "  recorded reason: {}",
                    step.recorded_reason.as_deref().unwrap_or("-")
                );
                eprintln!(
                    "  replayed reason: {}",
                    step.reason.as_deref().unwrap_or("-")
                );
                if let Some(error) = &step.error {
                    eprintln!("  replay refused the input: {error}");
                }
                eprintln!("  recorded answers: {}", step.recorded);
                eprintln!("  replayed answers: {}", step.answers);
                return ExitCode::from(1);
            }
        }
        if check {
            eprintln!("--check: {} step(s), every answer as recorded", steps.len());
        }
        ExitCode::SUCCESS
    }

    /// A seed from the clock and the process id (printed, so the run can be repeated).
    fn random_seed() -> u64 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        explore::order_seed(nanos, u64::from(std::process::id()))
    }

    /// `--explore`: the report, the reproducers written next to the trace.
    fn explore_trace(file: &str, parsed: &trace::Trace, orders: u64, seed: u64) -> ExitCode {
        let started = std::time::Instant::now();
        let report = explore::explore(parsed, orders, seed, &explore::ENGINE);
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "explore {file}: seed {seed}, {} order(s) of {} input(s) ({} pinned), {} step(s) delivered, {:.1} s",
            report.orders, report.inputs, report.pinned, report.steps, seconds
        );
        println!(
            "{} order(s) with a different final answer (expected 0); {} final answer(s) differ; {} input(s) refused (expected 0)",
            report.differing_orders,
            report.races.len(),
            report.refused
        );
        for (n, race) in report.races.iter().enumerate() {
            let n = n + 1;
            let d = &race.difference;
            println!(
                "race {n}: {} {}: first in order {}, shrunk to {} input(s) (trace lines {})",
                d.subject.name(),
                d.id,
                race.order,
                race.plan.inputs.len(),
                race.lines
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            for (field, recorded, reordered) in d.fields() {
                println!("    {field}: recorded order {recorded}, reordered {reordered}");
            }
            println!("    delivery:");
            for step in &race.steps {
                if let Some(input) = race.plan.inputs.get(step.input) {
                    let call = if step.begin {
                        "beginTaskFetch (for it)"
                    } else {
                        input.call.as_str()
                    };
                    let args: Vec<String> = input.args.iter().map(summary).collect();
                    println!("      line {}: {call}({})", input.line, args.join(", "));
                }
            }
            for (suffix, text) in [("", &race.trace), (".in-order", &race.in_order)] {
                let path = format!("{file}.race-{n}{suffix}.ndjson");
                match std::fs::write(&path, text) {
                    Ok(()) => println!("    written: {path}"),
                    Err(e) => eprintln!("    could not write {path}: {e}"),
                }
            }
        }
        if !report.races.is_empty() || report.refused > 0 {
            println!("again: task-projection-replay --explore {orders} --seed {seed} {file}");
            return ExitCode::from(1);
        }
        ExitCode::SUCCESS
    }

    fn usage(problem: &str) -> ExitCode {
        eprintln!("{problem}\n{USAGE}");
        ExitCode::from(2)
    }

    fn failure(problem: &str) -> ExitCode {
        eprintln!("task-projection-replay: {problem}");
        ExitCode::from(2)
    }

    fn step_json(step: &Replayed) -> Value {
        json!({
            "step": step.step,
            "us": step.us,
            "call": step.call,
            "reason": step.reason,
            "result": step.result,
            "answers": step.answers,
            "same": step.same(),
            "error": step.error,
        })
    }

    /// The ids of an argument, for the step's one-line summary.
    fn summary(value: &Value) -> String {
        match value {
            Value::String(s) => s.clone(),
            Value::Null => "null".into(),
            Value::Array(items) => format!("[{} item(s)]", items.len()),
            Value::Object(map) => {
                let id = ["id", "message_id", "session_id", "task_id", "type"]
                    .iter()
                    .find_map(|k| map.get(*k).and_then(Value::as_str));
                id.map_or_else(|| "{…}".to_owned(), |id| format!("{{{id}…}}"))
            }
            other => other.to_string(),
        }
    }

    fn print_step(step: &Replayed) {
        let args: Vec<String> = step.args.iter().map(summary).collect();
        #[allow(clippy::cast_precision_loss)]
        let ms = step.us as f64 / 1000.0;
        let mark = if step.same() {
            ""
        } else {
            "  [differs from the recording]"
        };
        println!(
            "#{} {:>10.3} ms  {}({}) → {}{}",
            step.step,
            ms,
            step.call,
            args.join(", "),
            step.reason.as_deref().unwrap_or("-"),
            mark
        );
        if let Some(error) = &step.error {
            println!("    refused: {error}");
        }
        if !step.result.is_null() {
            println!("    result: {}", step.result);
        }
        for kind in ["sessions", "tasks"] {
            if let Some(Value::Object(ids)) = step.answers.get(kind) {
                for (id, answers) in ids {
                    println!(
                        "    {} {id}: {}",
                        &kind[..kind.len() - 1],
                        decisions(answers)
                    );
                }
            }
        }
    }

    /// `answer (why)` pairs of one id's answers.
    fn decisions(answers: &Value) -> String {
        let Some(map) = answers.as_object() else {
            return answers.to_string();
        };
        map.iter()
            .filter(|(k, _)| !k.ends_with("Why"))
            .map(|(k, v)| {
                let why = map
                    .get(&format!("{k}Why"))
                    .and_then(Value::as_str)
                    .unwrap_or("-");
                format!("{k}={v} ({why})")
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}
