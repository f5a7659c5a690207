//! `ProjectionStore::explain` and `explain_owner`: each "why" they report is the rules' own
//! (the standing of every turn and pending request, the queries' reasons, the revision held) and
//! the rejection log names the inputs the store did not take, with their revisions. The JSON they
//! write parses and says the same.

use serde_json::{json, Value};
use task_projection::store::rejections::Input;
use task_projection::store::{ProjectionStore, Reason};
use task_projection::wire::{store_api as api, Json};

type Store = ProjectionStore<Value>;

const T: &str = "task-1";

fn at(s: u32) -> String {
    format!("2026-11-29T12:00:{s:02}Z")
}

fn rev(sequence: u64) -> Value {
    json!({"epoch": "1", "sequence": sequence})
}

fn session(id: &str, state: &str, action: Value, sequence: u64, primary: bool) -> Value {
    json!({"id": id, "task_id": T, "state": state, "is_primary": primary, "updated_at": at(0),
           "pending_action": action, "pending_action_revision": rev(sequence)})
}

fn turn(id: &str, s: u32, completed: bool, metadata: Value) -> Value {
    json!({"id": id, "session_id": "s1", "task_id": T, "started_at": at(s), "created_at": at(s),
           "updated_at": at(s), "completed_at": if completed { json!(at(s + 1)) } else { Value::Null },
           "metadata": metadata})
}

fn question(id: &str, turn: &str, pending: &str, total: u32, s: u32) -> Value {
    json!({"message_id": id, "session_id": "s1", "task_id": T, "turn_id": turn,
           "type": "clarification_request", "created_at": at(s), "updated_at": at(s),
           "metadata": {"pending_id": pending, "question_total": total}})
}

/// Task 1: s1 waits on a two-question bundle in its open turn, beside a completed turn (with an
/// old, superseded question), a lifecycle turn and an unpublished reservation; s2 runs.
fn loaded() -> Store {
    let mut store = Store::new();
    api::apply_session_list(
        &mut store,
        &Json::new(&json!(T)),
        &Json::new(&json!([
            session("s1", "WAITING_FOR_INPUT", json!("clarification"), 5, false),
            session("s2", "RUNNING", Value::Null, 2, true),
        ])),
    )
    .unwrap();
    let turns = json!([
        turn("turn-old", 1, true, json!({})),
        turn("turn-now", 2, false, json!({})),
        turn("turn-life", 9, false, json!({"lifecycle_only": true})),
        turn(
            "turn-held",
            9,
            false,
            json!({"prompt_dispatch_pending": true})
        ),
    ]);
    api::apply_turn_list(&mut store, &Json::new(&json!("s1")), &Json::new(&turns)).unwrap();
    let page = json!([
        question("q-old", "turn-old", "p-old", 1, 1),
        question("q1", "turn-now", "p-now", 2, 3),
        question("q2", "turn-now", "p-now", 2, 4),
    ]);
    api::apply_message_page(&mut store, &Json::new(&json!("s1")), &Json::new(&page)).unwrap();
    store
}

fn parsed(text: &str) -> Value {
    serde_json::from_str(text).expect("explain writes JSON")
}

