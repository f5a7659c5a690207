//! The user's answer to a permission in the store (SPEC §13): which permission can be answered
//! (its `request_id`), approving it settles the session at once, the stale codes settle it as no
//! longer available, an older input never reopens it, and a snapshot keeps what the rows say.
#![cfg(not(target_arch = "wasm32"))]

mod store_support;

use store_support::{one_session, rehydrated, rev, ts, Store, S, TASK};
use task_projection::rules::action::{Outcome, Refusal, ReplyBody, Transport};
use task_projection::rules::model::{
    Message, MessageKind, PendingAction, RequestStatus, RowFlags, SessionState,
};
use task_projection::rules::revision::PendingProjection;
use task_projection::store::{MessageEvent, MessageEventKind};

fn permission(status: RequestStatus, request_id: Option<&str>, updated: u32) -> Message {
    Message {
        id: "perm-1".into(),
        turn_id: Some("t1".into()),
        kind: MessageKind::PermissionRequest,
        status,
        pending_id: Some("pp-1".into()),
        question_total: None,
        flags: RowFlags::of(request_id, false),
        created_at: ts(2),
        updated_at: Some(ts(updated)),
    }
}

/// A session blocked on permission `pp-1` (with `request_id` when given), projected at 5.
fn blocked(request_id: Option<&str>) -> Store {
    one_session(
        SessionState::WaitingForInput,
        Some(PendingAction::Permission),
        &[permission(RequestStatus::Pending, request_id, 2)],
    )
}

fn reply(status: u16, code: Option<&str>) -> Transport {
    Transport::Reply(
        status,
        Some(ReplyBody {
            success: Some(status == 200),
            gone: code.is_some_and(task_projection::rules::action::gone),
            ..ReplyBody::default()
        }),
    )
}

/// `(blocked, answerable, shown status)` of the session's permission.
fn standing(store: &Store) -> Option<(bool, bool, RequestStatus)> {
    let (blocked, _) = store.pending_permission(S);
    let blocked = blocked?;
    Some(match blocked {
        None => (false, false, RequestStatus::Other),
        Some(p) => (true, p.answerable, p.shown),
    })
}

#[test]
fn a_permission_without_its_request_id_blocks_the_session_but_cannot_be_answered() {
    let mut store = blocked(None);
    // SPEC §3: the agent waits, whatever the row carries.
    assert_eq!(store.has_pending_permission(S).0, Some(true));
    assert_eq!(
        standing(&store),
        Some((true, false, RequestStatus::Expired))
    );
    assert_eq!(store.permission_start(S, "pp-1"), Err(Refusal::Expired));
    // A snapshot keeps it so.
    assert_eq!(
        standing(&rehydrated(&store)),
        Some((true, false, RequestStatus::Expired))
    );
    // The row gains its identity (a newer update): now it can be answered.
    store.apply_message_event(
        MessageEventKind::Updated,
        &MessageEvent {
            session_id: S.into(),
            task_id: Some(TASK.into()),
            message: permission(RequestStatus::Pending, Some("req-1"), 3),
            projection: None,
        },
    );
    assert_eq!(standing(&store), Some((true, true, RequestStatus::Pending)));
    assert!(store.permission_start(S, "pp-1").is_ok());
}

