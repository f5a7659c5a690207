//! What the user may do in a session now (SPEC §13, `offeredActions`): answer while a question
//! is live and not being sent, stop the agent while it works or while a question waits on a
//! connected agent (not a detached one), send only when nothing is live and the agent is idle;
//! nothing in a terminal session; unknown until the state and the live question are known.
#![cfg(not(target_arch = "wasm32"))]

mod store_support;

use store_support::{one_session, ts, Store, S};
use task_projection::rules::action::{Offered, ReplyBody, Transport};
use task_projection::rules::model::{
    Message, MessageKind, PendingAction, RequestStatus, RowFlags, SessionState,
};

fn store(state: SessionState, question: Option<bool>) -> Store {
    let rows: Vec<Message> = question
        .map(|detached| Message {
            id: "q1".into(),
            turn_id: Some("t1".into()),
            kind: MessageKind::ClarificationRequest,
            status: RequestStatus::Pending,
            pending_id: Some("p1".into()),
            question_total: None,
            flags: RowFlags::of(None, detached),
            created_at: ts(2),
            updated_at: Some(ts(2)),
        })
        .into_iter()
        .collect();
    one_session(state, question.map(|_| PendingAction::Clarification), &rows)
}

const fn o(respond: bool, cancel: bool, send: bool) -> Option<Offered> {
    Some(Offered {
        respond,
        cancel,
        send,
    })
}

#[test]
fn what_the_user_may_do_follows_the_state_the_question_and_its_respond() {
    assert_eq!(Store::new().offered_actions(S), None);
    assert_eq!(
        store(SessionState::Running, None).offered_actions(S),
        o(false, true, false)
    );
    assert_eq!(
        store(SessionState::WaitingForInput, None).offered_actions(S),
        o(false, false, true)
    );
    assert_eq!(
        store(SessionState::WaitingForInput, Some(false)).offered_actions(S),
        o(true, true, false)
    );
    // A detached question: nothing to stop.
    assert_eq!(
        store(SessionState::WaitingForInput, Some(true)).offered_actions(S),
        o(true, false, false)
    );
    assert_eq!(
        store(SessionState::Completed, None).offered_actions(S),
        o(false, false, false)
    );
    // While the answer is being sent it is not offered again; once settled, send is.
    let mut s = store(SessionState::WaitingForInput, Some(false));
    let a = s.respond_start(S, "p1").unwrap().attempt;
    assert_eq!(s.offered_actions(S), o(false, true, false));
    s.respond_reply(
        a,
        Transport::Reply(
            200,
            Some(ReplyBody {
                claimed: Some(true),
                ..ReplyBody::default()
            }),
        ),
        None,
    );
    assert_eq!(s.offered_actions(S), o(false, false, true));
}