#[test]
fn a_session_explanation_names_the_current_turn_the_bundle_and_why() {
    let store = loaded();
    let explained = store.explain("s1");
    assert_eq!(
        explained.current_turn.0.turn(),
        store.current_turn_id("s1").0.turn()
    );
    let json = parsed(&explained.to_json());
    assert_eq!(json["known"], true);
    assert_eq!(json["task_id"], T);
    assert_eq!(json["state"], "WAITING_FOR_INPUT");
    // The open turn outranks the newer-started completed one; the lifecycle turn and the
    // reservation were never candidates.
    assert_eq!(
        json["current_turn"],
        json!({"id": "turn-now", "known": true, "reason": "open_turn_outranks_completed"})
    );
    assert_eq!(json["turn_count"], 4);
    let standings: Vec<(&str, &str)> = json["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_str().unwrap(), t["standing"].as_str().unwrap()))
        .collect();
    assert!(
        standings.contains(&("turn-now", "current")),
        "{standings:?}"
    );
    assert!(standings.contains(&("turn-old", "outranked")));
    assert!(standings.contains(&("turn-life", "lifecycle_skipped")));
    assert!(standings.contains(&("turn-held", "unpublished_reservation")));
    let order: Vec<&str> = standings.iter().map(|s| s.0).collect();
    assert_eq!(
        order,
        ["turn-now", "turn-held", "turn-life", "turn-old"],
        "the current turn first, then the last held first"
    );
    assert_eq!(
        json["clarification"],
        json!({"known": true, "reason": "active_bundle", "pending_id": "p-now"})
    );
    let requests: Vec<(&str, &str)> = json["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), r["standing"].as_str().unwrap()))
        .collect();
    assert_eq!(
        requests,
        [
            ("q2", "in_bundle"),
            ("q1", "in_bundle"),
            ("q-old", "not_current_turn")
        ]
    );
    assert_eq!(
        json["pending_action"],
        json!({"value": "clarification", "known": true, "reason": "authoritative_projection"})
    );
    assert_eq!(
        json["projection"],
        json!({"known": true, "action": "clarification", "revision": rev(5)})
    );
    assert_eq!(json["rejected"], json!([]));
}

#[test]
fn rejected_inputs_are_listed_with_their_revisions_newest_first() {
    let mut store = loaded();
    // A late session event (sequence 3 < 5 held) and a stale list row (sequence 4).
    let late = json!({"session_id": "s1", "task_id": T, "state": "WAITING_FOR_INPUT",
                      "updated_at": at(0), "pending_action": null, "pending_action_revision": rev(3)});
    let reason = api::apply_session_event(&mut store, &Json::new(&late)).unwrap();
    assert_eq!(reason, Reason::OlderRevisionRejected);
    api::apply_session_list(
        &mut store,
        &Json::new(&json!(T)),
        &Json::new(&json!([session(
            "s1",
            "WAITING_FOR_INPUT",
            Value::Null,
            4,
            false
        )])),
    )
    .unwrap();
    // An older epoch on a message event.
    let mut answered = question("q1", "turn-now", "p-now", 2, 3);
    answered["metadata"]["status"] = json!("answered");
    answered["pending_action"] = Value::Null;
    answered["pending_action_revision"] = json!({"epoch": "0", "sequence": 9});
    api::apply_message_event(
        &mut store,
        &Json::new(&json!("updated")),
        &Json::new(&answered),
    )
    .unwrap();
    // The answers stand; the log is not part of the decision state.
    assert_eq!(
        store
            .session_pending_action("s1")
            .0
            .flatten()
            .map(|a| a.as_str()),
        Some("clarification")
    );
    let explained = store.explain("s1");
    let inputs: Vec<Input> = explained.rejected.iter().map(|r| r.input).collect();
    assert_eq!(
        inputs,
        [
            Input::Message(task_projection::store::MessageEventKind::Updated),
            Input::SessionList,
            Input::SessionEvent
        ]
    );
    let json = parsed(&explained.to_json());
    let rejected = json["rejected"].as_array().unwrap();
    assert_eq!(rejected[0]["detail"], "older_epoch");
    assert_eq!(rejected[0]["message_id"], "q1");
    assert_eq!(
        rejected[0]["revision"],
        json!({"epoch": "0", "sequence": 9})
    );
    assert_eq!(rejected[1]["reason"], "older_revision_rejected");
    assert_eq!(rejected[1]["detail"], "older_sequence");
    assert_eq!(rejected[1]["revision"], rev(4));
    assert_eq!(rejected[1]["held"], rev(5));
    assert_eq!(rejected[2]["input"], "session.updated");
    assert_eq!(rejected[2]["revision"], rev(3));
    // Another session's explanation lists none of them.
    assert_eq!(
        parsed(&store.explain("s2").to_json())["rejected"],
        json!([])
    );
}

#[test]
fn an_unknown_session_is_explained_as_unknown() {
    let store = Store::new();
    let json = parsed(&store.explain("nope\"\n").to_json());
    assert_eq!(json["session_id"], "nope\"\n", "ids are escaped");
    assert_eq!(json["known"], false);
    assert_eq!(json["current_turn"]["reason"], "awaiting_turn_list");
    assert_eq!(json["clarification"]["reason"], "awaiting_turn_list");
    assert_eq!(json["pending_action"]["reason"], "awaiting_session_list");
    assert_eq!(json["turn_count"], Value::Null);
    // Every answer is unknown, and the explanation names every input it waits for (SPEC §11).
    for answer in [
        "current_turn",
        "pending_action",
        "clarification",
        "permission",
    ] {
        assert_eq!(json[answer]["known"], false, "{answer}");
    }
    assert_eq!(json["permission"]["pending"], Value::Null);
    assert_eq!(
        json["missing"],
        json!([
            "awaiting_session_list",
            "awaiting_turn_list",
            "awaiting_message_page"
        ])
    );
}

#[test]
fn an_explanation_names_what_each_answer_still_awaits() {
    let mut store = Store::new();
    let list = json!([{"id": "s1", "task_id": T, "state": "RUNNING", "pending_action": null}]);
    api::apply_session_list(&mut store, &Json::new(&json!(T)), &Json::new(&list)).unwrap();
    let turns =
        json!([{"id": "turn-1", "session_id": "s1", "started_at": at(1), "created_at": at(1)}]);
    api::apply_turn_list(&mut store, &Json::new(&json!("s1")), &Json::new(&turns)).unwrap();
    let json = parsed(&store.explain("s1").to_json());
    assert_eq!(json["missing"], json!(["awaiting_message_page"]));
    assert_eq!(json["pending_action"]["known"], true);
    assert_eq!(json["pending_action"]["value"], Value::Null);
    assert_eq!(json["current_turn"]["known"], false);
    assert_eq!(json["current_turn"]["reason"], "awaiting_message_page");
    assert_eq!(json["clarification"]["reason"], "awaiting_message_page");
    assert_eq!(json["permission"]["reason"], "awaiting_message_page");
    api::apply_message_page(&mut store, &Json::new(&json!("s1")), &Json::new(&json!([]))).unwrap();
    let json = parsed(&store.explain("s1").to_json());
    assert_eq!(json["missing"], json!([]));
    assert_eq!(json["current_turn"]["id"], "turn-1");
    assert_eq!(
        json["permission"],
        json!({"pending": false, "known": true, "reason": "no_pending_permission"})
    );
    // The owner: the task is known from its session list.
    let owner = parsed(&store.explain_owner(T, None).to_json());
    assert_eq!(owner["missing"], json!([]));
    assert_eq!(owner["owner"]["known"], true);
    let unknown = parsed(&store.explain_owner("other", None).to_json());
    assert_eq!(
        unknown["missing"],
        json!(["awaiting_task", "awaiting_session_list"])
    );
}

#[test]
fn a_quarantined_session_explains_every_turn_as_quarantined() {
    let mut store = loaded();
    let done =
        json!({"session_id": "s1", "task_id": T, "state": "COMPLETED", "updated_at": at(30)});
    api::apply_session_event(&mut store, &Json::new(&done)).unwrap();
    let json = parsed(&store.explain("s1").to_json());
    assert_eq!(json["current_turn"]["reason"], "session_not_input_capable");
    assert_eq!(json["current_turn"]["id"], Value::Null);
    let quarantined = json["turns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["standing"] == "quarantined")
        .count();
    assert_eq!(quarantined, 2, "the two eligible turns");
    assert_eq!(json["clarification"]["reason"], "no_current_turn");
    assert!(json["requests"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["standing"] == "discovery_closed"));
}

#[test]
fn an_owner_explanation_names_the_owner_the_sessions_and_stale_summaries() {
    let mut store = loaded();
    let payload = |j: Json<'_>| j.0.cloned().unwrap_or(Value::Null);
    let summary = |revision: u64, action: Value| json!({"task_id": T, "status_summary": {"revision": revision, "pending_action": action}});
    api::apply_status_summary_event(
        &mut store,
        &Json::new(&summary(7, json!("clarification"))),
        payload,
    )
    .unwrap();
    let late =
        api::apply_status_summary_event(&mut store, &Json::new(&summary(6, Value::Null)), payload)
            .unwrap();
    assert_eq!(late, Reason::OlderRevisionRejected);
    let explained = store.explain_owner(T, Some("s2"));
    assert_eq!(explained.owner.0, store.pending_owner(T, Some("s2")).0);
    let json = parsed(&explained.to_json());
    assert_eq!(
        json["owner"],
        json!({"session_id": "s1", "known": true, "reason": "pending_owner"})
    );
    assert_eq!(
        json["pending_action"],
        json!({"value": "clarification", "known": true, "reason": "status_summary_action"})
    );
    assert_eq!(json["summary_revision"], 7);
    assert_eq!(
        json["preferred"],
        json!({"session_id": "s2", "eligible": true})
    );
    assert_eq!(
        json["sessions"],
        json!([
            {"id": "s1", "state": "WAITING_FOR_INPUT", "is_primary": false, "pending_action": "clarification"},
            {"id": "s2", "state": "RUNNING", "is_primary": true, "pending_action": null},
        ])
    );
    let rejected = json["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0]["input"], "task.status_summary.updated");
    assert_eq!(rejected[0]["revision"], 6);
    assert_eq!(rejected[0]["held"], 7);
    assert_eq!(rejected[0]["detail"], Value::Null);

    let unknown = parsed(&store.explain_owner("t-none", None).to_json());
    assert_eq!(unknown["known"], false);
    assert_eq!(unknown["owner"]["reason"], "awaiting_task");
    assert_eq!(unknown["sessions"], Value::Null);
    assert_eq!(unknown["preferred"], Value::Null);
}

#[test]
fn the_log_keeps_the_newest_rejections_only() {
    let mut store = loaded();
    for sequence in 0..100 {
        let late = json!({"session_id": "s1", "task_id": T, "pending_action": null,
                          "pending_action_revision": rev(sequence % 5)});
        api::apply_session_event(&mut store, &Json::new(&late)).unwrap();
    }
    let explained = store.explain("s1");
    assert_eq!(explained.rejected.len(), 64);
    let newest = parsed(&explained.to_json())["rejected"][0]["revision"].clone();
    assert_eq!(newest, rev(99 % 5));
    store.clear_rejections();
    assert!(store.explain("s1").rejected.is_empty());
}
