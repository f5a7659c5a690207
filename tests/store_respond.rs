//! The user's answer in the store (SPEC §13): respond starts and replies, what a settled bundle
//! hides, and that no input produced before the server handled the answer reopens it — as cases
//! and as a property over random histories with duplicates.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use serde_json::{json, Value};
use task_projection::rules::action::{
    Failure, Outcome, Phase, Refusal, ReplyBody, Stale, Transport,
};
use task_projection::rules::model::{
    Message, MessageKind, PendingAction, RequestStatus, Revision, Session, SessionState, Turn,
    TurnFlags,
};
use task_projection::rules::revision::PendingProjection;
use task_projection::rules::time::Timestamp;
use task_projection::store::{MessageEvent, MessageEventKind, ProjectionStore};
use task_projection::wire::{store_api as api, Json};

type Store = ProjectionStore<u64>;

const TASK: &str = "task-1";
const S: &str = "s1";

fn ts(second: u32) -> Timestamp {
    Timestamp::parse(&format!(
        "2026-11-29T12:{:02}:{:02}.000000000Z",
        second / 60 % 60,
        second % 60
    ))
}

fn rev(sequence: u64) -> Revision {
    Revision {
        epoch: "1".into(),
        sequence,
    }
}

fn question(id: &str, pending: &str, status: RequestStatus, created: u32, updated: u32) -> Message {
    Message {
        id: id.into(),
        turn_id: Some("t1".into()),
        kind: MessageKind::ClarificationRequest,
        status,
        pending_id: Some(pending.into()),
        question_total: None,
        flags: Default::default(),
        created_at: ts(created),
        updated_at: Some(ts(updated)),
    }
}

fn event(message: Message, action: Option<PendingAction>, sequence: u64) -> MessageEvent {
    MessageEvent {
        session_id: S.into(),
        task_id: Some(TASK.into()),
        message,
        projection: Some(PendingProjection {
            action: Some(action),
            revision: Some(rev(sequence)),
        }),
    }
}

/// Turn `id`, started (and created) at second `at`.
fn turn(id: &str, completed: bool, at: u32) -> Turn {
    Turn {
        id: id.into(),
        completed,
        started_at: ts(at),
        created_at: ts(at),
        updated_at: None,
        flags: TurnFlags::default(),
    }
}

/// A session waiting on bundle `p1` (one question), its rows loaded, projected at sequence 5.
fn waiting() -> Store {
    let mut store = Store::new();
    store
        .apply_session_list(
            TASK,
            vec![Session::<String> {
                id: S.into(),
                task_id: Some(TASK.into()),
                state: Some(SessionState::WaitingForInput),
                is_primary: true,
                pending_action: Some(Some(PendingAction::Clarification)),
                pending_action_revision: Some(rev(5)),
                updated_at: Some(ts(1)),
            }],
        )
        .unwrap();
    store.apply_turn_list(S, vec![turn("t1", false, 1)]);
    store.apply_message_page(S, &[question("q1", "p1", RequestStatus::Pending, 2, 2)]);
    store
}

/// A store's snapshot as JSON text.
fn snapshot_text(store: &Store) -> String {
    api::dehydrate(store, &Json::ABSENT, |p: &u64, out: &mut String| {
        out.push_str(&p.to_string())
    })
    .expect("dehydrate")
}

/// A store's snapshot through JSON text into a new store (SPEC §12): settlements included.
fn rehydrated(store: &Store) -> Store {
    let text = snapshot_text(store);
    let parsed: serde_json::Value = serde_json::from_str(&text).expect("a snapshot is JSON");
    api::hydrate(&Json::new(&parsed), &Json::ABSENT, |_| 0).expect("a snapshot hydrates")
}

fn live(store: &Store) -> Option<Option<String>> {
    store
        .pending_clarification(S)
        .0
        .map(|b| b.and_then(|b| b.pending_id.map(String::from)))
}

fn http(status: u16, claimed: Option<bool>) -> Transport {
    Transport::Reply(
        status,
        Some(ReplyBody {
            success: Some(status == 200),
            claimed,
            outcome: None,
            gone: false,
        }),
    )
}

