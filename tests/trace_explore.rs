//! The race explorer (docs/trace-format.md, "Explorer"): every store scenario and long simulated
//! histories explored with no final answer changed; the inputs SPEC orders by arrival pinned, and
//! the pins needed; a deliberately broken engine's race found, shrunk to a minimal delivery that
//! reproduces it when replayed; the committed race trace explored clean by
//! `task-projection-replay --explore`, its exit codes and reproducers.
#![cfg(not(target_arch = "wasm32"))]

mod history;
mod store_common;

use std::collections::HashMap;

use serde_json::{json, Value};
use task_projection::store::ProjectionStore;
use task_projection::trace::explore::{self, Arrival, Store, Subject};
use task_projection::trace::{self, Recorder};
use task_projection::trace::{Applied, ApplyError};

use store_common::{args_of, load, Case, INPUTS};

/// A store scenario's inputs recorded natively, one trace per fresh store (`renew`/`dispose`
/// start a new one), as tests/trace_replay.rs records them.
fn record(case: &Case, max_bytes: usize) -> Vec<String> {
    let mut store = ProjectionStore::<Value>::new();
    let mut recorder = Recorder::new(max_bytes, &store);
    let mut out = Vec::new();
    let mut saved: HashMap<String, Value> = HashMap::new();
    let mut disposed = false;
    for (n, step) in case.steps.iter().enumerate() {
        if step.call == "dispose" || step.call == "renew" {
            if !disposed {
                out.push(recorder.text());
            }
            disposed = step.call == "dispose";
            store = ProjectionStore::new();
            recorder = Recorder::new(max_bytes, &store);
            continue;
        }
        if disposed || !INPUTS.contains(&step.call.as_str()) {
            continue;
        }
        let args = args_of(step, &saved);
        match trace::record(&mut recorder, &mut store, n as f64 * 1.5, &step.call, &args) {
            Ok(applied) => {
                if let Some(name) = &step.save {
                    let value = match (&applied.ticket, applied.token) {
                        (Some((ticket, _)), _) => json!(ticket),
                        (None, Some(token)) => json!(token),
                        _ => applied.result(),
                    };
                    saved.insert(name.clone(), value);
                }
            }
            Err(error) => assert!(step.error.is_some(), "{}: step {n}: {error}", case.name),
        }
    }
    if !disposed {
        out.push(recorder.text());
    }
    out
}

