//! Runs tests/fixtures/scenarios.json natively through the decoding API (`wire::api`) over
//! `serde_json`, exactly as the wasm binding runs it over JS values.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::cmp::Ordering;

use serde_json::{json, Value};
use task_projection::rules::summary::FetchedSummary;
use task_projection::rules::turn::CurrentTurn;
use task_projection::wire::api::{self, Selection};
use task_projection::wire::Json;
use task_projection::WireError;

use common::{id_of, load, position_of, without_undefined, Case, Expect};

/// A result: a JSON value (`None` = undefined), indices into `args[0]`, or an index.
enum Outcome {
    Value(Option<Value>),
    Index(Option<usize>),
    Indices(Vec<usize>),
}

fn action(a: Option<task_projection::rules::model::PendingAction>) -> Value {
    a.map_or(Value::Null, |a| Value::String(a.as_str().into()))
}

fn run(case: &Case, args: &[Option<Value>]) -> Result<Outcome, WireError> {
    let arg = |i: usize| Json(args.get(i).and_then(Option::as_ref));
    let value = |v: Value| Ok(Outcome::Value(Some(v)));
    match case.call.as_str() {
        "currentTurnId" => Ok(Outcome::Value(
            match api::current_turn_id(&arg(0), &arg(1))? {
                CurrentTurn::Unknown => None,
                CurrentTurn::None => Some(Value::Null),
                CurrentTurn::Turn(id) => Some(Value::String(id)),
            },
        )),
        "visibleTurnHistory" => Ok(Outcome::Indices(api::visible_turn_history(&arg(0))?)),
        "findPendingClarification" => Ok(Outcome::Index(api::find_pending_clarification(
            &arg(0),
            &arg(1),
        )?)),
        "pendingClarificationBundle" => Ok(Outcome::Indices(api::pending_clarification_bundle(
            &arg(0),
            &arg(1),
        )?)),
        "visibleTranscriptMessages" => Ok(Outcome::Indices(api::visible_transcript_messages(
            &arg(0),
            &arg(1),
        )?)),
        "hasPendingPermission" => value(json!(api::has_pending_permission(&arg(0))?)),
        "sessionPendingAction" => value(action(api::session_pending_action(&arg(0))?)),
        "taskPendingAction" => value(action(api::task_pending_action(&arg(0))?)),
        "effectiveTaskPendingAction" => value(action(api::effective_task_pending_action(&arg(0))?)),
        "compareRevisions" => value(json!(match api::compare_revisions_of(&arg(0), &arg(1))? {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        })),
        "canReplaceRevision" => value(json!(api::can_replace_revision(&arg(0), &arg(1))?)),
        "mergePendingProjection" => {
            let merged = api::merge_pending_projection(&arg(0), &arg(1))?;
            let mut out = serde_json::Map::new();
            if let Some(a) = merged.action {
                out.insert("pending_action".into(), action(a));
            }
            if let Some(r) = merged.revision {
                out.insert(
                    "pending_action_revision".into(),
                    json!({"epoch": r.epoch, "sequence": r.sequence}),
                );
            }
            value(Value::Object(out))
        }
        "resolveTaskSessionId" => value(json!(api::resolve_task_session_id(&arg(0))?)),
        "selectionOutcome" => value(match api::selection_outcome(&arg(0))? {
            Selection::Session(id) => json!({"kind": "session", "sessionId": id}),
            Selection::TaskOnly => json!({"kind": "task_only"}),
            Selection::Inert => json!({"kind": "inert"}),
        }),
        "isNewerStatusSummary" => value(json!(api::is_newer_status_summary(&arg(0), &arg(1))?)),
        "mergeFetchedStatusSummary" => {
            let input = args.first().and_then(Option::as_ref);
            let pick = |v: Option<&Value>| v.cloned().unwrap_or(Value::Null);
            value(match api::merge_fetched_status_summary(&arg(0))? {
                FetchedSummary::KeepHeld => pick(input.and_then(|i| i.get("held"))),
                FetchedSummary::TakeResponse => pick(
                    input
                        .and_then(|i| i.get("response"))
                        .and_then(|r| r.get("status_summary")),
                ),
                FetchedSummary::Drop => Value::Null,
            })
        }
        "normalizeStartPolicy" => value(json!(api::normalize_start(&arg(0)).as_str())),
        "normalizeEndPolicy" => value(json!(api::normalize_end(&arg(0)).as_str())),
        other => panic!("{}: unknown call {other}", case.name),
    }
}

fn check(case: &Case) -> Result<(), String> {
    let args: Vec<Option<Value>> = case.args.iter().map(without_undefined).collect();
    let raw_args = &case.args;
    let outcome = run(case, &args);
    let ids = |indices: &[usize]| -> Vec<String> {
        indices
            .iter()
            .map(|&i| {
                raw_args[0]
                    .as_array()
                    .and_then(|a| a.get(i))
                    .and_then(id_of)
                    .unwrap_or("?")
                    .to_owned()
            })
            .collect()
    };
    match (case.expectation(), outcome) {
        (Expect::Error(expected), Err(error)) => {
            let message = error.to_string();
            if error.code().as_str() != expected.code || error.field() != expected.field {
                return Err(format!(
                    "expected error {}/{}, got {}/{} ({message})",
                    expected.code,
                    expected.field,
                    error.code().as_str(),
                    error.field()
                ));
            }
            if !message.contains(&expected.field) {
                return Err(format!(
                    "error message {message:?} does not name {}",
                    expected.field
                ));
            }
            Ok(())
        }
        (_, Err(error)) => Err(format!(
            "unexpected error {}: {error}",
            error.code().as_str()
        )),
        (Expect::Error(expected), Ok(_)) => {
            Err(format!("expected error {}, got a result", expected.code))
        }
        (Expect::Value(expected), Ok(Outcome::Value(got))) => {
            let expected = without_undefined(expected);
            (expected == got)
                .then_some(())
                .ok_or(format!("expected {expected:?}, got {got:?}"))
        }
        (Expect::Message(expected), Ok(Outcome::Index(got))) => {
            let expected_index = expected.map(|id| position_of(raw_args, id));
            match (expected_index, got) {
                (None, None) => Ok(()),
                (Some(Some(e)), Some(g)) if e == g => Ok(()),
                (e, g) => Err(format!(
                    "expected message {expected:?} (index {e:?}), got index {g:?} ({:?})",
                    g.map(|g| ids(&[g]))
                )),
            }
        }
        (Expect::Messages(expected), Ok(Outcome::Indices(got))) => {
            let want: Vec<Option<usize>> = expected
                .iter()
                .map(|id| position_of(raw_args, id))
                .collect();
            let got_some: Vec<Option<usize>> = got.iter().copied().map(Some).collect();
            (want == got_some)
                .then_some(())
                .ok_or(format!("expected {expected:?}, got {:?}", ids(&got)))
        }
        _ => Err("expectation kind does not fit the call".into()),
    }
}

#[test]
fn every_scenario_case() {
    let file = load();
    let mut failures = Vec::new();
    for case in &file.cases {
        if let Err(why) = check(case) {
            failures.push(format!("{}: {why}", case.name));
        }
    }
    println!(
        "scenarios: {} passed, {} failed",
        file.cases.len() - failures.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_public_scenario_1_to_54_is_encoded() {
    let file = load();
    let names: Vec<&str> = file.cases.iter().map(|c| c.name.as_str()).collect();
    for n in 1..=54 {
        let prefix = format!("s{n:02}");
        assert!(
            names.iter().any(|name| name.starts_with(&prefix)),
            "scenario {n} has no case"
        );
    }
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "case names are unique");
}