#[test]
fn a_double_click_starts_one_attempt_and_a_won_reply_hides_the_bundle_at_once() {
    let mut store = waiting();
    assert_eq!(live(&store), Some(Some("p1".into())));
    let first = store.respond_start(S, "p1").unwrap();
    assert!(first.fresh);
    let second = store.respond_start(S, "p1").unwrap();
    assert_eq!((second.attempt, second.fresh), (first.attempt, false));
    // In flight: still shown.
    assert_eq!(live(&store), Some(Some("p1".into())));
    assert_eq!(
        store.respond_state(S, "p1").unwrap().phase,
        &Phase::InFlight
    );
    // The reply alone (no event, no REST read) settles it.
    let replied = store.respond_reply(first.attempt, http(200, Some(true)), None);
    assert_eq!((replied.outcome, replied.applied), (Outcome::Won, true));
    assert_eq!(live(&store), Some(None));
    assert_eq!(store.hidden_message_ids(S).0, Some(vec![]));
    // The projection (sequence 5) said clarification; the rows now decide: clean.
    assert_eq!(store.session_pending_action(S).0, Some(None));
    // A second reply to the same attempt changes nothing.
    let again = store.respond_reply(first.attempt, http(200, Some(true)), None);
    assert_eq!(
        (again.applied, again.stale),
        (false, Some(Stale::AlreadyReplied))
    );
    // A new start is refused: nothing is live.
    assert_eq!(store.respond_start(S, "p1"), Err(Refusal::NotLive));
}

#[test]
fn lost_and_no_longer_active_settle_too_refused_and_failed_reopen() {
    for (transport, settles) in [
        (http(200, Some(false)), true),
        (http(409, None), true),
        (http(404, None), false),
        (http(400, None), false),
        (http(503, None), false),
        (http(500, None), false),
        (Transport::Network, false),
        (Transport::Timeout, false),
        (Transport::Reply(200, None), false),
    ] {
        let mut store = waiting();
        let a = store.respond_start(S, "p1").unwrap().attempt;
        let replied = store.respond_reply(a, transport, None);
        assert_eq!(replied.applied, settles, "{transport:?}");
        assert_eq!(
            live(&store),
            Some(if settles { None } else { Some("p1".into()) }),
            "{transport:?}"
        );
        if !settles {
            // Answerable again: a retry is a new attempt, and the old attempt's late reply is
            // superseded.
            let retry = store.respond_start(S, "p1").unwrap();
            assert!(retry.fresh && retry.attempt != a);
            let late = store.respond_reply(a, http(200, Some(true)), None);
            assert_eq!((late.applied, late.stale), (false, Some(Stale::Superseded)));
            assert_eq!(live(&store), Some(Some("p1".into())));
        }
    }
}

#[test]
fn a_start_needs_a_known_live_bundle() {
    let mut store = Store::new();
    assert_eq!(store.respond_start(S, "p1"), Err(Refusal::Unknown));
    let mut store = waiting();
    assert_eq!(store.respond_start(S, "p2"), Err(Refusal::NotLive));
    assert_eq!(
        store.respond_reply(99, http(200, Some(true)), None).stale,
        Some(Stale::UnknownAttempt)
    );
}

#[test]
fn older_inputs_never_reopen_a_settled_answer_and_a_newer_restore_does() {
    let mut store = waiting();
    let a = store.respond_start(S, "p1").unwrap().attempt;
    store.respond_reply(a, http(200, Some(true)), Some(rev(8)));
    assert_eq!(live(&store), Some(None));
    // Produced before the handling: a replayed event, an equal revision, a REST page.
    let pending = || question("q1", "p1", RequestStatus::Pending, 2, 2);
    store.apply_message_event(
        MessageEventKind::Updated,
        &event(pending(), Some(PendingAction::Clarification), 6),
    );
    store.apply_message_event(
        MessageEventKind::Updated,
        &event(pending(), Some(PendingAction::Clarification), 8),
    );
    store.apply_message_page(S, &[pending()]);
    assert_eq!(live(&store), Some(None));
    assert_eq!(store.session_pending_action(S).0, Some(None));
    // The server restored the bundle after handling: a newer pending row reopens it.
    store.apply_message_event(
        MessageEventKind::Updated,
        &event(
            question("q1", "p1", RequestStatus::Pending, 2, 30),
            Some(PendingAction::Clarification),
            9,
        ),
    );
    assert_eq!(live(&store), Some(Some("p1".into())));
    assert_eq!(
        store.session_pending_action(S).0,
        Some(Some(PendingAction::Clarification))
    );
}

