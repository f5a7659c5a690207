//! Another page's snapshot merged into the open store (SPEC §12, issue 43 item 3): each part
//! ordered against what is held by its input's own rule, the stream position moved back only,
//! a removal final, the user's settled answers never reopened. The property over random
//! histories is `merging_another_pages_snapshot_anywhere_converges` (tests/store_convergence.rs);
//! these are its cases, and the regression it found.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::{json, Value};
use task_projection::store::{ProjectionStore, Reason};
use task_projection::wire::{store_api as api, Json};

type Store = ProjectionStore<Value>;

fn call(store: &mut Store, name: &str, args: Value) -> Reason {
    let args = args.as_array().cloned().unwrap_or_default();
    let outcome = api::dispatch(
        store,
        name,
        |i| args.get(i).map_or(Json::ABSENT, Json::new),
        |j: Json<'_>| j.0.cloned().unwrap_or(Value::Null),
        || "ticket".to_owned(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    outcome.reason().unwrap_or(Reason::Applied)
}

fn snapshot(store: &Store, options: Value) -> Value {
    let text = api::dehydrate(
        store,
        &if options.is_null() {
            Json::ABSENT
        } else {
            Json::new(&options)
        },
        |p: &Value, out: &mut String| out.push_str(&p.to_string()),
    )
    .expect("dehydrate");
    serde_json::from_str(&text).expect("JSON")
}

fn merge(store: &mut Store, snapshot: &Value) -> Reason {
    api::merge(store, &Json::new(snapshot), |j: Json<'_>| {
        j.0.cloned().unwrap_or(Value::Null)
    })
    .expect("a snapshot merges")
}

fn at(second: u32) -> String {
    format!("2026-11-29T12:00:{second:02}.000000000Z")
}

fn session(task: &str, id: &str, state: &str, second: u32, action: Value, sequence: u64) -> Value {
    json!({"id": id, "task_id": task, "state": state, "updated_at": at(second), "is_primary": true,
           "pending_action": action, "pending_action_revision": {"epoch": "7", "sequence": sequence}})
}

fn question(session: &str, id: &str, pending: &str, second: u32, status: &str) -> Value {
    json!({"id": id, "session_id": session, "turn_id": format!("turn-{session}"), "author_type": "agent",
           "type": "clarification_request", "created_at": at(second), "updated_at": at(second),
           "metadata": {"pending_id": pending, "question_index": 0, "question_total": 1, "status": status}})
}

/// A store that read task `task` (one session waiting on a question) at `sequence`.
fn reader(task: &str, sess: &str, sequence: u64) -> Store {
    let mut store = Store::new();
    call(
        &mut store,
        "applySessionList",
        json!([
            task,
            [session(
                task,
                sess,
                "WAITING_FOR_INPUT",
                10,
                json!("clarification"),
                sequence
            )]
        ]),
    );
    call(
        &mut store,
        "applyTurnList",
        json!([sess, [{"id": format!("turn-{sess}"), "session_id": sess, "started_at": at(1), "updated_at": at(1)}]]),
    );
    call(
        &mut store,
        "applyMessagePage",
        json!([
            sess,
            [question(
                sess,
                &format!("q-{sess}"),
                &format!("p-{sess}"),
                5,
                "pending"
            )]
        ]),
    );
    store
}

/// A page's read of task-a at revision 4, and an open store that read the same and has since seen
/// the session running at revision 6.
fn moved_on() -> (Store, Store) {
    let old = reader("task-a", "sess-a", 4);
    let mut open = reader("task-a", "sess-a", 4);
    call(
        &mut open,
        "applySessionEvent",
        json!([session("task-a", "sess-a", "RUNNING", 20, Value::Null, 6)]),
    );
    (old, open)
}

fn pending_id(store: &Store, sess: &str) -> Option<String> {
    store
        .pending_clarification(sess)
        .0
        .flatten()
        .and_then(|b| b.pending_id.map(str::to_owned))
}

#[test]
fn a_later_pages_snapshot_answers_for_its_task_at_once() {
    let mut open = reader("task-a", "sess-a", 3);
    let page = reader("task-b", "sess-b", 4);
    assert_eq!(pending_id(&open, "sess-b"), None, "not held before");
    let reason = merge(&mut open, &snapshot(&page, json!({"tasks": ["task-b"]})));
    assert_eq!(reason, Reason::Applied);
    assert_eq!(pending_id(&open, "sess-b").as_deref(), Some("p-sess-b"));
    assert_eq!(
        pending_id(&open, "sess-a").as_deref(),
        Some("p-sess-a"),
        "what was held stays"
    );
    // The same snapshot again changes nothing (a remount, StrictMode, the back button).
    let version = open.version();
    assert_eq!(
        merge(&mut open, &snapshot(&page, json!({"tasks": ["task-b"]}))),
        Reason::Unchanged
    );
    assert_eq!(open.version(), version);
}

#[test]
fn an_older_snapshot_gives_way_to_what_is_held_part_by_part() {
    // The page read the session at revision 4 with its question pending; the open store has
    // since seen the question answered and the session running (revision 6).
    let (old, mut open) = moved_on();
    let mut answered = question("sess-a", "q-sess-a", "p-sess-a", 5, "answered");
    answered["updated_at"] = json!(at(21));
    call(&mut open, "applyMessageEvent", json!(["updated", answered]));
    assert_eq!(pending_id(&open, "sess-a"), None);
    let before = snapshot(&open, Value::Null);
    assert_eq!(
        merge(&mut open, &snapshot(&old, Value::Null)),
        Reason::Unchanged
    );
    assert_eq!(
        pending_id(&open, "sess-a"),
        None,
        "the older page reopens nothing"
    );
    assert_eq!(snapshot(&open, Value::Null)["sessions"], before["sessions"]);
    // And the other way round: the open store behind, the page's snapshot newer, part by part.
    let mut behind = reader("task-a", "sess-a", 4);
    let newer = open;
    merge(&mut behind, &snapshot(&newer, Value::Null));
    assert_eq!(pending_id(&behind, "sess-a"), None);
    assert_eq!(
        behind.session_projection("sess-a"),
        newer.session_projection("sess-a")
    );
}

#[test]
fn a_snapshots_deletion_removes_the_row_the_store_holds() {
    // Regression (the merge property, first run): a row deleted in the page's snapshot stayed
    // in the open store beside its tombstone, and its question stayed live.
    let mut page = reader("task-a", "sess-a", 4);
    call(
        &mut page,
        "applyMessageEvent",
        json!(["deleted", {"message_id": "q-sess-a", "session_id": "sess-a", "task_id": "task-a",
        "pending_action": Value::Null, "pending_action_revision": {"epoch": "7", "sequence": 5}}]),
    );
    let mut open = reader("task-a", "sess-a", 4);
    assert_eq!(pending_id(&open, "sess-a").as_deref(), Some("p-sess-a"));
    merge(&mut open, &snapshot(&page, Value::Null));
    assert_eq!(pending_id(&open, "sess-a"), None);
    let held = snapshot(&open, Value::Null);
    let messages = &held["sessions"][0]["messages"];
    assert_eq!(messages.as_array().map(Vec::len), Some(0), "{messages}");
    // A page read before the delete does not bring it back.
    merge(
        &mut open,
        &snapshot(&reader("task-a", "sess-a", 4), Value::Null),
    );
    assert_eq!(pending_id(&open, "sess-a"), None);
}

#[test]
fn a_removal_in_either_is_final() {
    let mut page = reader("task-a", "sess-a", 4);
    call(&mut page, "removeTask", json!(["task-a"]));
    let mut open = reader("task-a", "sess-a", 4);
    merge(&mut open, &snapshot(&page, Value::Null));
    assert_eq!(
        open.pending_clarification("sess-a").0,
        Some(None),
        "removed: known, nothing pending"
    );
    let mut open = Store::new();
    call(&mut open, "removeTask", json!(["task-a"]));
    merge(
        &mut open,
        &snapshot(&reader("task-a", "sess-a", 4), Value::Null),
    );
    assert_eq!(open.pending_clarification("sess-a").0, Some(None));
}

#[test]
fn the_position_moves_back_only_and_a_fresh_store_takes_the_snapshots() {
    let mut page = reader("task-b", "sess-b", 4);
    page.apply_stream_position("s1", 40);
    // A store that holds nothing takes the place (a hydrate is this merge).
    let mut fresh = Store::new();
    merge(&mut fresh, &snapshot(&page, Value::Null));
    assert_eq!(fresh.stream_position(), (Some("s1"), Some(40)));
    // An open store further on keeps the earlier place: the page's rows are only as new as 40.
    let mut open = reader("task-a", "sess-a", 3);
    open.apply_stream_position("s1", 55);
    merge(&mut open, &snapshot(&page, Value::Null));
    assert_eq!(open.stream_position(), (Some("s1"), Some(40)));
    // Behind it, or on another stream, it stays.
    page.apply_stream_position("s1", 70);
    merge(&mut open, &snapshot(&page, Value::Null));
    assert_eq!(open.stream_position(), (Some("s1"), Some(40)));
    let mut other = reader("task-c", "sess-c", 1);
    other.apply_stream_position("s2", 3);
    merge(&mut open, &snapshot(&other, Value::Null));
    assert_eq!(open.stream_position(), (Some("s1"), Some(40)));
    // A store holding state at no place of the stream stays at none.
    let mut nowhere = reader("task-a", "sess-a", 3);
    merge(&mut nowhere, &snapshot(&page, Value::Null));
    assert_eq!(nowhere.stream_position(), (None, None));
}

#[test]
fn an_older_snapshots_legacy_task_action_gives_way() {
    let legacy = |store: &mut Store, action: &str| {
        call(
            store,
            "applyTaskUpdated",
            json!([{"id": "task-a", "pending_action": action}]),
        );
    };
    let mut page = Store::new();
    legacy(&mut page, "permission");
    page.apply_stream_position("s1", 10);
    let mut open = Store::new();
    legacy(&mut open, "clarification");
    open.apply_stream_position("s1", 20);
    let before = open.task_pending_action("task-a").0;
    merge(&mut open, &snapshot(&page, Value::Null));
    assert_eq!(
        open.task_pending_action("task-a").0,
        before,
        "the page read at 10, the store holds 20"
    );
    // A page read later than the store's place: its field (no order of its own) is taken.
    let mut later = Store::new();
    legacy(&mut later, "permission");
    later.apply_stream_position("s1", 30);
    let mut open = Store::new();
    legacy(&mut open, "clarification");
    open.apply_stream_position("s1", 20);
    merge(&mut open, &snapshot(&later, Value::Null));
    assert_eq!(
        open.task_pending_action("task-a").0,
        page.task_pending_action("task-a").0
    );
}

#[cfg(feature = "development")]
#[test]
fn an_ignored_part_is_logged_as_the_snapshots() {
    let (old, mut open) = moved_on();
    merge(&mut open, &snapshot(&old, Value::Null));
    let log = snapshot(&open, Value::Null)["rejected"].to_string();
    assert!(log.contains("\"snapshot\""), "{log}");
}