/// Every store scenario's traces (one per fresh store), with the case's name.
fn scenario_traces() -> Vec<(String, trace::Trace)> {
    load()
        .cases
        .iter()
        .flat_map(|case| {
            record(case, 1 << 24)
                .into_iter()
                .map(|text| (case.name.clone(), trace::parse(&text).unwrap()))
                .filter(|(_, t)| !t.steps.is_empty())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn orders() -> u64 {
    std::env::var("EXPLORE_ORDERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

#[test]
fn every_store_scenario_explores_with_no_answer_changed() {
    let (mut traces, mut steps, mut pinned, mut inputs) = (0, 0, 0, 0);
    for (name, parsed) in scenario_traces() {
        let report = explore::explore(&parsed, orders(), 0x5eed, &explore::ENGINE);
        assert!(
            report.races.is_empty() && report.refused == 0,
            "{name}: {} differing order(s), {} refused: {:#?}",
            report.differing_orders,
            report.refused,
            report.races.first().map(|r| (&r.difference, &r.lines))
        );
        traces += 1;
        steps += report.steps;
        pinned += report.pinned;
        inputs += report.inputs;
    }
    println!(
        "{traces} scenario traces x {} orders: {steps} steps delivered, {inputs} inputs ({pinned} pinned), 0 differences",
        orders()
    );
    // Duplicates were delivered: more steps than inputs per order.
    assert!(
        traces > 60 && steps > (inputs as u64) * orders(),
        "{steps} steps"
    );
}

#[test]
fn long_simulated_histories_explore_with_no_answer_changed() {
    for seed in 1..=4u64 {
        let history = history::long(seed, 300);
        let parsed = trace::parse(&history::record(&history, 1 << 26)).unwrap();
        let report = explore::explore(&parsed, orders() / 3, seed, &explore::ENGINE);
        println!(
            "history {seed}: {} inputs, {} orders, {} steps: {} differing",
            report.inputs, report.orders, report.steps, report.differing_orders
        );
        // A server-like history has no input SPEC orders by arrival but the legacy field (the
        // generator sends it with a summary held, where it decides nothing).
        let plan = explore::plan(&parsed);
        assert!(
            plan.inputs
                .iter()
                .all(|i| i.pinned.is_none() || i.pinned == Some(explore::why::LEGACY)),
            "history {seed}"
        );
        assert!(
            report.races.is_empty() && report.refused == 0,
            "history {seed}: {:#?}",
            report.races.first().map(|r| (&r.difference, &r.lines))
        );
    }
}

/// Without its pins (every input that SPEC orders by arrival delivered anywhere, 1–3 times), the
/// explorer reports the exceptions of docs/convergence.md as differences: the pins are needed,
/// and they are what keeps the scenarios above clean.
#[test]
fn the_pinned_inputs_are_the_ones_whose_order_decides() {
    let mut unpinned_differ = Vec::new();
    for (name, parsed) in scenario_traces() {
        let mut plan = explore::plan(&parsed);
        let mut changed = false;
        for input in &mut plan.inputs {
            if input.arrival == Arrival::Pinned
                && input
                    .pinned
                    .is_some_and(|w| w != explore::why::CLIENT && w != explore::why::HELLO)
            {
                input.arrival = Arrival::Any;
                changed = true;
            }
        }
        if !changed {
            continue;
        }
        let report = explore::explore_plan(&plan, orders(), 0x5eed, &explore::ENGINE);
        if !report.races.is_empty() {
            unpinned_differ.push(name);
        }
    }
    println!(
        "unpinned, {} scenario traces differ: {unpinned_differ:#?}",
        unpinned_differ.len()
    );
    // The summary exceptions (1, 3), equal clocks (5) and a session of two tasks all show.
    for expected in [
        "s51 ",
        "s54 ",
        "edge invalidated response while a newer live summary",
        "edge: a session event's state follows",
        "edge a message event of another task",
    ] {
        assert!(
            unpinned_differ.iter().any(|n| n.starts_with(expected)),
            "{expected}… should differ unpinned: {unpinned_differ:#?}"
        );
    }
}

/// The plan of a trace whose exception inputs are known, by kind.
#[test]
fn the_plan_pins_each_exception_and_nothing_else() {
    let at = |s: u32| format!("2026-11-29T12:00:{s:02}.000000000Z");
    let rev = |n: u64| json!({"epoch": "7", "sequence": n});
    let inputs: Vec<(&str, Vec<Value>)> = vec![
        // 0, 1: a summary event and a task.updated with a summary (exception 1): pinned.
        (
            "applyStatusSummaryEvent",
            vec![
                json!({"task_id": "t1", "status_summary": {"revision": 2, "pending_action": null}}),
            ],
        ),
        (
            "applyTaskUpdated",
            vec![
                json!({"id": "t1", "status_summary": {"revision": 1, "pending_action": "permission"}}),
            ],
        ),
        // 2: a summary event of another task: free.
        (
            "applyStatusSummaryEvent",
            vec![json!({"task_id": "t2", "status_summary": {"revision": 1}})],
        ),
        // 3, 4: two states of one session with one clock (exception 5): pinned.
        (
            "applySessionEvent",
            vec![json!({"id": "s1", "task_id": "t2", "state": "RUNNING", "updated_at": at(1)})],
        ),
        (
            "applySessionEvent",
            vec![json!({"id": "s1", "task_id": "t2", "state": "IDLE", "updated_at": at(1)})],
        ),
        // 5: a newer state of it: free.
        (
            "applySessionEvent",
            vec![json!({"id": "s1", "task_id": "t2", "state": "RUNNING", "updated_at": at(2)})],
        ),
        // 6, 7: two projections with one revision (exception 5): pinned.
        (
            "applySessionEvent",
            vec![
                json!({"id": "s2", "task_id": "t2", "updated_at": at(3), "pending_action": "permission", "pending_action_revision": rev(5)}),
            ],
        ),
        (
            "applySessionEvent",
            vec![
                json!({"id": "s2", "task_id": "t2", "updated_at": at(4), "pending_action": null, "pending_action_revision": rev(5)}),
            ],
        ),
        // 8: the legacy field once: free.
        (
            "applyTaskUpdated",
            vec![json!({"id": "t2", "task_pending_action": "permission"})],
        ),
        // 9: a selection: pinned (a client action).
        ("setActiveTask", vec![json!("t2")]),
    ];
    let mut store = ProjectionStore::<Value>::new();
    let mut recorder = Recorder::new(1 << 20, &store);
    for (i, (call, args)) in inputs.iter().enumerate() {
        trace::record(&mut recorder, &mut store, i as f64, call, args).unwrap();
    }
    let plan = explore::plan(&trace::parse(&recorder.text()).unwrap());
    let pinned: Vec<bool> = plan.inputs.iter().map(|i| i.pinned.is_some()).collect();
    assert_eq!(
        pinned,
        [true, true, false, true, true, false, true, true, false, true],
        "{:#?}",
        plan.inputs
            .iter()
            .map(|i| (&i.call, i.pinned))
            .collect::<Vec<_>>()
    );
    // And explored, nothing differs (the free ones commute).
    let report = explore::explore_plan(&plan, 500, 3, &explore::ENGINE);
    assert!(
        report.races.is_empty(),
        "{:#?}",
        report.races.first().map(|r| &r.difference)
    );
}

// ---- a broken engine: the explorer finds its race --------------------------------------------

/// Summary events applied as `task.updated` with the summary: the last to arrive wins, whatever
/// its revision (SPEC §7 orders them by revision).
fn last_summary_wins(
    store: &mut Store,
    call: &str,
    args: &[Value],
    ticket: Option<&str>,
) -> Result<Applied, ApplyError> {
    if call == "applyStatusSummaryEvent" {
        if let Some(event) = args.first() {
            let as_update =
                json!({"id": event["task_id"], "status_summary": event["status_summary"]});
            return trace::apply(store, "applyTaskUpdated", &[as_update], ticket);
        }
    }
    trace::apply(store, call, args, ticket)
}

/// Session events and session lists without the session's clock: the last state to arrive wins
/// (SPEC §5 orders a session's fields by its `updated_at`).
fn last_state_wins(
    store: &mut Store,
    call: &str,
    args: &[Value],
    ticket: Option<&str>,
) -> Result<Applied, ApplyError> {
    let unclocked = |row: &Value| {
        let mut row = row.clone();
        if let Some(r) = row.as_object_mut() {
            r.remove("updated_at");
        }
        row
    };
    match call {
        "applySessionEvent" => {
            let event = unclocked(args.first().unwrap_or(&Value::Null));
            trace::apply(store, call, &[event], ticket)
        }
        "applySessionList" => {
            let rows: Vec<Value> = args[1]
                .as_array()
                .into_iter()
                .flatten()
                .map(unclocked)
                .collect();
            trace::apply(store, call, &[args[0].clone(), json!(rows)], ticket)
        }
        _ => trace::apply(store, call, args, ticket),
    }
}

type ApplyFn = fn(&mut Store, &str, &[Value], Option<&str>) -> Result<Applied, ApplyError>;

/// The explorer finds `engine`'s race on a simulated history, shrinks it to at most `max`
/// inputs, and the reproducer, replayed with that engine, changes the reported answer (and with
/// this engine, does not).
fn finds_the_race(engine: ApplyFn, max: usize) {
    let history = history::long(11, 300);
    let parsed = trace::parse(&history::record(&history, 1 << 26)).unwrap();
    let report = explore::explore(&parsed, 200, 99, &engine);
    println!(
        "broken engine: {} of {} orders differ, {} answers; shrunk to {:?} inputs",
        report.differing_orders,
        report.orders,
        report.races.len(),
        report
            .races
            .iter()
            .map(|r| r.plan.inputs.len())
            .collect::<Vec<_>>()
    );
    assert!(report.differing_orders > 0 && !report.races.is_empty());
    // This engine converges on the same trace and orders.
    assert!(explore::explore(&parsed, 200, 99, &explore::ENGINE)
        .races
        .is_empty());
    for race in &report.races {
        let d = &race.difference;
        assert!(
            race.plan.inputs.len() <= max && race.plan.inputs.len() >= 2,
            "{} {}: {} inputs",
            d.subject.name(),
            d.id,
            race.plan.inputs.len()
        );
        assert!(!d.fields().is_empty());
        let key = (d.subject, d.id.clone());
        let reordered = trace::parse(&race.trace).unwrap();
        let in_order = trace::parse(&race.in_order).unwrap();
        assert!(reordered.complete() && in_order.complete());
        // Replayed with the broken engine, the two files end with the reported answers.
        let broken_reordered = explore::final_answers(&reordered, &engine);
        let broken_in_order = explore::final_answers(&in_order, &engine);
        assert_eq!(broken_reordered.get(&key), Some(&d.reordered));
        assert_eq!(broken_in_order.get(&key), Some(&d.recorded));
        // With this engine both end as the recorded order does.
        let fixed = explore::final_answers(&reordered, &explore::ENGINE);
        assert_eq!(fixed, explore::final_answers(&in_order, &explore::ENGINE));
        assert_eq!(fixed.get(&key), Some(&d.recorded));
        // No smaller delivery: dropping any one input loses the race.
        for drop in 0..race.plan.inputs.len() {
            let mut kept = vec![true; race.plan.inputs.len()];
            kept[drop] = false;
            let (smaller, steps) = race.plan.restricted(&kept, &race.steps);
            let reference = explore::Reference::new(&smaller, &engine);
            let (store, _) = smaller.deliver(&engine, &steps, |_, _, _, _, _| {});
            assert!(
                !reference
                    .differences(&store)
                    .iter()
                    .any(|x| x.subject == key.0 && x.id == key.1),
                "still differs without input {drop}"
            );
        }
    }
}

#[test]
fn the_explorer_finds_a_last_arrival_wins_summary() {
    finds_the_race(last_summary_wins, 2);
}

#[test]
fn the_explorer_finds_a_session_state_without_its_clock() {
    finds_the_race(last_state_wins, 3);
}

#[test]
fn the_shrinker_moves_steps_back_toward_recorded_order() {
    // Four summary events of one task, revisions 1..4: the broken engine ends on whichever
    // arrives last. Delivered in reverse, the smallest race is two events out of order.
    let mut store = ProjectionStore::<Value>::new();
    let mut recorder = Recorder::new(1 << 20, &store);
    for r in 1..=4u64 {
        let event = json!({"task_id": "t1", "status_summary": {"revision": r, "pending_action": if r % 2 == 0 { json!("permission") } else { Value::Null }}});
        trace::record(
            &mut recorder,
            &mut store,
            r as f64,
            "applyStatusSummaryEvent",
            &[event],
        )
        .unwrap();
    }
    let parsed = trace::parse(&recorder.text()).unwrap();
    let report = explore::explore(&parsed, 50, 5, &last_summary_wins);
    let race = report.races.first().expect("a race");
    assert_eq!(race.plan.inputs.len(), 2);
    assert_eq!(race.steps.len(), 2, "no duplicate left: {:?}", race.steps);
    // The newest revision is one of the two, delivered first.
    assert_eq!(race.steps[0].input, 1);
    assert_eq!(race.difference.subject, Subject::Task);
}

// ---- the committed race trace and the command ------------------------------------------------

const RACE_CASE: &str =
    "convergence: a deleted question does not come back on a late duplicate added (older revision than the delete, or none)";
const RACE_TRACE: &str = "tests/fixtures/traces/deleted-question-stays-deleted.ndjson";

fn race_case() -> Case {
    load()
        .cases
        .into_iter()
        .find(|c| c.name == RACE_CASE)
        .expect("the race scenario")
}

/// The committed race trace is the native recording of its scenario
/// (`TRACE_FIXTURE_UPDATE=1 cargo test --test trace_explore committed` records it again).
#[test]
fn the_committed_race_trace_is_its_scenario_recorded() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(RACE_TRACE);
    let [text] = <[String; 1]>::try_from(record(&race_case(), 1 << 20)).unwrap();
    if std::env::var_os("TRACE_FIXTURE_UPDATE").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "{RACE_TRACE} differs from its scenario recorded now (TRACE_FIXTURE_UPDATE=1 rewrites it)"
    );
}

#[test]
fn the_recorder_bound_holds_on_the_race_scenario() {
    let [full] = <[String; 1]>::try_from(record(&race_case(), 1 << 20)).unwrap();
    let max = trace::MIN_BYTES as usize;
    assert!(full.len() > max, "{} bytes", full.len());
    let [text] = <[String; 1]>::try_from(record(&race_case(), max)).unwrap();
    assert!(text.len() <= max, "{} bytes over {max}", text.len());
    let parsed = trace::parse(&text).unwrap();
    let all = trace::parse(&full).unwrap().steps.len();
    assert!(parsed.dropped > 0 && !parsed.complete());
    assert_eq!(parsed.dropped as usize + parsed.steps.len(), all);
    assert!(full.ends_with(text.split_once('\n').unwrap().1));
    // The explorer refuses it: an incomplete trace has no recorded order to compare with.
    let dir = temp("bound");
    let file = dir.join("short.ndjson");
    std::fs::write(&file, &text).unwrap();
    let out = replay_bin(&["--explore", "10", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("incomplete"));
    std::fs::remove_dir_all(&dir).ok();
}

fn replay_bin(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_task-projection-replay"))
        .args(args)
        .output()
        .unwrap()
}

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("trace-explore-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every committed trace (the race trace among them) explored by the command: no answer
/// differs, exit 0, the seed printed.
#[test]
fn the_committed_traces_explore_clean_with_the_command() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/traces");
    let orders = (orders() * 10).to_string();
    let mut explored = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("ndjson") {
            continue;
        }
        let out = replay_bin(&[
            "--explore",
            &orders,
            "--seed",
            "2026",
            path.to_str().unwrap(),
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{}: {stdout}", path.display());
        assert!(stdout.contains("seed 2026"), "{stdout}");
        assert!(
            stdout.contains("0 order(s) with a different final answer"),
            "{stdout}"
        );
        println!("{}", stdout.lines().next().unwrap_or_default());
        explored.push(path);
    }
    assert!(explored
        .iter()
        .any(|p| p.ends_with(RACE_TRACE.rsplit('/').next().unwrap())));
}

/// A trace outside the backend's premise (docs/convergence.md, exception 2: an unprojected
/// newer row and no projection after it) is what the explorer reports: exit 1, the race shrunk
/// and written as replayable traces, the same report for the same seed.
#[test]
fn a_race_is_reported_with_exit_1_and_replayable_reproducers() {
    let at = |s: u32| format!("2026-11-29T12:00:{s:02}.000000000Z");
    let row = |updated: u32| json!({"message_id": "m1", "session_id": "s1", "task_id": "t1", "type": "permission_request", "metadata": {"status": "pending"}, "created_at": at(1), "updated_at": at(updated)});
    let mut event = row(1);
    event["pending_action"] = json!("permission");
    event["pending_action_revision"] = json!({"epoch": "7", "sequence": 2});
    let mut page_row = row(2);
    page_row["id"] = json!("m1");
    let inputs: Vec<(&str, Vec<Value>)> = vec![
        (
            "applySessionList",
            vec![
                json!("t1"),
                json!([{"id": "s1", "task_id": "t1", "state": "RUNNING", "updated_at": at(0), "pending_action": null, "pending_action_revision": {"epoch": "7", "sequence": 1}}]),
            ],
        ),
        ("applyMessageEvent", vec![json!("added"), event]),
        ("applyMessagePage", vec![json!("s1"), json!([page_row])]),
    ];
    let mut store = ProjectionStore::<Value>::new();
    let mut recorder = Recorder::new(1 << 20, &store);
    for (i, (call, args)) in inputs.iter().enumerate() {
        trace::record(&mut recorder, &mut store, i as f64, call, args).unwrap();
    }
    let dir = temp("race");
    let file = dir.join("premise.ndjson");
    std::fs::write(&file, recorder.text()).unwrap();
    let run = || replay_bin(&["--explore", "200", "--seed", "7", file.to_str().unwrap()]);
    let out = run();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("race 1: session s1"), "{stdout}");
    assert!(
        stdout.contains("pendingAction: recorded order \"permission\", reordered null"),
        "{stdout}"
    );
    assert!(
        stdout.contains("again: task-projection-replay --explore 200 --seed 7"),
        "{stdout}"
    );
    // Reproducible: the same seed, the same report (the time aside).
    let again = String::from_utf8_lossy(&run().stdout).to_string();
    let strip = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(strip(&stdout), strip(&again));
    // The reproducers replay (and --check: recorded by this engine) and end differently.
    let race = dir.join("premise.ndjson.race-1.ndjson");
    let in_order = dir.join("premise.ndjson.race-1.in-order.ndjson");
    for f in [&race, &in_order] {
        let out = replay_bin(&["--check", f.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let answers = |f: &std::path::Path| {
        explore::final_answers(
            &trace::parse(&std::fs::read_to_string(f).unwrap()).unwrap(),
            &explore::ENGINE,
        )
    };
    let key = (Subject::Session, "s1".to_owned());
    assert_ne!(answers(&race).get(&key), answers(&in_order).get(&key));
    assert_eq!(
        trace::parse(&std::fs::read_to_string(&race).unwrap())
            .unwrap()
            .steps
            .len(),
        2
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn usage_errors_exit_2() {
    let dir = temp("usage");
    let file = dir.join("t.ndjson");
    std::fs::write(
        &file,
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(RACE_TRACE))
            .unwrap(),
    )
    .unwrap();
    let f = file.to_str().unwrap();
    for args in [
        vec!["--explore", f],
        vec!["--explore", "-3", f],
        vec!["--explore", "10", "--check", f],
        vec!["--seed", "1", f],
        vec!["--explore", "10"],
    ] {
        assert_eq!(replay_bin(&args).status.code(), Some(2), "{args:?}");
    }
    std::fs::write(&file, "{\"format\":\"other\"}\n").unwrap();
    assert_eq!(replay_bin(&["--explore", "10", f]).status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

/// The committed race trace's orders do deliver its race: a late `added` (or `updated`, or the
/// page read before the delete) of the deleted question after its delete, in most orders, and
/// the question stays deleted in every one.
#[test]
fn the_race_trace_delivers_its_race_and_nothing_differs() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(RACE_TRACE);
    let parsed = trace::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let plan = explore::plan(&parsed);
    let arrivals = plan.arrivals();
    let names = |i: usize| {
        let input = &plan.inputs[i];
        let row = input.args.get(1).cloned().unwrap_or(Value::Null);
        let id = row["message_id"]
            .as_str()
            .or(row[0]["id"].as_str())
            .unwrap_or_default()
            .to_owned();
        (input.args[0].as_str().unwrap_or_default().to_owned(), id)
    };
    let delete = (0..plan.inputs.len())
        .find(|&i| names(i) == ("deleted".into(), "msg-9".into()))
        .expect("the delete");
    let late: Vec<usize> = (0..plan.inputs.len())
        .filter(|&i| i != delete && names(i).1 == "msg-9")
        .collect();
    assert_eq!(
        late.len(),
        4,
        "three events and a page of the deleted question"
    );
    let orders = orders() * 10;
    let mut raced = 0;
    for n in 0..orders {
        let seed = explore::order_seed(2026, n);
        let steps = explore::shuffled(&arrivals, seed, &explore::duplicates(seed, arrivals.len()));
        let first_delete = steps.iter().position(|s| s.input == delete).unwrap();
        if steps[first_delete..]
            .iter()
            .any(|s| late.contains(&s.input))
        {
            raced += 1;
        }
    }
    println!("{raced} of {orders} orders deliver msg-9 after its delete");
    assert!(raced > orders / 2, "{raced} of {orders}");
    let report = explore::explore(&parsed, orders, 2026, &explore::ENGINE);
    assert_eq!((report.differing_orders, report.refused), (0, 0));
    assert_eq!(report.pinned, 0, "nothing in it is ordered by arrival");
}