#[test]
fn a_reply_after_the_data_ended_the_bundle_settles_nothing_and_the_settlement_retires() {
    let mut store = waiting();
    let a = store.respond_start(S, "p1").unwrap().attempt;
    // The socket was faster than the reply.
    store.apply_message_event(
        MessageEventKind::Updated,
        &event(
            question("q1", "p1", RequestStatus::Answered, 2, 20),
            None,
            7,
        ),
    );
    let replied = store.respond_reply(a, http(200, Some(true)), Some(rev(7)));
    assert_eq!((replied.outcome, replied.applied), (Outcome::Won, false));
    assert!(store.settled_bundles(S).is_empty());

    // Settled first, then the answered rows arrive: the settlement retires.
    let mut store = waiting();
    let a = store.respond_start(S, "p1").unwrap().attempt;
    store.respond_reply(a, http(200, Some(true)), None);
    assert_eq!(store.settled_bundles(S).len(), 1);
    store.apply_message_event(
        MessageEventKind::Updated,
        &event(
            question("q1", "p1", RequestStatus::Answered, 2, 20),
            None,
            7,
        ),
    );
    assert!(store.settled_bundles(S).is_empty());
    assert_eq!(live(&store), Some(None));
}

#[test]
fn a_snapshot_keeps_the_settlement_and_refuses_a_malformed_one() {
    let mut store = waiting();
    let a = store.respond_start(S, "p1").unwrap().attempt;
    store.respond_reply(a, http(200, Some(true)), Some(rev(8)));
    let hydrated = rehydrated(&store);
    assert_eq!(live(&hydrated), Some(None));
    assert_eq!(hydrated.settled_bundles(S), store.settled_bundles(S));
    // A replayed older event reopens it in neither.
    let mut hydrated = hydrated;
    hydrated.apply_message_event(
        MessageEventKind::Updated,
        &event(
            question("q1", "p1", RequestStatus::Pending, 2, 2),
            Some(PendingAction::Clarification),
            7,
        ),
    );
    assert_eq!(live(&hydrated), Some(None));
    // A snapshot without settlements writes no key (earlier snapshots stay byte for byte).
    let plain = snapshot_text(&waiting());
    assert!(!plain.contains("settled"));
    let text = snapshot_text(&store);
    assert!(text.contains(r#""settled":[["p1","1",8]]"#), "{text}");
    for (bad, field) in [
        (
            r#""settled":[["","1",8]]"#,
            "snapshot.sessions[0].settled[0][0]",
        ),
        (
            r#""settled":[["p1","1"]]"#,
            "snapshot.sessions[0].settled[0]",
        ),
        (r#""settled":{}"#, "snapshot.sessions[0].settled"),
    ] {
        let broken = text.replace(r#""settled":[["p1","1",8]]"#, bad);
        let parsed: serde_json::Value = serde_json::from_str(&broken).unwrap();
        let error = api::hydrate(&Json::new(&parsed), &Json::ABSENT, |_| 0u64).expect_err(bad);
        assert_eq!(error.field(), field, "{bad}");
    }
}

#[test]
fn the_next_bundle_becomes_live_when_the_first_is_settled() {
    let mut store = waiting();
    store.apply_message_event(
        MessageEventKind::Added,
        &event(
            question("q2", "p2", RequestStatus::Pending, 1, 3),
            Some(PendingAction::Clarification),
            6,
        ),
    );
    // q1 is the newer request: p1 is live, p2 waits.
    assert_eq!(live(&store), Some(Some("p1".into())));
    let a = store.respond_start(S, "p1").unwrap().attempt;
    store.respond_reply(a, http(200, Some(true)), None);
    assert_eq!(live(&store), Some(Some("p2".into())));
    assert_eq!(
        store.session_pending_action(S).0,
        Some(Some(PendingAction::Clarification))
    );
}

/// One input of the property's histories.
#[derive(Clone, Debug)]
enum Step {
    /// A pre-handling input: the bundle's pending row again, at this revision (≤ 7), by event
    /// or REST page.
    Old {
        sequence: u64,
        page: bool,
    },
    Start,
    Reply {
        status: u16,
        claimed: Option<bool>,
    },
    Network,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0u64..=7, any::<bool>()).prop_map(|(sequence, page)| Step::Old { sequence, page }),
        Just(Step::Start),
        (
            prop::sample::select(vec![200u16, 409, 404, 503, 500]),
            prop::option::of(any::<bool>())
        )
            .prop_map(|(status, claimed)| Step::Reply { status, claimed }),
        Just(Step::Network),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    /// Random histories of starts, replies (any outcome, duplicated, late) and inputs produced
    /// before the server handled the answer: a settled answer is never reopened, a failed one
    /// never hides the question, and every reply is classified as the rule says.
    #[test]
    fn a_settled_answer_is_never_reopened_and_a_failed_one_never_hides(steps in prop::collection::vec(step(), 1..40)) {
        let mut store = waiting();
        let mut attempts: Vec<u64> = Vec::new();
        let mut settled = false;
        for step in &steps {
            match step {
                Step::Old { sequence, page } => {
                    let row = question("q1", "p1", RequestStatus::Pending, 2, 2);
                    if *page {
                        store.apply_message_page(S, &[row]);
                    } else {
                        store.apply_message_event(MessageEventKind::Updated, &event(row, Some(PendingAction::Clarification), *sequence));
                    }
                }
                Step::Start => match store.respond_start(S, "p1") {
                    Ok(started) => {
                        prop_assert!(!settled);
                        if started.fresh { attempts.push(started.attempt); }
                    }
                    Err(refusal) => {
                        prop_assert!(settled);
                        prop_assert_eq!(refusal, Refusal::NotLive);
                    }
                },
                Step::Reply { status, claimed } => {
                    // A reply to the newest attempt, or a late one to an older attempt.
                    let Some(&a) = attempts.iter().rev().nth(usize::from(*status == 500 && attempts.len() > 1)) else { continue };
                    let transport = http(*status, *claimed);
                    let replied = store.respond_reply(a, transport, Some(rev(8)));
                    if replied.applied {
                        prop_assert!(replied.outcome.settles());
                        settled = true;
                    }
                }
                Step::Network => {
                    if let Some(&a) = attempts.last() {
                        let replied = store.respond_reply(a, Transport::Network, None);
                        prop_assert_eq!(replied.outcome, Outcome::Failed(Failure::Network));
                        prop_assert!(!replied.applied);
                    }
                }
            }
            // The invariant after every step, in the store and in its snapshot's store.
            let expected = if settled { None } else { Some("p1".to_string()) };
            let action = Some((!settled).then_some(PendingAction::Clarification));
            for s in [&store, &rehydrated(&store)] {
                prop_assert_eq!(live(s), Some(expected.clone()));
                prop_assert_eq!(s.session_pending_action(S).0, action);
                prop_assert_eq!(s.settled_bundles(S).len(), usize::from(settled));
            }
        }
    }
}

// ---- regressions found by the respond convergence properties (tests/store_convergence.rs) ----

/// A store call through the dispatcher, with JSON arguments.
fn call(store: &mut Store, name: &str, args: &[Value]) -> Result<(), api::CallError> {
    let arg = |i: usize| args.get(i).map_or(Json::ABSENT, Json::new);
    api::dispatch(store, name, arg, |_| 0u64, String::new).map(|_| ())
}

/// The wire text of `ms` milliseconds after 2026-11-29T12:00:00Z.
fn at(ms: u64) -> String {
    format!("2026-11-29T12:00:{:02}.{:03}000000Z", ms / 1000, ms % 1000)
}

/// Found by the respond properties (hydrate shard): a settlement retired while its bundle still
/// had pending rows, when the bundle's turn was not the turn of the newest row held (here a row
/// of a turn whose event has not arrived yet), so the first answered row of the handling showed
/// the bundle's other questions again although the user's answer had won.
#[test]
fn regression_a_settlement_holds_until_every_row_of_its_bundle_is_terminal() {
    let mut store = Store::new();
    let rev = |sequence: u64| json!({"epoch": "1", "sequence": sequence});
    let question = |id: &str, status: &str, created: u64, updated: u64| {
        json!({"id": id, "message_id": id, "session_id": "s1", "task_id": "task-1", "turn_id": "t1",
               "type": "clarification_request", "author_type": "agent",
               "metadata": {"pending_id": "p1", "status": status},
               "created_at": at(created), "updated_at": at(updated)})
    };
    let session = json!({"id": "s1", "task_id": "task-1", "state": "RUNNING", "updated_at": at(1),
                         "started_at": at(1), "pending_action": "clarification",
                         "pending_action_revision": rev(3)});
    call(
        &mut store,
        "applySessionList",
        &[json!("task-1"), json!([session])],
    )
    .unwrap();
    let turn = json!({"id": "t1", "session_id": "s1", "task_id": "task-1", "started_at": at(1),
                      "created_at": at(1), "updated_at": at(1), "completed_at": null});
    call(&mut store, "applyTurnList", &[json!("s1"), json!([turn])]).unwrap();
    // The newest row names turn t2, whose event is still on its way: t1 stays current.
    let newer = json!({"id": "m3", "session_id": "s1", "task_id": "task-1", "turn_id": "t2",
                       "type": "message", "author_type": "agent", "created_at": at(9),
                       "updated_at": at(9)});
    let page = json!([
        question("q1", "pending", 2, 2),
        question("q2", "pending", 3, 3),
        newer
    ]);
    call(&mut store, "applyMessagePage", &[json!("s1"), page]).unwrap();
    let live = |store: &Store| {
        store
            .pending_clarification("s1")
            .0
            .map(|b| b.map(|b| b.message_ids.join(",")))
    };
    assert_eq!(live(&store), Some(Some("q1,q2".into())));
    let attempt = store.respond_start("s1", "p1").unwrap().attempt;
    let reply = json!({"status": 200, "body": {"outcome": "success", "success": true, "claimed": true,
                       "session": {"id": "s1", "pending_action": null, "pending_action_revision": rev(10)}}});
    let replied =
        api::respond_reply(&mut store, &Json::new(&json!(attempt)), &Json::new(&reply)).unwrap();
    assert!(replied.applied);
    assert_eq!(live(&store), Some(None));
    // The handling's first write arrives: q2 answered (q1's is still on its way).
    let mut event = question("q2", "answered", 3, 8);
    event["pending_action"] = json!("clarification");
    event["pending_action_revision"] = rev(8);
    call(&mut store, "applyMessageEvent", &[json!("updated"), event]).unwrap();
    assert_eq!(live(&store), Some(None), "the won bundle shows q1 again");
    assert_eq!(store.settled_bundles("s1").len(), 1);
    // q1's write: every row terminal, the settlement retires and nothing shows.
    let mut event = question("q1", "answered", 2, 7);
    event["pending_action"] = json!(null);
    event["pending_action_revision"] = rev(7);
    call(&mut store, "applyMessageEvent", &[json!("updated"), event]).unwrap();
    assert_eq!(live(&store), Some(None));
    assert!(store.settled_bundles("s1").is_empty());
}
/// Found by the respond properties (hydrate shard): a reply that won while an older projection
/// hid the bundle (its rows still pending in the current turn) settled nothing, so the next
/// newer projection showed the answered question again until its answered row arrived. A reply
/// now settles its bundle while any of its rows is pending in the data (SPEC §13), whatever
/// discovery shows at that moment.
#[test]
fn regression_a_won_reply_settles_a_bundle_an_older_projection_hides() {
    let mut store = Store::new();
    let rev = |sequence: u64| json!({"epoch": "1", "sequence": sequence});
    let row = |id: &str, kind: &str, metadata: Value, turn: Option<&str>, created: u64| {
        let mut row = json!({"id": id, "message_id": id, "session_id": "s1", "task_id": "task-1",
               "type": kind, "author_type": "agent", "metadata": metadata,
               "created_at": at(created), "updated_at": at(created)});
        if let Some(turn) = turn {
            row["turn_id"] = json!(turn);
        }
        row
    };
    let turn = json!({"id": "t1", "session_id": "s1", "task_id": "task-1", "started_at": at(1),
                      "created_at": at(1), "updated_at": at(1), "completed_at": null});
    call(&mut store, "applyTurnList", &[json!("s1"), json!([turn])]).unwrap();
    let question = row(
        "q1",
        "clarification_request",
        json!({"pending_id": "p1", "status": "pending"}),
        Some("t1"),
        5,
    );
    call(
        &mut store,
        "applyMessagePage",
        &[json!("s1"), json!([question])],
    )
    .unwrap();
    let live = |store: &Store| {
        store
            .pending_clarification("s1")
            .0
            .map(|b| b.and_then(|b| b.pending_id.map(String::from)))
    };
    assert_eq!(live(&store), Some(Some("p1".into())));
    let attempt = store.respond_start("s1", "p1").unwrap().attempt;
    // A late event from before the question (projected clean then) hides it for now.
    let mut old = row("m0", "message", json!({}), None, 2);
    old["pending_action"] = json!(null);
    old["pending_action_revision"] = rev(3);
    call(&mut store, "applyMessageEvent", &[json!("added"), old]).unwrap();
    assert_eq!(live(&store), Some(None));
    let reply = json!({"status": 200, "body": {"outcome": "success", "success": true, "claimed": true,
                       "session": {"id": "s1", "pending_action": null, "pending_action_revision": rev(11)}}});
    let replied =
        api::respond_reply(&mut store, &Json::new(&json!(attempt)), &Json::new(&reply)).unwrap();
    assert!(
        replied.applied,
        "the won answer settles its bundle (rows pending in the current turn)"
    );
    // Newer: the agent asked another question (q1's answered row is still on its way).
    let mut next = row("m2", "message", json!({}), None, 20);
    next["pending_action"] = json!("clarification");
    next["pending_action_revision"] = rev(12);
    call(&mut store, "applyMessageEvent", &[json!("added"), next]).unwrap();
    assert_ne!(
        live(&store),
        Some(Some("p1".into())),
        "the won question shows again"
    );
}

/// Found by `hydrating_anywhere_in_a_random_delivery_converges` (2,372 histories, CI stop 45): a
/// bare 409 (no body, no position) settled a bundle of a turn the server had already left; its
/// rows stay pending in the data for good, and the rows kept deciding the session's action over
/// every later projection. A settled bundle outside the current turn says nothing of the action.
#[test]
fn regression_a_settled_bundle_of_a_left_turn_leaves_the_later_projections_deciding() {
    let mut store = waiting();
    let a = store.respond_start(S, "p1").unwrap().attempt;
    let replied = store.respond_reply(a, Transport::Reply(409, None), None);
    assert!(replied.applied);
    assert_eq!(store.session_pending_action(S).0, Some(None));
    // The server had moved on: t1 completed, t2 open, and a newer projection says a question
    // waits (its rows not loaded yet); p1's rows stay pending.
    store.apply_turn_list(S, vec![turn("t1", true, 1), turn("t2", false, 10)]);
    store.apply_session_event(&Session {
        id: S.into(),
        task_id: Some(TASK.into()),
        state: Some(SessionState::WaitingForInput),
        is_primary: true,
        pending_action: Some(Some(PendingAction::Clarification)),
        pending_action_revision: Some(rev(9)),
        updated_at: Some(ts(12)),
    });
    assert_eq!(live(&store), Some(None));
    assert_eq!(
        store.session_pending_action(S).0,
        Some(Some(PendingAction::Clarification))
    );
    // The settlement itself holds: p1 is never live again, whatever older input arrives.
    store.apply_turn_list(S, vec![turn("t1", false, 1)]);
    assert_ne!(live(&store), Some(Some("p1".into())));
    assert_eq!(rehydrated(&store).settled_bundles(S).len(), 1);
}
