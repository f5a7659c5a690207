//! Runs tests/fixtures/store_scenarios.json natively through `wire::store_api` over `serde_json`,
//! exactly as the wasm class runs it over JS values.
#![cfg(not(target_arch = "wasm32"))]

mod store_common;

use std::collections::HashMap;

use serde_json::{json, Value};
use task_projection::error::WireErrorKind;
use task_projection::rules::turn::CurrentTurn;
use task_projection::store::{Navigation, ProjectionStore, Reason};
use task_projection::wire::shape::{Node, Shape, SNAPSHOT};
use task_projection::wire::store_api::{self as api, Answer, CallError, Outcome};
use task_projection::wire::Json;
use task_projection::WireError;

use store_common::common::without_undefined;
use store_common::{load, resolve, Step};

type Store = ProjectionStore<Value>;

/// A summary's wire value as the store holds it.
fn payload(json: Json<'_>) -> Value {
    json.0.cloned().unwrap_or(Value::Null)
}

/// A pending-action answer: `None` (`undefined`) while unknown.
fn action(a: Option<Option<task_projection::rules::model::PendingAction>>) -> Option<Value> {
    a.map(|a| a.map_or(Value::Null, |a| json!(a.as_str())))
}

/// A clarification bundle as the JS class returns it.
fn bundle(b: Option<task_projection::store::Bundle<'_>>) -> Value {
    b.map_or(
        Value::Null,
        |b| json!({"pending_id": b.pending_id, "message_ids": b.message_ids}),
    )
}

/// A query's answer as the JS class returns it (`None`: `undefined`).
fn answer_json(answer: Answer<'_, Value>) -> Option<Value> {
    match answer {
        Answer::Action(a) => action(a),
        Answer::Turn(CurrentTurn::Unknown) => None,
        Answer::Turn(CurrentTurn::None) => Some(Value::Null),
        Answer::Turn(CurrentTurn::Turn(t)) => Some(json!(t)),
        Answer::Clarification(b) => b.map(bundle),
        Answer::Hidden(ids) => ids.map(|ids| json!(ids)),
        Answer::Permission(blocked) => blocked.map(|b| json!(b)),
        Answer::Summary(summary) => summary.map(|s| s.cloned().unwrap_or(Value::Null)),
        Answer::Owner(owner) => owner.map(|o| json!(o.unwrap_or_default())),
        Answer::Inbox(inbox) => Some(store_common::inbox_json(&inbox)),
    }
}

/// Runs one step through the library's dispatcher (`store_api::dispatch`, tickets
/// `ticket-1`, `ticket-2`, ...): `Ok((result, reason))`, where `result` is `None` for
/// `undefined`.
fn run(
    store: &mut Store,
    step: &Step,
    args: &[Option<Value>],
    ticket_seq: &mut u32,
) -> Result<(Option<Value>, Option<Reason>), WireError> {
    let arg = |i: usize| Json(args.get(i).and_then(Option::as_ref));
    let ticket = || {
        *ticket_seq += 1;
        format!("ticket-{ticket_seq}")
    };
    let outcome = match api::dispatch(store, &step.call, arg, payload, ticket) {
        Ok(outcome) => outcome,
        Err(CallError::Wire(error)) => return Err(error),
        Err(CallError::UnknownCall(call)) => panic!("unknown call {call}"),
        // A respond that may not start: the JS method throws this code (field `pendingId`).
        Err(CallError::Refused(refusal)) => {
            return Err(WireError::from(WireErrorKind::InvalidValue {
                field: "pendingId".into(),
                problem: refusal.as_str().into(),
            }))
        }
    };
    let reason = outcome.reason();
    let result = match outcome {
        Outcome::Token(token) => Some(json!(token)),
        Outcome::Selection(begun) => Some(json!({"ticket": begun.ticket, "reload": begun.reload})),
        Outcome::Settled(navigation, _) => Some(match navigation {
            Navigation::Session(id) => json!({"kind": "session", "sessionId": id}),
            Navigation::TaskOnly => json!({"kind": "task_only"}),
            Navigation::Inert => json!({"kind": "inert"}),
        }),
        Outcome::Answer(answer, _) => answer_json(answer),
        Outcome::Started(started) => {
            Some(json!({"attempt": started.attempt, "fresh": started.fresh}))
        }
        Outcome::Replied(replied) => Some(json!({
            "outcome": replied.outcome.as_str(),
            "applied": replied.applied,
            "reason": replied.stale.map(|s| s.as_str()),
        })),
        Outcome::Applied(_) | Outcome::Done => None,
    };
    Ok((result, reason))
}

