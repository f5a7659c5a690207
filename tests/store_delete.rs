//! A deleted session in the store (SPEC §5, §13): a tombstone like a deleted message. It leaves
//! its task's list, the owner rule never picks it (not even as the remembered session), the
//! task's action stops counting it, nothing older brings it back in any order, a snapshot keeps
//! it, and which session to open after deleting the open one is the rule's.
#![cfg(not(target_arch = "wasm32"))]

mod store_support;

use store_support::{rehydrated, session as listed, Store, TASK};
use task_projection::rules::model::{PendingAction, Session, SessionState};

fn session(
    id: &str,
    action: Option<PendingAction>,
    sequence: u64,
    primary: bool,
) -> Session<String> {
    listed(id, SessionState::WaitingForInput, action, sequence, primary)
}

/// The task's list, newest first: s3 (clean), s2 (waits on a permission, primary), s1 (clean).
fn list() -> Vec<Session<String>> {
    vec![
        session("s3", None, 3, false),
        session("s2", Some(PendingAction::Permission), 2, true),
        session("s1", None, 1, false),
    ]
}

#[test]
fn a_deleted_session_leaves_its_task_and_the_owner_rule_never_picks_it() {
    let mut store = Store::new();
    store.apply_session_list(TASK, list()).unwrap();
    assert_eq!(store.pending_owner(TASK, None).0, Some(Some("s2")));
    assert_eq!(
        store.task_pending_action(TASK).0,
        Some(Some(PendingAction::Permission))
    );
    store.delete_session("s2");
    // Known and clean, not unknown.
    assert_eq!(store.session_pending_action("s2").0, Some(None));
    assert_eq!(store.has_pending_permission("s2").0, Some(false));
    assert_eq!(store.task_pending_action(TASK).0, Some(None));
    let owner = store.pending_owner(TASK, None).0.flatten();
    assert!(owner != Some("s2"), "{owner:?}");
    // Not even as the remembered session.
    let owner = store.pending_owner(TASK, Some("s2")).0.flatten();
    assert!(owner != Some("s2"), "{owner:?}");
    // An older list (read before the delete), an event about it: dropped.
    store.apply_session_list(TASK, list()).unwrap();
    store.apply_session_event(&session("s2", Some(PendingAction::Permission), 9, true));
    assert_eq!(store.task_pending_action(TASK).0, Some(None));
    assert!(store.pending_owner(TASK, Some("s2")).0.flatten() != Some("s2"));
    // A snapshot keeps the tombstone.
    let mut hydrated = rehydrated(&store);
    assert_eq!(hydrated.digest(), store.digest());
    hydrated.apply_session_list(TASK, list()).unwrap();
    assert_eq!(hydrated.task_pending_action(TASK).0, Some(None));
    assert_eq!(hydrated.digest(), store.digest());
}

#[test]
fn the_delete_and_the_lists_converge_in_any_order() {
    // The delete before the (older) list, or after it, or between two copies: one state.
    let mut before = Store::new();
    before.delete_session("s2");
    before.apply_session_list(TASK, list()).unwrap();
    let mut after = Store::new();
    after.apply_session_list(TASK, list()).unwrap();
    after.delete_session("s2");
    let mut twice = Store::new();
    twice.apply_session_list(TASK, list()).unwrap();
    twice.delete_session("s2");
    twice.apply_session_list(TASK, list()).unwrap();
    twice.delete_session("s2");
    for store in [&after, &twice] {
        assert_eq!(store.digest(), before.digest());
        assert_eq!(
            store.task_pending_action(TASK).0,
            before.task_pending_action(TASK).0
        );
        assert_eq!(
            store.pending_owner(TASK, None).0,
            before.pending_owner(TASK, None).0
        );
    }
}

#[test]
fn deleting_the_open_session_opens_the_newest_remaining_one() {
    let mut store = Store::new();
    assert_eq!(store.session_after_delete(TASK, Some("s2"), "s2"), None);
    store.apply_session_list(TASK, list()).unwrap();
    store.delete_session("s3");
    // Another session deleted: the open one stays.
    assert_eq!(
        store.session_after_delete(TASK, Some("s1"), "s3"),
        Some(Some("s1"))
    );
    // The open one deleted: the newest remaining.
    store.delete_session("s2");
    assert_eq!(
        store.session_after_delete(TASK, Some("s2"), "s2"),
        Some(Some("s1"))
    );
    store.delete_session("s1");
    assert_eq!(
        store.session_after_delete(TASK, Some("s1"), "s1"),
        Some(None)
    );
}
