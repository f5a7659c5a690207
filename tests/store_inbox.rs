//! The workspace inbox in the store (SPEC §14): pages placed by their stream position, rows kept
//! right from the frames the store takes, the answer's state — as cases, and as a convergence
//! property over random histories (frames with duplicates, pages read anywhere and delivered
//! anywhere, the boot seed, the user's answers).
#![cfg(not(target_arch = "wasm32"))]

mod store_common;

use proptest::prelude::*;
use serde_json::{json, Value};
use task_projection::rules::action::{ReplyBody, Transport};
use task_projection::rules::model::{
    Message, MessageKind, PendingAction, RequestStatus, Revision, Session, SessionState, Turn,
    TurnFlags,
};
use task_projection::rules::revision::PendingProjection;
use task_projection::rules::time::Timestamp;
use task_projection::store::{MessageEvent, MessageEventKind, ProjectionStore};
use task_projection::wire::{store_api as api, Json};

type Store = ProjectionStore<Value>;

const WS: &str = "ws-1";
const STREAM: &str = "stream-1";

fn text(second: u64) -> String {
    format!(
        "2026-11-29T{:02}:{:02}:{:02}Z",
        12 + second / 3600 % 12,
        second / 60 % 60,
        second % 60
    )
}

fn ts(second: u64) -> Timestamp {
    Timestamp::parse(&text(second))
}

fn rev(sequence: u64) -> Revision {
    Revision {
        epoch: "1".into(),
        sequence,
    }
}

fn task_of(session: usize) -> String {
    format!("t{session}")
}

fn session_of(session: usize) -> String {
    format!("s{session}")
}

/// A session row or event: waiting for input, its projection at `sequence`.
fn session_row(session: usize, asking: bool, sequence: u64) -> Session {
    Session {
        id: session_of(session),
        task_id: Some(task_of(session)),
        state: Some(SessionState::WaitingForInput),
        is_primary: true,
        pending_action: Some(asking.then_some(PendingAction::Clarification)),
        pending_action_revision: Some(rev(sequence)),
        updated_at: Some(ts(sequence)),
    }
}

fn question(pending: &str, pending_now: bool, created: u64, updated: u64) -> Message {
    Message {
        id: format!("m-{pending}"),
        turn_id: Some("t1".into()),
        kind: MessageKind::ClarificationRequest,
        status: if pending_now {
            RequestStatus::Pending
        } else {
            RequestStatus::Answered
        },
        pending_id: Some(pending.into()),
        question_total: None,
        flags: Default::default(),
        created_at: ts(created),
        updated_at: Some(ts(updated)),
    }
}

/// A store that lists `sessions` sessions (one task each), the first `held` of them with their
/// turns and (empty) messages loaded.
fn listed(sessions: usize, held: usize) -> Store {
    let mut store = Store::new();
    store.apply_stream_position(STREAM, 0);
    for s in 0..sessions {
        store
            .apply_session_list(&task_of(s), vec![session_row(s, false, 0)])
            .expect("a session list");
        if s < held {
            store.apply_turn_list(
                &session_of(s),
                vec![Turn {
                    id: "t1".into(),
                    completed: false,
                    started_at: ts(0),
                    created_at: ts(0),
                    updated_at: None,
                    flags: TurnFlags::default(),
                }],
            );
            store.apply_message_page(&session_of(s), &[]);
        }
    }
    store
}

/// A store call through the dispatcher, with JSON arguments: its reason's code.
fn call(store: &mut Store, name: &str, args: &[Value]) -> Result<&'static str, api::CallError> {
    let arg = |i: usize| args.get(i).map_or(Json::ABSENT, Json::new);
    api::dispatch(
        store,
        name,
        arg,
        |j: Json<'_>| j.0.cloned().unwrap_or(Value::Null),
        String::new,
    )
    .map(|o| o.reason().map_or("", |r| r.code()))
}

fn inbox(store: &Store, now: Option<&str>) -> Value {
    let now = now.map(Timestamp::parse);
    store_common::inbox_json(&store.inbox(WS, now.as_ref()))
}