fn check_case(case: &store_common::Case) -> Result<(), String> {
    let mut store = Store::new();
    let mut saved: HashMap<String, Value> = HashMap::new();
    let mut tickets = 0;
    for (n, step) in case.steps.iter().enumerate() {
        let at = format!("step {n} ({})", step.call);
        let args: Vec<Option<Value>> = step
            .args
            .iter()
            .map(|a| without_undefined(&resolve(a, &saved)))
            .collect();
        let before = store.digest();
        match (run(&mut store, step, &args, &mut tickets), &step.error) {
            (Err(error), Some(expected)) => {
                if error.code().as_str() != expected.code || error.field() != expected.field {
                    return Err(format!(
                        "{at}: expected {}/{}, got {}/{} ({error})",
                        expected.code,
                        expected.field,
                        error.code().as_str(),
                        error.field()
                    ));
                }
                if store.digest() != before {
                    return Err(format!("{at}: a rejected call changed the state"));
                }
            }
            (Err(error), None) => {
                return Err(format!(
                    "{at}: unexpected error {}: {error}",
                    error.code().as_str()
                ))
            }
            (Ok(_), Some(expected)) => {
                return Err(format!("{at}: expected error {}", expected.code))
            }
            (Ok((result, reason)), None) => {
                if let Some(name) = &step.save {
                    let value = match step.call.as_str() {
                        "beginSelection" => result.as_ref().and_then(|r| r.get("ticket")).cloned(),
                        _ => result.clone(),
                    };
                    saved.insert(name.clone(), value.unwrap_or(Value::Null));
                }
                if let Some(reload) = step.expect_reload {
                    let got = result
                        .as_ref()
                        .and_then(|r| r.get("reload"))
                        .and_then(Value::as_bool);
                    if got != Some(reload) {
                        return Err(format!("{at}: expected reload {reload}, got {got:?}"));
                    }
                }
                if let Some(expected) = &step.expect {
                    let expected = without_undefined(expected);
                    if expected != result {
                        return Err(format!("{at}: expected {expected:?}, got {result:?}"));
                    }
                }
                if let Some(code) = &step.reason {
                    let got = reason.map(Reason::code);
                    if got != Some(code.as_str()) {
                        return Err(format!("{at}: expected reason {code}, got {got:?}"));
                    }
                }
            }
        }
    }
    Ok(())
}