#[test]
fn approving_settles_the_session_and_the_task_at_once_and_an_older_input_does_not_reopen_it() {
    let mut store = blocked(Some("req-1"));
    assert_eq!(standing(&store), Some((true, true, RequestStatus::Pending)));
    assert_eq!(
        store.session_pending_action(S).0,
        Some(Some(PendingAction::Permission))
    );
    let first = store.permission_start(S, "pp-1").unwrap();
    let second = store.permission_start(S, "pp-1").unwrap();
    assert!(first.fresh && !second.fresh && first.attempt == second.attempt);
    // A clarification start for the same id is not a permission's.
    assert_eq!(store.respond_start(S, "pp-1"), Err(Refusal::NotLive));
    let replied = store.respond_reply(first.attempt, reply(200, None), Some(rev(7)));
    assert_eq!(replied.outcome, Outcome::Won);
    assert!(replied.applied);
    assert_eq!(store.has_pending_permission(S).0, Some(false));
    assert_eq!(store.session_pending_action(S).0, Some(None));
    assert_eq!(store.task_pending_action(TASK).0, Some(None));
    // A replay of the pending row (the REST page read before the answer) changes nothing, and
    // neither does a snapshot round trip.
    store.apply_message_page(S, &[permission(RequestStatus::Pending, Some("req-1"), 2)]);
    let again = store.apply_message_event(
        MessageEventKind::Updated,
        &MessageEvent {
            session_id: S.into(),
            task_id: Some(TASK.into()),
            message: permission(RequestStatus::Pending, Some("req-1"), 2),
            projection: Some(PendingProjection {
                action: Some(Some(PendingAction::Permission)),
                revision: Some(rev(6)),
            }),
        },
    );
    let _ = again;
    assert_eq!(store.has_pending_permission(S).0, Some(false));
    assert_eq!(rehydrated(&store).has_pending_permission(S).0, Some(false));
    // The server's approved row retires the settlement; the row says it now.
    store.apply_message_event(
        MessageEventKind::Updated,
        &MessageEvent {
            session_id: S.into(),
            task_id: Some(TASK.into()),
            message: permission(RequestStatus::Approved, Some("req-1"), 4),
            projection: None,
        },
    );
    assert!(store.settled_bundles(S).is_empty());
    assert_eq!(store.has_pending_permission(S).0, Some(false));
}

#[test]
fn the_stale_codes_settle_a_permission_as_no_longer_available_and_a_failure_hides_nothing() {
    for code in [
        "permission_not_found",
        "permission_stale",
        "permission_already_resolved",
    ] {
        let mut store = blocked(Some("req-1"));
        let a = store.permission_start(S, "pp-1").unwrap().attempt;
        let status = if code == "permission_not_found" {
            404
        } else {
            409
        };
        let replied = store.respond_reply(a, reply(status, Some(code)), None);
        assert_eq!(replied.outcome, Outcome::NoLongerActive, "{code}");
        assert_eq!(store.has_pending_permission(S).0, Some(false), "{code}");
    }
    // An option the server does not offer is refused: still answerable.
    let mut store = blocked(Some("req-1"));
    let a = store.permission_start(S, "pp-1").unwrap().attempt;
    let replied = store.respond_reply(a, reply(400, Some("permission_option_not_offered")), None);
    assert_eq!(replied.outcome, Outcome::Refused);
    assert_eq!(standing(&store), Some((true, true, RequestStatus::Pending)));
    // A 503 fails: nothing hidden, and the retry is a new attempt.
    let retry = store.permission_start(S, "pp-1").unwrap();
    assert!(retry.fresh);
    let replied = store.respond_reply(retry.attempt, reply(503, None), None);
    assert!(matches!(replied.outcome, Outcome::Failed(_)));
    assert_eq!(standing(&store), Some((true, true, RequestStatus::Pending)));
}

#[test]
fn a_held_summary_from_before_the_answer_gives_way_to_the_sessions_until_a_newer_one() {
    use task_projection::rules::model::StatusSummary;
    let summary = |revision: u64, action: Option<PendingAction>| {
        Some((
            StatusSummary {
                revision: Some(revision),
                pending_action: action,
            },
            revision,
        ))
    };
    let mut store = blocked(Some("req-1"));
    store.apply_status_summary_event(TASK, summary(3, Some(PendingAction::Permission)));
    assert_eq!(
        store.task_pending_action(TASK).0,
        Some(Some(PendingAction::Permission))
    );
    // The reference client's envelope: no position, no summary in the reply.
    let a = store.permission_start(S, "pp-1").unwrap().attempt;
    assert!(store.respond_reply(a, reply(200, None), None).applied);
    assert_eq!(store.task_pending_action(TASK).0, Some(None));
    assert_eq!(rehydrated(&store).task_pending_action(TASK).0, Some(None));
    // An older summary changes nothing; a newer one is the server's word after the answer.
    store.apply_status_summary_event(TASK, summary(2, Some(PendingAction::Permission)));
    assert_eq!(store.task_pending_action(TASK).0, Some(None));
    store.apply_status_summary_event(TASK, summary(4, Some(PendingAction::Clarification)));
    assert_eq!(
        store.task_pending_action(TASK).0,
        Some(Some(PendingAction::Clarification))
    );
}
