//! A task's version moves whenever one of its answers can: regressions of the two cases the
//! `store` fuzz target found (fuzz/regressions/store/moved-session-*.json), where a session given
//! to a second task, or removed on behalf of a removed task, changed the first task's answers
//! silently.

use serde_json::{json, Value};
use task_projection::store::ProjectionStore;
use task_projection::wire::{store_api as api, Json};

type Store = ProjectionStore<Value>;

fn list(store: &mut Store, task: &str, sessions: Value) {
    api::apply_session_list(store, &Json::new(&json!(task)), &Json::new(&sessions)).unwrap();
}

fn waiting(id: &str) -> Value {
    json!({"id": id, "state": "WAITING_FOR_INPUT", "pending_action": "clarification",
           "pending_action_revision": {"epoch": "1", "sequence": 2}})
}

#[test]
fn a_session_listed_by_another_task_touches_the_task_it_left() {
    let mut store = Store::new();
    list(&mut store, "t0", json!([waiting("s2")]));
    assert_eq!(
        store
            .task_pending_action("t0")
            .0
            .flatten()
            .map(|a| a.as_str()),
        Some("clarification")
    );
    let before = store.task_version("t0");
    store.set_change_tracking(true);
    list(&mut store, "t2", json!([{"id": "s2"}]));
    let changes = store.take_changes();
    assert_ne!(
        store.task_version("t0"),
        before,
        "t0's answers may have changed"
    );
    assert!(changes.tasks.iter().any(|t| &**t == "t0"), "{changes:?}");
}

#[test]
fn removing_a_session_touches_its_task() {
    let mut store = Store::new();
    list(&mut store, "t0", json!([waiting("s2")]));
    api::remove_task(&mut store, &Json::new(&json!("t1"))).unwrap();
    let before = store.task_version("t0");
    store.set_change_tracking(true);
    let event = json!({"id": "turn-1", "session_id": "s2", "task_id": "t1",
                       "started_at": "2026-11-29T12:00:00Z", "created_at": "2026-11-29T12:00:00Z"});
    api::apply_turn_event(&mut store, &Json::new(&event)).unwrap();
    let (action, _) = store.task_pending_action("t0");
    if action == Some(None) {
        // The session went with the removed task: t0 must have been told.
        assert_ne!(store.task_version("t0"), before);
        assert!(store.take_changes().tasks.iter().any(|t| &**t == "t0"));
    }
}

#[test]
fn a_summary_event_that_makes_a_task_known_touches_it() {
    let mut store = Store::new();
    list(&mut store, "t0", json!([waiting("s1")]));
    let before = store.task_version("t0");
    let (action_before, _) = store.task_pending_action("t0");
    store.set_change_tracking(true);
    let event = json!({"task_id": "t0"});
    api::apply_status_summary_event(&mut store, &Json::new(&event), |v| {
        v.0.cloned().unwrap_or(Value::Null)
    })
    .unwrap();
    let (action_after, _) = store.task_pending_action("t0");
    if action_after != action_before {
        assert_ne!(store.task_version("t0"), before);
        assert!(store.take_changes().tasks.iter().any(|t| &**t == "t0"));
    }
}