#[test]
fn every_store_scenario_case() {
    let file = load();
    let failures: Vec<String> = file
        .cases
        .iter()
        .filter_map(|case| {
            check_case(case)
                .err()
                .map(|why| format!("{}: {why}", case.name))
        })
        .collect();
    println!(
        "store scenarios: {} passed, {} failed",
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

/// Every query's answer for `id` as a session and as a task (unknown as `"$undefined"`).
fn all_answers(store: &Store, id: &str) -> Value {
    let known = |v: Option<Value>| v.unwrap_or_else(|| json!("$undefined"));
    json!({
        "sessionPendingAction": known(action(store.session_pending_action(id).0)),
        "currentTurnId": format!("{:?}", store.current_turn_id(id).0),
        "pendingClarification": known(store.pending_clarification(id).0.map(bundle)),
        "hiddenMessageIds": known(store.hidden_message_ids(id).0.map(|i| json!(i))),
        "hasPendingPermission": known(store.has_pending_permission(id).0.map(|b| json!(b))),
        "taskPendingAction": known(action(store.task_pending_action(id).0)),
        "taskStatusSummary": known(store.task_status_summary(id).0.map(|s| s.cloned().unwrap_or(Value::Null))),
        "pendingOwner": known(store.pending_owner(id, None).0.map(|o| json!(o.unwrap_or("")))),
        "explain": store.explain(id).to_json(),
        "explainOwner": store.explain_owner(id, None).to_json(),
    })
}

/// Every string in a step's arguments (the ids a case talks about, among other text).
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// SPEC §12 over every store scenario, after every step: the store's snapshot (as JSON text,
/// parsed back) hydrates into a store with the same digest, the same answers and explanations
/// for every id the case names, and the same snapshot again (a fixpoint: the state, the
/// removals, the rejections, the stream position and the answers all survive). And the snapshot
/// is the shape `src/wire/shape.rs` describes (`SNAPSHOT`, from which its TypeScript declaration
/// and the reader's schema come): no key the description lacks, and over all the steps every key
/// it lists written at least once.
#[test]
fn every_store_scenario_hydrates_equal_at_every_step() {
    let file = load();
    let payload = |p: &Value, out: &mut String| out.push_str(&p.to_string());
    let mut checked = 0usize;
    let mut written: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for case in &file.cases {
        let mut store = Store::new();
        let mut saved: HashMap<String, Value> = HashMap::new();
        let mut tickets = 0;
        let mut ids: Vec<String> = Vec::new();
        for (n, step) in case.steps.iter().enumerate() {
            let args: Vec<Option<Value>> = step
                .args
                .iter()
                .map(|a| without_undefined(&resolve(a, &saved)))
                .collect();
            for a in args.iter().flatten() {
                strings(a, &mut ids);
            }
            if let Ok((result, _)) = run(&mut store, step, &args, &mut tickets) {
                if let Some(name) = &step.save {
                    let value = match step.call.as_str() {
                        "beginSelection" => result.as_ref().and_then(|r| r.get("ticket")).cloned(),
                        _ => result.clone(),
                    };
                    saved.insert(name.clone(), value.unwrap_or(Value::Null));
                }
            }
            let text = api::dehydrate(&store, &Json::ABSENT, payload).unwrap();
            let parsed: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: step {n}: not JSON ({e}): {text}", case.name));
            if let Err(problem) = conforms(&parsed, &SNAPSHOT, "snapshot", &mut written) {
                panic!("{}: step {n}: {problem}\n{text}", case.name);
            }
            let hydrated: Store = api::hydrate(&Json::new(&parsed), &Json::ABSENT, payload_of)
                .unwrap_or_else(|e| panic!("{}: step {n}: {e}\n{text}", case.name));
            let at = format!("{}: step {n} ({})", case.name, step.call);
            assert_eq!(hydrated.digest(), store.digest(), "{at}: digest");
            assert_eq!(
                api::dehydrate(&hydrated, &Json::ABSENT, payload).unwrap(),
                text,
                "{at}: the snapshot of the hydrated store"
            );
            for id in &ids {
                assert_eq!(
                    all_answers(&hydrated, id),
                    all_answers(&store, id),
                    "{at}: {id}"
                );
            }
            checked += 1;
        }
    }
    println!(
        "hydrate round trips: {checked} steps of {} cases",
        file.cases.len()
    );
    assert!(checked > 500, "{checked}");
    // A session with a settled bundle (SPEC §13: the fixtures hold no respond): its snapshot
    // conforms to the description too, and writes `settled`.
    let mut store = Store::new();
    let call = |store: &mut Store, name: &str, args: Value| {
        let args: Vec<Value> = args.as_array().cloned().unwrap_or_default();
        api::dispatch(
            store,
            name,
            |i| Json(args.get(i)),
            self::payload,
            String::new,
        )
        .map(|_| ())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    };
    let at = |s: u32| format!("2026-12-06T12:00:{s:02}.000000000Z");
    call(
        &mut store,
        "applySessionList",
        json!(["t", [{"id": "s", "task_id": "t", "state": "RUNNING", "pending_action": "clarification", "pending_action_revision": {"epoch": "1", "sequence": 1}}]]),
    );
    call(
        &mut store,
        "applyTurnList",
        json!(["s", [{"id": "u", "session_id": "s", "started_at": at(1), "created_at": at(1)}]]),
    );
    call(
        &mut store,
        "applyMessagePage",
        json!(["s", [{"id": "m", "session_id": "s", "turn_id": "u", "type": "clarification_request", "metadata": {"pending_id": "p"}, "created_at": at(2)}]]),
    );
    call(&mut store, "respondStart", json!(["s", "p"]));
    call(
        &mut store,
        "respondReply",
        json!([1, {"status": 200, "body": {"claimed": true, "session": {"pending_action_revision": {"epoch": "1", "sequence": 2}}}}]),
    );
    let text = api::dehydrate(&store, &Json::ABSENT, payload).unwrap();
    let parsed: Value = serde_json::from_str(&text).unwrap();
    conforms(&parsed, &SNAPSHOT, "snapshot", &mut written).unwrap();
    assert!(text.contains(r#""settled":[["p","1",2]]"#), "{text}");
    let mut described = std::collections::BTreeSet::new();
    keys_of(&SNAPSHOT, "snapshot", &mut described);
    let never: Vec<&String> = described.difference(&written).collect();
    assert!(
        never.is_empty(),
        "keys src/wire/shape.rs describes that no snapshot wrote: {never:?}"
    );
}

/// Whether `value` (an object) has only keys `shape` describes, recursively; each key seen is
/// recorded as `path.key`.
fn conforms(
    value: &Value,
    shape: &Shape,
    path: &str,
    seen: &mut std::collections::BTreeSet<String>,
) -> Result<(), String> {
    let Value::Object(map) = value else {
        return Err(format!("{path}: not an object"));
    };
    for (key, field) in map {
        let Some(described) = shape.fields().find(|f| f.key == key) else {
            return Err(format!("{path}.{key}: not in src/wire/shape.rs"));
        };
        let at = format!("{path}.{key}");
        seen.insert(at.clone());
        conforms_node(field, &described.node, &at, seen)?;
    }
    Ok(())
}

fn conforms_node(
    value: &Value,
    node: &Node,
    path: &str,
    seen: &mut std::collections::BTreeSet<String>,
) -> Result<(), String> {
    match (node, value) {
        (_, Value::Null) => Ok(()),
        (Node::Object(shape), _) => conforms(value, shape, path, seen),
        (Node::Array(of), Value::Array(items)) => items
            .iter()
            .try_for_each(|item| conforms_node(item, of, &format!("{path}[]"), seen)),
        (Node::Array(_), _) => Err(format!("{path}: not an array")),
        // A kept summary is the caller's own object; `answers` is declared, not read back.
        (Node::Kept(_) | Node::Ignored, _) => Ok(()),
        (Node::Leaf, Value::Object(_)) => {
            Err(format!("{path}: an object where a leaf is described"))
        }
        (Node::Leaf, _) => Ok(()),
    }
}

/// Every key `shape` describes, as `path.key` (objects inside arrays as `path.key[]`).
fn keys_of(shape: &Shape, path: &str, out: &mut std::collections::BTreeSet<String>) {
    for field in shape.fields() {
        let at = format!("{path}.{}", field.key);
        out.insert(at.clone());
        let mut node = &field.node;
        let mut inner = at;
        while let Node::Array(of) = node {
            node = of;
            inner.push_str("[]");
        }
        if let Node::Object(shape) = node {
            keys_of(shape, &inner, out);
        }
    }
}

fn payload_of(json: Json<'_>) -> Value {
    json.0.cloned().unwrap_or(Value::Null)
}