/// The answer's rows as `(session, pending)`.
fn rows(answer: &Value) -> Vec<(String, String)> {
    answer["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["sessionId"].as_str().unwrap_or_default().to_owned(),
                r["pendingId"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// A page row of the reference server's shape.
fn row_json(session: usize, pending: &str, created: u64) -> Value {
    json!({"pending_id": pending, "task_id": task_of(session), "session_id": session_of(session),
           "session_state": "WAITING_FOR_INPUT", "task_title": format!("Task {session}"),
           "created_at": text(created), "context": "", "messages": []})
}

fn page(rows: &[Value], hidden: u64, truncated: bool, offset: u64) -> Value {
    let mut page = json!({"bundles": rows, "count": rows.len(), "hidden_count": hidden,
                          "next_snooze_expiry": null, "stream": STREAM, "offset": offset});
    if truncated {
        page["next_cursor"] = json!("abcd");
    }
    page
}

fn apply_page(store: &mut Store, page: &Value) {
    call(store, "applyInboxPage", &[json!(WS), page.clone()]).expect("a page");
}

/// A session event as a frame at `offset`.
fn session_frame(store: &mut Store, session: usize, asking: bool, offset: u64) {
    store.begin_frame(Some(offset));
    store.apply_session_event(&session_row(session, asking, offset));
    store.apply_frame_offset(offset);
}

/// A message event of a held session as a frame at `offset` (its projection with it).
fn message_frame(store: &mut Store, session: usize, message: Message, asking: bool, offset: u64) {
    store.begin_frame(Some(offset));
    let kind = if message.status == RequestStatus::Pending {
        MessageEventKind::Added
    } else {
        MessageEventKind::Updated
    };
    store.apply_message_event(
        kind,
        &MessageEvent {
            session_id: session_of(session),
            task_id: Some(task_of(session)),
            message,
            projection: Some(PendingProjection {
                action: Some(asking.then_some(PendingAction::Clarification)),
                revision: Some(rev(offset)),
            }),
        },
    );
    store.apply_frame_offset(offset);
}

#[test]
fn a_page_is_the_answer_and_its_count_is_its_rows() {
    let mut store = listed(3, 0);
    assert_eq!(inbox(&store, None)["state"], "unknown");
    assert_eq!(inbox(&store, None)["reread"], true);
    let rows = [row_json(1, "p1", 5), row_json(0, "p0", 3)];
    apply_page(&mut store, &page(&rows, 0, false, 0));
    let answer = inbox(&store, None);
    assert_eq!(answer["state"], "known");
    assert_eq!(answer["count"], 2);
    // The inbox order, whatever the page's: created_at, then pending_id.
    assert_eq!(
        self::rows(&answer),
        [("s0".into(), "p0".into()), ("s1".into(), "p1".into())]
    );
    // The page's row, by its place in the page (the caller keeps it).
    assert_eq!(answer["rows"][0]["row"], 1);
    // Caught up: known, no rows.
    apply_page(&mut store, &page(&[], 0, false, 1));
    let answer = inbox(&store, None);
    assert_eq!(
        (answer["state"].clone(), answer["count"].clone()),
        (json!("known"), json!(0))
    );
}

#[test]
fn a_late_page_never_undoes_a_newer_frame_and_an_earlier_one_is_not_applied_again() {
    let mut store = listed(2, 0);
    // Read at offset 4 with s0 asking; a frame at 5 (delivered before the page) ended it.
    session_frame(&mut store, 0, false, 5);
    apply_page(&mut store, &page(&[row_json(0, "p0", 3)], 0, false, 4));
    assert_eq!(inbox(&store, None)["state"], "known");
    assert!(rows(&inbox(&store, None)).is_empty());
    // A later read replaces it; an earlier one (offset 2) arriving after it is ignored.
    apply_page(&mut store, &page(&[row_json(1, "p1", 6)], 0, false, 6));
    let before = inbox(&store, None);
    let older = page(&[row_json(0, "p0", 1)], 0, false, 2);
    assert_eq!(
        call(&mut store, "applyInboxPage", &[json!(WS), older]).unwrap(),
        "inbox_page_older"
    );
    assert_eq!(inbox(&store, None), before);
    // A read at the same place (a dismissal moves no offset) replaces it.
    apply_page(&mut store, &page(&[], 1, false, 6));
    assert!(rows(&inbox(&store, None)).is_empty());
    apply_page(&mut store, &page(&[row_json(1, "p1", 6)], 0, false, 6));
    // A frame at or before the page's offset, delivered after it, is already in it.
    session_frame(&mut store, 1, true, 6);
    assert_eq!(rows(&inbox(&store, None)), [("s1".into(), "p1".into())]);
}

#[test]
fn frames_after_the_page_end_rows_and_a_question_the_store_cannot_name_asks_for_a_read() {
    let mut store = listed(3, 0);
    apply_page(
        &mut store,
        &page(&[row_json(0, "p0", 1), row_json(1, "p1", 2)], 0, false, 2),
    );
    // s0 stopped asking (a projection that clears the bundle): its row goes, known.
    session_frame(&mut store, 0, false, 3);
    let answer = inbox(&store, None);
    assert_eq!(
        (answer["state"].clone(), rows(&answer)),
        (json!("known"), vec![("s1".into(), "p1".into())])
    );
    // s2 asks: a new bundle in a session whose rows the store does not hold.
    session_frame(&mut store, 2, true, 4);
    let answer = inbox(&store, None);
    assert_eq!(answer["state"], "unknown");
    assert_eq!(store.inbox(WS, None).state.as_str(), "inbox_session_moved");
    assert_eq!(answer["reread"], true);
    // The read the store asked for settles it.
    apply_page(
        &mut store,
        &page(&[row_json(1, "p1", 2), row_json(2, "p2", 4)], 0, false, 4),
    );
    assert_eq!(inbox(&store, None)["state"], "known");
    assert_eq!(rows(&inbox(&store, None)).len(), 2);
}

#[test]
fn a_new_bundle_whose_rows_the_store_holds_is_a_row_unless_the_page_may_hide_it() {
    let mut store = listed(2, 2);
    apply_page(&mut store, &page(&[], 0, false, 0));
    message_frame(&mut store, 0, question("p0", true, 7, 7), true, 1);
    let answer = inbox(&store, None);
    assert_eq!(answer["state"], "known");
    assert_eq!(rows(&answer), [("s0".into(), "p0".into())]);
    assert_eq!(answer["rows"][0]["row"], Value::Null);
    assert_eq!(answer["rows"][0]["createdAt"], text(7));
    // With one bundle hidden by the sidecar, a bundle the page does not name may be that one.
    apply_page(&mut store, &page(&[], 1, false, 1));
    message_frame(&mut store, 1, question("p1", true, 8, 8), true, 2);
    assert_eq!(inbox(&store, None)["state"], "unknown");
}

#[test]
fn a_truncated_page_after_a_removal_is_not_known_and_answering_the_last_row_is_not_caught_up() {
    let mut store = listed(2, 2);
    message_frame(&mut store, 0, question("p0", true, 1, 1), true, 1);
    apply_page(&mut store, &page(&[row_json(0, "p0", 1)], 0, true, 1));
    let answer = inbox(&store, None);
    assert_eq!(
        (answer["state"].clone(), answer["more"].clone()),
        (json!("known"), json!(true))
    );
    // The user answers the only row shown of a page with more behind it.
    let started = store.respond_start("s0", "p0").expect("live");
    let body = ReplyBody {
        success: Some(true),
        claimed: Some(true),
        outcome: None,
        gone: false,
    };
    let replied = store.respond_reply(started.attempt, Transport::Reply(200, Some(body)), None);
    assert!(replied.applied);
    let answer = inbox(&store, None);
    assert!(rows(&answer).is_empty());
    assert_eq!(answer["state"], "unknown");
    assert_eq!(
        store.inbox(WS, None).state.as_str(),
        "inbox_truncated_removal"
    );
}

#[test]
fn a_snooze_that_ended_asks_for_a_read() {
    let mut store = listed(1, 0);
    let mut p = page(&[], 1, false, 0);
    p["next_snooze_expiry"] = json!(text(100));
    apply_page(&mut store, &p);
    assert_eq!(inbox(&store, Some(&text(99)))["state"], "known");
    assert_eq!(inbox(&store, None)["nextSnoozeExpiry"], text(100));
    let ended = inbox(&store, Some(&text(100)));
    assert_eq!(
        (ended["state"].clone(), ended["reread"].clone()),
        (json!("unknown"), json!(true))
    );
}

#[test]
fn a_failed_read_is_an_error_never_caught_up_and_the_seed_holds_until_a_frame() {
    let mut store = listed(1, 0);
    call(
        &mut store,
        "applyInboxSeed",
        &[json!({"workspaceId": WS, "count": 3, "hasMore": false, "nextSnoozeExpiry": null})],
    )
    .unwrap();
    let answer = inbox(&store, None);
    assert_eq!(answer["state"], "unknown");
    assert_eq!(answer["seed"], json!({"count": 3, "hasMore": false}));
    session_frame(&mut store, 0, true, 1);
    assert_eq!(inbox(&store, None)["seed"], Value::Null);
    call(&mut store, "inboxReadFailed", &[json!(WS)]).unwrap();
    let answer = inbox(&store, None);
    assert_eq!(
        (answer["state"].clone(), answer["reread"].clone()),
        (json!("error"), json!(false))
    );
    apply_page(&mut store, &page(&[], 0, false, 1));
    assert_eq!(inbox(&store, None)["state"], "known");
    // Another workspace's answer is not this one's.
    assert_eq!(
        store_common::inbox_json(&store.inbox("ws-2", None))["state"],
        "unknown"
    );
}

#[test]
fn a_malformed_page_is_refused_whole_and_changes_nothing() {
    let mut store = listed(2, 0);
    apply_page(&mut store, &page(&[row_json(0, "p0", 1)], 0, false, 1));
    let before = inbox(&store, None);
    let bad = |f: &dyn Fn(&mut Value)| {
        let mut p = page(&[row_json(0, "p0", 1), row_json(1, "p1", 2)], 0, false, 3);
        f(&mut p);
        p
    };
    let cases: Vec<(Value, &str)> = vec![
        (json!("nope"), "page"),
        (bad(&|p| p["bundles"] = json!({})), "page.bundles"),
        (bad(&|p| p["count"] = json!(5)), "page.count"),
        (
            bad(&|p| p["bundles"][1]["session_id"] = json!("s0")),
            "page.bundles[1].session_id",
        ),
        (
            bad(&|p| p["bundles"][1]["pending_id"] = json!("p0")),
            "page.bundles[1].pending_id",
        ),
        (
            bad(&|p| p["bundles"][0]["pending_id"] = json!("")),
            "page.bundles[0].pending_id",
        ),
        (
            bad(&|p| p["bundles"][0]["created_at"] = json!(null)),
            "page.bundles[0].created_at",
        ),
        (
            bad(&|p| p["bundles"][0]["task_id"] = json!(3)),
            "page.bundles[0].task_id",
        ),
        (bad(&|p| p["hidden_count"] = json!(-1)), "page.hidden_count"),
        (bad(&|p| p["offset"] = json!(null)), "page.offset"),
        (bad(&|p| p["next_cursor"] = json!(1)), "page.next_cursor"),
    ];
    for (page, field) in cases {
        match call(&mut store, "applyInboxPage", &[json!(WS), page]) {
            Err(api::CallError::Wire(e)) => assert_eq!(e.field(), field),
            other => panic!("{field}: {other:?}"),
        }
        assert_eq!(inbox(&store, None), before);
    }
    for workspace in [json!(""), json!(3), Value::Null] {
        assert!(call(
            &mut store,
            "applyInboxPage",
            &[workspace.clone(), page(&[], 0, false, 9)]
        )
        .is_err());
        assert!(call(&mut store, "inboxReadFailed", &[workspace]).is_err());
    }
    assert!(call(
        &mut store,
        "applyInboxSeed",
        &[json!({"workspaceId": WS, "count": -1})]
    )
    .is_err());
    assert_eq!(inbox(&store, None), before);
}

// ---- the convergence property ----------------------------------------------------------------

/// One step of the server's history.
#[derive(Clone, Debug)]
enum Op {
    /// The session asks a new bundle (when it has none) or ends its bundle.
    Toggle(usize),
    /// A frame about the session that changes no bundle.
    Noise(usize),
    /// The requester hides (or shows again) the session's bundle: no frame.
    Hide(usize),
    /// The user answers the session's bundle (it ends at the server; the reply comes later).
    Answer(usize),
}

fn op(sessions: usize) -> impl Strategy<Value = Op> {
    let s = 0..sessions;
    prop_oneof![
        4 => s.clone().prop_map(Op::Toggle),
        1 => s.clone().prop_map(Op::Noise),
        1 => s.clone().prop_map(Op::Hide),
        2 => s.prop_map(Op::Answer),
    ]
}

#[derive(Clone, Debug, Default)]
struct Server {
    /// Per session: its bundle (`pending_id`, asked at) and whether the sidecar hides it.
    bundles: Vec<Option<(String, u64, bool)>>,
    next: usize,
}

/// What the client receives.
#[derive(Clone, Debug)]
enum Delivery {
    /// Frame `offset` (its session, a question message or projection).
    Frame {
        offset: u64,
        session: usize,
        bundle: Option<(String, u64)>,
        ended: Option<(String, u64)>,
    },
    /// A page read after history step `at` (the server's rows then, at its offset).
    Page {
        offset: u64,
        rows: Vec<Value>,
        hidden: u64,
        truncated: bool,
    },
    /// The user's answer to `pending` and the server's reply.
    Answered { session: usize, pending: String },
}

struct History {
    deliveries: Vec<Delivery>,
    /// The server's visible rows (sorted) and hidden count after each offset's frame, as the
    /// frames left them (the sidecar as of the end).
    final_rows: Vec<(String, String)>,
    final_offset: u64,
    /// Per offset: each session's live bundle after that frame.
    live_at: Vec<Vec<Option<(String, u64)>>>,
    /// Pages' sidecar views: per page offset, the hidden pending ids when it was read.
    final_page: Value,
}

fn visible(server: &Server, limit: usize) -> (Vec<Value>, u64, bool) {
    let mut rows: Vec<(u64, String, usize)> = Vec::new();
    let mut hidden = 0;
    for (s, b) in server.bundles.iter().enumerate() {
        if let Some((p, at, hide)) = b {
            if *hide {
                hidden += 1;
            } else {
                rows.push((*at, p.clone(), s));
            }
        }
    }
    rows.sort();
    let truncated = rows.len() > limit;
    rows.truncate(limit);
    (
        rows.into_iter()
            .map(|(at, p, s)| row_json(s, &p, at))
            .collect(),
        hidden,
        truncated,
    )
}

/// A page read now: the server's visible rows at `offset`.
fn read(server: &Server, limit: usize, offset: u64) -> Delivery {
    let (rows, hidden, truncated) = visible(server, limit);
    Delivery::Page {
        offset,
        rows,
        hidden,
        truncated,
    }
}

fn history(sessions: usize, ops: &[Op], limit: usize) -> History {
    let mut server = Server {
        bundles: vec![None; sessions],
        next: 0,
    };
    let mut deliveries = Vec::new();
    let mut offset = 0u64;
    let mut live_at = vec![vec![None; sessions]];
    deliveries.push(read(&server, limit, offset));
    for op in ops {
        match *op {
            Op::Toggle(s) | Op::Answer(s) => {
                let answer = matches!(op, Op::Answer(_));
                let ended = server.bundles[s].take();
                if ended.is_none() && answer {
                    continue;
                }
                offset += 1;
                let bundle = if ended.is_none() {
                    server.next += 1;
                    let p = format!("p{}", server.next);
                    server.bundles[s] = Some((p.clone(), offset, false));
                    Some((p, offset))
                } else {
                    None
                };
                let ended = ended.map(|(p, at, _)| (p, at));
                if answer {
                    if let Some((p, _)) = &ended {
                        deliveries.push(Delivery::Answered {
                            session: s,
                            pending: p.clone(),
                        });
                    }
                }
                deliveries.push(Delivery::Frame {
                    offset,
                    session: s,
                    bundle,
                    ended,
                });
            }
            Op::Noise(s) => {
                offset += 1;
                deliveries.push(Delivery::Frame {
                    offset,
                    session: s,
                    bundle: None,
                    ended: None,
                });
            }
            Op::Hide(s) => {
                if let Some(b) = server.bundles[s].as_mut() {
                    b.2 = !b.2;
                }
            }
        }
        while live_at.len() <= usize::try_from(offset).unwrap() {
            live_at.push(
                server
                    .bundles
                    .iter()
                    .map(|b| b.as_ref().map(|(p, at, _)| (p.clone(), *at)))
                    .collect(),
            );
        }
        deliveries.push(read(&server, limit, offset));
    }
    let (rows, hidden, truncated) = visible(&server, usize::MAX);
    let final_rows = rows
        .iter()
        .map(|r| {
            (
                r["session_id"].as_str().unwrap().to_owned(),
                r["pending_id"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let _ = truncated;
    History {
        deliveries,
        final_rows,
        final_offset: offset,
        live_at,
        final_page: page(&rows, hidden, false, offset),
    }
}

/// What the property's histories covered.
#[derive(Debug, Default)]
struct Counts {
    histories: u64,
    deliveries: u64,
    known: u64,
    unknown: u64,
    store_rows: u64,
    settled: u64,
    truncated_known: u64,
    pages_ignored: u64,
}

/// How many histories the property runs (`INBOX_HISTORIES` overrides).
fn histories() -> u32 {
    std::env::var("INBOX_HISTORIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000)
}

/// Frames (in order, with duplicates re-delivered after their first delivery), pages read after
/// any step and delivered anywhere, the boot seed and the user's answers: whenever the inbox says
/// it is known, every row it shows is live at the place the store stands (the later of its last
/// frame and its page) and every live bundle it does not show is one the page said is hidden,
/// less the bundles the user's answer settled; the count is the rows after every step; after
/// every frame and a read at the end it is known and the server's rows.
#[test]
fn the_inbox_converges_and_is_never_known_wrong() {
    use proptest::test_runner::{Config, TestRunner};
    let counts = std::cell::RefCell::new(Counts::default());
    let strategy = (
        1usize..5,
        0usize..5,
        prop::sample::select(vec![1usize, 2, 50]),
        prop::collection::vec(op(4), 1..24),
        prop::collection::vec(any::<u32>(), 64),
        any::<bool>(),
    );
    let mut runner = TestRunner::new(Config {
        cases: histories(),
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&strategy, |(sessions, held, limit, ops, order, seed)| {
            let mut counts = counts.borrow_mut();
            counts.histories += 1;
            let ops: Vec<Op> = ops
                .into_iter()
                .filter(|o| match o {
                    Op::Toggle(s) | Op::Noise(s) | Op::Hide(s) | Op::Answer(s) => *s < sessions,
                })
                .collect();
            let history = history(sessions, &ops, limit);
            let mut store = listed(sessions, held.min(sessions));
            if seed {
                call(
                    &mut store,
                    "applyInboxSeed",
                    &[json!({"workspaceId": WS, "count": 0, "hasMore": false})],
                )
                .unwrap();
            }
            // Frames stay in order; pages and answers move anywhere after... anywhere. Duplicate frames.
            let frames: Vec<&Delivery> = history
                .deliveries
                .iter()
                .filter(|d| matches!(d, Delivery::Frame { .. }))
                .collect();
            let mut others: Vec<&Delivery> = history
                .deliveries
                .iter()
                .filter(|d| !matches!(d, Delivery::Frame { .. }))
                .collect();
            let mut schedule: Vec<&Delivery> = frames.clone();
            for (i, d) in others.drain(..).enumerate() {
                let at = order[i % order.len()] as usize % (schedule.len() + 1);
                schedule.insert(at, d);
            }
            // Duplicates: a frame delivered again (a resumed stream), after its first delivery.
            for (i, r) in order.iter().take(8).enumerate() {
                if !frames.is_empty() && r % 3 == 0 {
                    let dup = frames[(*r as usize / 3 + i) % frames.len()];
                    let first = schedule
                        .iter()
                        .position(|d| std::ptr::eq(*d, dup))
                        .unwrap_or(0);
                    let at = first + 1 + (*r as usize) % (schedule.len() - first);
                    schedule.insert(at, dup);
                }
            }
            let mut h = 0u64;
            let mut page_at: Option<u64> = None;
            let mut settled: Vec<String> = Vec::new();
            for d in &schedule {
                match d {
                    Delivery::Frame {
                        offset,
                        session,
                        bundle,
                        ended,
                    } => {
                        if (*session) < held.min(sessions) {
                            if let Some((p, at)) = ended {
                                message_frame(
                                    &mut store,
                                    *session,
                                    question(p, false, *at, *offset),
                                    false,
                                    *offset,
                                );
                            }
                            if let Some((p, at)) = bundle {
                                message_frame(
                                    &mut store,
                                    *session,
                                    question(p, true, *at, *offset),
                                    true,
                                    *offset,
                                );
                            }
                            if bundle.is_none() && ended.is_none() {
                                session_frame(
                                    &mut store,
                                    *session,
                                    history.live_at[*offset as usize][*session].is_some(),
                                    *offset,
                                );
                            }
                        } else {
                            session_frame(
                                &mut store,
                                *session,
                                bundle.is_some()
                                    || (ended.is_none()
                                        && history.live_at[*offset as usize][*session].is_some()),
                                *offset,
                            );
                        }
                        h = h.max(*offset);
                    }
                    Delivery::Page {
                        offset,
                        rows,
                        hidden,
                        truncated,
                    } => {
                        let reason = call(
                            &mut store,
                            "applyInboxPage",
                            &[json!(WS), page(rows, *hidden, *truncated, *offset)],
                        )
                        .expect("a page");
                        counts.pages_ignored += u64::from(reason == "inbox_page_older");
                        if page_at.is_none_or(|p| *offset > p) {
                            page_at = Some(*offset);
                        }
                    }
                    Delivery::Answered { session, pending } => {
                        if let Ok(started) = store.respond_start(&session_of(*session), pending) {
                            let body = ReplyBody {
                                success: Some(true),
                                claimed: Some(true),
                                outcome: None,
                                gone: false,
                            };
                            if store
                                .respond_reply(
                                    started.attempt,
                                    Transport::Reply(200, Some(body)),
                                    None,
                                )
                                .applied
                            {
                                settled.push(pending.clone());
                                counts.settled += 1;
                            }
                        }
                    }
                }
                let answer = inbox(&store, None);
                counts.deliveries += 1;
                if answer["state"] == "known" {
                    counts.known += 1
                } else {
                    counts.unknown += 1
                }
                if answer["state"] == "known" && answer["more"] == true {
                    counts.truncated_known += 1
                }
                counts.store_rows += answer["rows"].as_array().map_or(0, |r| {
                    r.iter().filter(|r| r["row"].is_null()).count() as u64
                });
                if std::env::var("INBOX_DEBUG").is_ok() {
                    eprintln!(
                        "{d:?}\n  -> {} {:?} h={h} page={page_at:?}",
                        answer["state"],
                        rows(&answer)
                    );
                }
                prop_assert_eq!(answer["count"].as_u64(), Some(rows(&answer).len() as u64));
                if answer["state"] == "known" && answer["more"] == false {
                    // The server's bundles at the place the store stands, hidden as its page said.
                    let at = h.max(page_at.unwrap_or(0));
                    let mut expected: Vec<(u64, String, String)> = history.live_at[at as usize]
                        .iter()
                        .enumerate()
                        .filter_map(|(s, b)| {
                            b.as_ref().map(|(p, t)| (*t, session_of(s), p.clone()))
                        })
                        .filter(|(_, _, p)| !settled.contains(p))
                        .collect();
                    expected.sort_by(|a, b| (a.0, &a.2).cmp(&(b.0, &b.2)));
                    let shown: Vec<(String, String)> = rows(&answer);
                    // Every row shown is live there; a live one not shown is hidden by the sidecar.
                    for r in &shown {
                        prop_assert!(
                            expected.iter().any(|(_, s, p)| (s, p) == (&r.0, &r.1)),
                            "shown {:?}, live {:?}",
                            r,
                            expected
                        );
                    }
                    let missing = expected
                        .iter()
                        .filter(|(_, s, p)| !shown.contains(&(s.clone(), p.clone())))
                        .count() as u64;
                    prop_assert!(
                        missing <= answer["hiddenCount"].as_u64().unwrap(),
                        "missing {} of {:?}, shown {:?}",
                        missing,
                        expected,
                        shown
                    );
                }
            }
            // Every frame delivered; a read at the end: known, and the server's rows.
            apply_page(&mut store, &history.final_page);
            let answer = inbox(&store, None);
            prop_assert_eq!(&answer["state"], "known");
            let _ = history.final_offset;
            prop_assert_eq!(rows(&answer), history.final_rows.clone());
            Ok(())
        })
        .expect("the inbox property");
    let counts = counts.into_inner();
    println!("inbox convergence: {counts:?}");
    // The histories reach every case the rules decide.
    assert!(counts.known > 0 && counts.unknown > 0 && counts.store_rows > 0);
    assert!(counts.settled > 0 && counts.truncated_known > 0 && counts.pages_ignored > 0);
}
