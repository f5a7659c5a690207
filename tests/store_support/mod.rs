//! What the store tests of the user's actions share (`tests/store_permission.rs`,
//! `tests/store_delete.rs`, `tests/store_offered.rs`): timestamps, revisions, a session, a task
//! with one session and its open turn, and a snapshot round trip.
#![allow(dead_code)]

use task_projection::rules::model::{
    Message, PendingAction, Revision, Session, SessionState, Turn, TurnFlags,
};
use task_projection::rules::time::Timestamp;
use task_projection::store::ProjectionStore;
use task_projection::wire::{store_api as api, Json};

pub type Store = ProjectionStore<u64>;

pub const TASK: &str = "task-1";
pub const S: &str = "s1";

pub fn ts(second: u32) -> Timestamp {
    Timestamp::parse(&format!("2026-11-29T12:00:{second:02}.000000000Z"))
}

pub fn rev(sequence: u64) -> Revision {
    Revision {
        epoch: "1".into(),
        sequence,
    }
}

/// A listed session of [`TASK`] projected at `sequence`.
pub fn session(
    id: &str,
    state: SessionState,
    action: Option<PendingAction>,
    sequence: u64,
    primary: bool,
) -> Session<String> {
    Session {
        id: id.into(),
        task_id: Some(TASK.into()),
        state: Some(state),
        is_primary: primary,
        pending_action: Some(action),
        pending_action_revision: Some(rev(sequence)),
        updated_at: Some(ts(1)),
    }
}

/// A store holding session [`S`] of [`TASK`] (projected at 5), its open turn `t1` and `rows`.
pub fn one_session(state: SessionState, action: Option<PendingAction>, rows: &[Message]) -> Store {
    let mut store = Store::new();
    store
        .apply_session_list(TASK, vec![session(S, state, action, 5, true)])
        .expect("a session list of the task");
    store.apply_turn_list(
        S,
        vec![Turn {
            id: "t1".into(),
            completed: false,
            started_at: ts(1),
            created_at: ts(1),
            updated_at: None,
            flags: TurnFlags::default(),
        }],
    );
    store.apply_message_page(S, rows);
    store
}

/// A store's snapshot through JSON text into a new store (SPEC §12).
pub fn rehydrated(store: &Store) -> Store {
    // A held summary's payload is its revision here: written as the summary object.
    let text = api::dehydrate(store, &Json::ABSENT, |p: &u64, out: &mut String| {
        out.push_str(&format!("{{\"revision\":{p}}}"))
    })
    .expect("dehydrate");
    let parsed: serde_json::Value = serde_json::from_str(&text).expect("a snapshot is JSON");
    api::hydrate(&Json::new(&parsed), &Json::ABSENT, |_| 0).expect("a snapshot hydrates")
}
