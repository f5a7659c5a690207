//! Traces (docs/trace-format.md): every store scenario recorded natively, then replayed, gives
//! the recorded answers at every step; the ring bound holds and notes its drops; no message
//! content is recorded; `task-projection-replay --check` passes a trace and fails a tampered one.
#![cfg(not(target_arch = "wasm32"))]

mod store_common;

use std::collections::HashMap;

use serde_json::{json, Value};
use task_projection::store::ProjectionStore;
use task_projection::trace::{self, Recorder};

use store_common::{args_of, load, Case, INPUTS};

/// Records `case`'s inputs with one recorder per entry of `always` (`true`: without the version
/// shortcut), each trace from a fresh store: one at the start and one after each `renew`;
/// `dispose` ends a trace, and what follows it until `renew` (settling inert) is not recorded.
/// `tests/js/trace.test.mjs` drives the package the same way. Per recorder: the traces' texts
/// and how many inputs each holds.
fn record_case_with(case: &Case, max_bytes: usize, always: &[bool]) -> Vec<Vec<(String, usize)>> {
    let new = |store: &ProjectionStore<Value>| -> Vec<Recorder> {
        always
            .iter()
            .map(|&a| {
                let r = Recorder::new(max_bytes, store);
                if a {
                    r.recomputing_always()
                } else {
                    r
                }
            })
            .collect()
    };
    let mut store = ProjectionStore::<Value>::new();
    let mut recorders = new(&store);
    let mut out: Vec<Vec<(String, usize)>> = always.iter().map(|_| Vec::new()).collect();
    let mut saved: HashMap<String, Value> = HashMap::new();
    let mut inputs = 0;
    let mut disposed = false;
    for (n, step) in case.steps.iter().enumerate() {
        if step.call == "dispose" || step.call == "renew" {
            if !disposed {
                for (traces, r) in out.iter_mut().zip(&recorders) {
                    traces.push((r.text(), inputs));
                }
            }
            disposed = step.call == "dispose";
            store = ProjectionStore::new();
            recorders = new(&store);
            inputs = 0;
            continue;
        }
        if disposed || !INPUTS.contains(&step.call.as_str()) {
            continue;
        }
        let args = args_of(step, &saved);
        let time = n as f64 * 1.5;
        match trace::apply(&mut store, &step.call, &args, None) {
            Ok(applied) => {
                inputs += 1;
                for r in &mut recorders {
                    trace::note(r, &store, time, &step.call, &args, &applied).unwrap();
                }
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
        for (traces, r) in out.iter_mut().zip(&recorders) {
            traces.push((r.text(), inputs));
        }
    }
    out
}

/// [`record_case_with`] with one recorder.
fn record_case(case: &Case, max_bytes: usize) -> Vec<(String, usize)> {
    record_case_with(case, max_bytes, &[false]).remove(0)
}

#[test]
fn every_store_scenario_replays_with_the_recorded_answers() {
    let file = load();
    let mut steps = 0;
    let mut answered = 0;
    for case in &file.cases {
        for (text, inputs) in record_case(case, 1 << 24) {
            let parsed = trace::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", case.name));
            assert!(parsed.complete(), "{}", case.name);
            assert_eq!(
                parsed.steps.len(),
                inputs,
                "{}: one line per input",
                case.name
            );
            for replayed in trace::replay(&parsed) {
                assert!(
                    replayed.same(),
                    "{}: step {} ({}) replays differently: {replayed:?}",
                    case.name,
                    replayed.step,
                    replayed.call
                );
                steps += 1;
                if replayed.answers.as_object().is_some_and(|a| !a.is_empty()) {
                    answered += 1;
                }
            }
        }
    }
    println!("{steps} steps replayed, {answered} with changed answers");
    // The comparison has teeth: most inputs change some answer.
    assert!(
        steps > 300 && answered > steps / 2,
        "{steps} steps, {answered} with answers"
    );
}

#[test]
fn a_changed_answer_in_the_trace_is_a_difference() {
    let case = &load().cases[0];
    let (text, _) = record_case(case, 1 << 24).remove(0);
    let mut parsed = trace::parse(&text).unwrap();
    let step = parsed
        .steps
        .iter_mut()
        .find(|s| s.answers.as_object().is_some_and(|a| !a.is_empty()))
        .expect("a step with answers");
    step.answers = json!({});
    assert!(trace::replay(&parsed).iter().any(|r| !r.same()));
}

/// A session with a clarification question whose text, answer options and summary prose must
/// not be recorded.
fn secret_inputs() -> Vec<(&'static str, Vec<Value>)> {
    let at = |s: u32| format!("2026-11-29T12:00:{s:02}.000000000Z");
    vec![
        (
            "applySessionList",
            vec![
                json!("task-1"),
                json!([{
                    "id": "sess-1", "task_id": "task-1", "state": "WAITING_FOR_INPUT", "is_primary": true,
                    "started_at": at(0), "updated_at": at(1), "title": "SECRET-TITLE",
                    "pending_action": "clarification", "pending_action_revision": {"epoch": "1", "sequence": 2},
                }]),
            ],
        ),
        (
            "applyTurnList",
            vec![
                json!("sess-1"),
                json!([{
                    "id": "turn-1", "session_id": "sess-1", "started_at": at(1), "created_at": at(1),
                    "completed_at": null, "prompt": "SECRET-PROMPT", "metadata": {"note": "SECRET-NOTE"},
                }]),
            ],
        ),
        (
            "applyMessageEvent",
            vec![
                json!("added"),
                json!({
                    "id": "m-1", "session_id": "sess-1", "task_id": "task-1", "turn_id": "turn-1",
                    "type": "clarification_request", "content": "SECRET-QUESTION?",
                    "metadata": {"pending_id": "p-1", "question_total": 1, "status": "pending",
                                 "questions": [{"text": "SECRET-OPTION"}]},
                    "created_at": at(2), "updated_at": at(2),
                    "pending_action": "clarification", "pending_action_revision": {"epoch": "1", "sequence": 3},
                }),
            ],
        ),
        (
            "applyStatusSummaryEvent",
            vec![json!({
                "task_id": "task-1",
                "status_summary": {"revision": 4, "pending_action": "clarification", "summary": "SECRET-SUMMARY"},
            })],
        ),
        (
            "settleSelection",
            vec![json!("no-ticket"), json!({"error": "SECRET-ERROR"})],
        ),
    ]
}

#[test]
fn message_content_is_never_recorded() {
    let mut store = ProjectionStore::<Value>::new();
    let mut recorder = Recorder::new(1 << 20, &store);
    for (i, (call, args)) in secret_inputs().into_iter().enumerate() {
        trace::record(&mut recorder, &mut store, i as f64, call, &args).unwrap();
    }
    let text = recorder.text();
    assert!(!text.contains("SECRET"), "{text}");
    // The ids and the fields the rules read are there.
    for kept in [
        "\"m-1\"",
        "\"p-1\"",
        "\"turn-1\"",
        "\"question_total\":1",
        "\"revision\":4",
        "\"error\":true",
    ] {
        assert!(text.contains(kept), "{kept} missing from {text}");
    }
    // And what was kept replays to the same answers.
    let parsed = trace::parse(&text).unwrap();
    assert!(trace::replay(&parsed).iter().all(|r| r.same()));
}

#[test]
fn the_ring_keeps_the_newest_lines_within_max_bytes_and_counts_the_drops() {
    let case = load()
        .cases
        .into_iter()
        .max_by_key(|c| c.steps.len())
        .unwrap();
    let (full, inputs) = record_case(&case, 1 << 24).remove(0);
    let max = trace::MIN_BYTES as usize;
    assert!(
        full.len() > max,
        "the case records more than the smallest ring"
    );
    let (text, _) = record_case(&case, max).remove(0);
    assert!(text.len() <= max, "{} bytes over {max}", text.len());
    let parsed = trace::parse(&text).unwrap();
    assert!(parsed.dropped > 0 && !parsed.complete());
    assert_eq!(parsed.dropped as usize + parsed.steps.len(), inputs);
    assert_eq!(parsed.header["steps"], json!(inputs));
    // The lines kept are the newest, unchanged.
    assert!(full.ends_with(text.split_once('\n').unwrap().1));
}

#[test]
fn bad_options_are_typed_errors() {
    use task_projection::wire::Json;
    let ok = |v: Value| trace::options(&Json::new(&v));
    assert_eq!(
        trace::options(&Json::ABSENT),
        Ok(trace::DEFAULT_BYTES as usize)
    );
    assert_eq!(ok(json!({"maxBytes": 4096})), Ok(4096));
    for (bad, code) in [
        (json!({"maxBytes": "4096"}), "invalid_type"),
        (json!({"maxBytes": 0}), "invalid_value"),
        (json!({"maxBytes": 1.5}), "invalid_value"),
        (json!({"maxBytes": -4096}), "invalid_value"),
        (json!({"maxBytes": 1u64 << 40}), "invalid_value"),
        (json!(7), "invalid_type"),
    ] {
        let error = ok(bad.clone()).unwrap_err();
        assert_eq!(error.code().as_str(), code, "{bad}");
        assert!(error.field().starts_with("options"), "{bad}");
    }
}

fn replay_bin(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_task-projection-replay"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_replay_command_checks_and_fails_on_a_tampered_trace() {
    let dir = std::env::temp_dir().join(format!("trace-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let case = load()
        .cases
        .into_iter()
        .max_by_key(|c| c.steps.len())
        .unwrap();
    let (text, _) = record_case(&case, 1 << 24).remove(0);
    let good = dir.join("good.ndjson");
    std::fs::write(&good, &text).unwrap();
    let out = replay_bin(&["--check", good.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("#1 "), "{stdout}");

    // One recorded answer changed: --check exits 1 naming the step.
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let (at, tampered) = lines
        .iter()
        .enumerate()
        .skip(1)
        .find_map(|(i, l)| {
            l.contains("\"pendingAction\":\"clarification\"").then(|| {
                (
                    i,
                    l.replacen(
                        "\"pendingAction\":\"clarification\"",
                        "\"pendingAction\":null",
                        1,
                    ),
                )
            })
        })
        .expect("a recorded clarification");
    lines[at] = tampered;
    let bad = dir.join("bad.ndjson");
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let out = replay_bin(&["--check", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("(line {})", at + 1)), "{stderr}");
    // Without --check it replays and marks the step.
    let out = replay_bin(&[bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("differs from the recording"));

    // A malformed line is a usage/parse error naming it.
    lines[2] = "{not json".into();
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let out = replay_bin(&[bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 3:"));
    // So are no file and an incomplete trace under --check.
    assert_eq!(replay_bin(&[]).status.code(), Some(2));
    let (short, _) = record_case(&case, trace::MIN_BYTES as usize).remove(0);
    std::fs::write(&bad, short).unwrap();
    let out = replay_bin(&["--check", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("incomplete"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn answers_only_when_the_version_moved_are_the_answers_of_a_full_recomputation() {
    let mut lines = 0;
    for case in &load().cases {
        let [shortcut, full] =
            <[_; 2]>::try_from(record_case_with(case, 1 << 24, &[false, true])).unwrap();
        assert_eq!(shortcut, full, "{}", case.name);
        lines += shortcut.iter().map(|(_, inputs)| inputs).sum::<usize>();
    }
    assert!(lines > 300, "{lines} lines compared");
}

/// `tests/js/trace.test.mjs` runs this (`TRACE_CROSS_OUT=<file> cargo test --test trace_replay --
/// --ignored native_traces`): the native traces of every store scenario, which it compares line
/// by line with the ones the package records in Node.
#[test]
#[ignore = "run by tests/js/trace.test.mjs"]
fn native_traces_of_every_store_scenario_for_the_js_cross_check() {
    let out = std::env::var("TRACE_CROSS_OUT").expect("TRACE_CROSS_OUT: where to write the traces");
    let traces: serde_json::Map<String, Value> = load()
        .cases
        .iter()
        .map(|case| {
            let texts: Vec<Value> = record_case(case, 1 << 24)
                .into_iter()
                .map(|(t, _)| json!(t))
                .collect();
            (case.name.clone(), Value::Array(texts))
        })
        .collect();
    std::fs::write(out, serde_json::to_string(&traces).unwrap()).unwrap();
}

/// The committed traces (tests/fixtures/traces/: one recorded in Node by the package, one race
/// recorded natively; docs/trace-format.md says how to record them again) replay natively with
/// the recorded answers: an engine change that alters what the store answers fails here.
#[test]
fn the_committed_node_traces_replay_with_check() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/traces");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("ndjson") {
            continue;
        }
        let parsed = trace::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(parsed.complete(), "{}", path.display());
        assert!(parsed.steps.len() >= 5, "{}", path.display());
        let out = replay_bin(&["--check", path.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        checked += 1;
    }
    assert!(checked >= 1, "no trace in {}", dir.display());
}
