//! Fuzz target `wire_decode`: arbitrary bytes; when they are JSON, the value goes to every
//! public decoder of `task_projection::wire`, every `wire::api` function and every
//! `wire::store_api` function, in every argument position (the whole value as the first, the
//! second and both arguments, and an array's elements as the arguments; `{"$undefined": true}`
//! is an absent argument or key, as in the scenario files).
//!
//! Checked: nothing panics; every error has a field path rooted at one of the call's argument
//! names, a stable code and a message of at most `common::MAX_MESSAGE_BYTES` bytes; a rejected
//! store call leaves the store's digest and version unchanged; the answers are consistent with
//! each other (indices in range, the bundle is pending clarification rows, the visible
//! transcript is the complement of the bundle, `compareRevisions` is antisymmetric and agrees
//! with `canReplaceRevision`, merging a projection with itself is the identity, summaries are
//! never both newer than each other); the timestamp and epoch orders are total orders on the
//! strings the value holds; and every decoder answers the same (value or error, with its code,
//! field and message) over the JSON as over its tape (`wire::tape::Writer`: what `js/read.js`
//! sends the wasm binding), unless the value holds a number beyond 2^53 - 1, which the tape
//! treats as inexact on purpose (tests/tape.rs pins that difference).

use std::cmp::Ordering;

use serde_json::{json, Value};
use task_projection::rules::model::{MessageKind, PendingAction};
use task_projection::rules::revision::{compare_epochs, epoch_is_well_formed};
use task_projection::rules::time::Timestamp;
use task_projection::rules::turn::CurrentTurn;
use task_projection::store::ProjectionStore;
use task_projection::wire::api::{self, Selection};
use task_projection::wire::tape::Writer;
use task_projection::wire::{self, events, store_api, Json, Path, Wire};
use task_projection::WireError;

#[path = "common.rs"]
mod common;

use common::{check_error, without_undefined};

pub fn run(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let whole = without_undefined(&value);
    let mut spreads: Vec<Vec<Option<Value>>> = vec![
        vec![whole.clone()],
        vec![None, whole.clone()],
        vec![whole.clone(), whole.clone()],
    ];
    if let Value::Array(items) = &value {
        spreads.push(items.iter().map(without_undefined).collect());
    }
    for args in &spreads {
        exercise(args);
        tape_agrees(args);
    }
    orders(&value);
}

/// `Ok` value, or the error checked against the call's argument names.
fn ok<T>(call: &str, roots: &[&str], result: Result<T, WireError>) -> Option<T> {
    match result {
        Ok(value) => Some(value),
        Err(error) => {
            check_error(&error, roots, call);
            None
        }
    }
}

fn exercise(args: &[Option<Value>]) {
    let arg = |i: usize| Json(args.get(i).and_then(Option::as_ref));
    let (a, b) = (arg(0), arg(1));
    let _ = decoders(&a);
    rules_api(&a, &b);
    store_calls(&a, &b);
}

/// Every public decoder of `wire` and `wire::events` on one value, errors checked against the
/// root `value`: each answer as text (the value, or the error with its message; a payload the
/// store would keep as `()`, since its type is the view's), so two views can be compared.
fn decoders<W: Wire + Clone>(v: &W) -> Vec<String> {
    let path = Path::Root("value");
    let roots = ["value"];
    let mut answers = vec![format!("flag {:?}", wire::flag(v))];
    macro_rules! each {
        ($($name:literal => $result:expr),* $(,)?) => {$(
            let result = $result;
            answers.push(match &result {
                Ok(value) => format!("{} {value:?}", $name),
                Err(error) => format!("{} {error:?} {error}", $name),
            });
            ok($name, &roots, result);
        )*};
    }
    each!(
        "array" => wire::array(v, &path),
        "object" => wire::object(v, &path),
        "string" => wire::string(v, &path),
        "optional_string" => wire::optional_string(v, &path),
        "timestamp" => wire::timestamp(v, &path),
        "optional_timestamp" => wire::optional_timestamp(v, &path),
        "session_state" => wire::session_state(v, &path),
        "pending_action" => wire::pending_action(v, &path),
        "revision" => wire::revision(v, &path),
        "projection" => wire::projection(v, &path),
        "turn" => wire::turn(v, &path),
        "turns" => wire::turns(v, &path),
        "message" => wire::message(v, &path),
        "messages" => wire::messages(v, &path),
        "optional_messages" => wire::optional_messages(v, &path),
        "scope" => wire::scope(v, &path),
        "session" => wire::session(v, &path),
        "sessions" => wire::sessions(v, &path),
        "summary" => wire::summary(v, &path),
        "task" => wire::task(v, &path),
        "boolean" => wire::boolean(v, &path),
        "unsigned" => wire::unsigned(v, &path),
        "message_event_kind" => events::message_event_kind(v, &path),
        "message_event" => events::message_event(v, &path),
        "turn_event" => events::turn_event(v, &path),
        "session_event" => events::session_event(v, &path),
        "summary_event" => events::summary_event(v, &path)
            .map(|(task, summary)| (task, summary.map(|(s, _)| s))),
        "task_input" => events::task_input(v, &path).map(|t| t.map_payload(|_| ())),
        "task_inputs" => events::task_inputs(v, &path)
            .map(|ts| ts.into_iter().map(|t| t.map_payload(|_| ())).collect::<Vec<_>>()),
    );
    answers
}

/// Whether `v` holds a number a JS Number may not carry exactly (beyond 2^53 - 1 in magnitude).
fn inexact(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.as_f64().is_none_or(|f| f.abs() > 9_007_199_254_740_991.0),
        Value::Array(items) => items.iter().any(inexact),
        Value::Object(map) => map.values().any(inexact),
        _ => false,
    }
}

/// Every decoder of `wire` and `wire::events` answers the same over the JSON as over its tape.
fn tape_agrees(args: &[Option<Value>]) {
    if args.iter().flatten().any(inexact) {
        return;
    }
    let refs: Vec<Option<&Value>> = args.iter().map(Option::as_ref).collect();
    let writer = Writer::args(&refs);
    let Some(tape) = writer.read() else {
        panic!("a Writer tape has no header");
    };
    for (i, arg) in args.iter().enumerate() {
        assert_eq!(
            decoders(&Json(arg.as_ref())),
            decoders(&tape.arg(i)),
            "the decoders over the JSON and over its tape"
        );
    }
}

/// The messages of a `messages` argument as the rules see them (absent: none).
fn messages_of(v: &Json<'_>) -> Option<Vec<task_projection::rules::model::Message>> {
    wire::optional_messages(v, &Path::Root("messages")).ok()
}

/// Every `wire::api` function, with the cross-checks between their answers.
fn rules_api(a: &Json<'_>, b: &Json<'_>) {
    // currentTurnId: a turn id is the id of one of the turns.
    if let Some(CurrentTurn::Turn(id)) = ok(
        "currentTurnId",
        &["turns", "sessionState"],
        api::current_turn_id(a, b),
    ) {
        let turns = wire::turns(a, &Path::Root("turns")).ok().flatten();
        assert!(
            turns.is_some_and(|t| t.iter().any(|t| t.id == id)),
            "currentTurnId answered {id:?}, not a turn of the list"
        );
    }
    if let Some(indices) = ok(
        "visibleTurnHistory",
        &["turns"],
        api::visible_turn_history(a),
    ) {
        let mut seen = indices.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(
            seen.len(),
            indices.len(),
            "visibleTurnHistory repeats an index"
        );
        assert!(indices.iter().all(|&i| i < a.len()));
    }

    // The clarification family over (messages, scope).
    let roots = ["messages", "scope"];
    let request = ok(
        "findPendingClarification",
        &roots,
        api::find_pending_clarification(a, b),
    );
    let bundle = ok(
        "pendingClarificationBundle",
        &roots,
        api::pending_clarification_bundle(a, b),
    );
    let visible = ok(
        "visibleTranscriptMessages",
        &roots,
        api::visible_transcript_messages(a, b),
    );
    if let (Some(request), Some(bundle), Some(visible)) = (request, bundle, visible) {
        let messages = messages_of(a).unwrap_or_default();
        let pending_request = |i: usize| {
            messages.get(i).is_some_and(|m| {
                m.kind == MessageKind::ClarificationRequest && m.status.is_pending()
            })
        };
        if let Some(i) = request {
            assert!(
                pending_request(i),
                "findPendingClarification: {i} is not a pending request"
            );
        }
        assert!(
            bundle.windows(2).all(|w| w[0] < w[1]),
            "the bundle is not in array order: {bundle:?}"
        );
        assert!(
            bundle.iter().all(|&i| pending_request(i)),
            "bundle row not pending: {bundle:?}"
        );
        if !bundle.is_empty() {
            assert!(
                request.is_some_and(|r| bundle.contains(&r)),
                "a bundle {bundle:?} without its request {request:?}"
            );
        }
        let complement: Vec<usize> = (0..messages.len())
            .filter(|i| !bundle.contains(i))
            .collect();
        assert_eq!(
            visible, complement,
            "visible transcript is not all but the bundle"
        );
    }
    ok(
        "hasPendingPermission",
        &["messages"],
        api::has_pending_permission(a),
    );
    ok(
        "sessionPendingAction",
        &["input"],
        api::session_pending_action(a),
    );
    ok(
        "taskPendingAction",
        &["sessions"],
        api::task_pending_action(a),
    );
    ok(
        "effectiveTaskPendingAction",
        &["task"],
        api::effective_task_pending_action(a),
    );

    // Revisions: antisymmetric comparison, replaceable exactly when not older.
    let ab = ok(
        "compareRevisions",
        &["a", "b"],
        api::compare_revisions_of(a, b),
    );
    let ba = ok(
        "compareRevisions",
        &["a", "b"],
        api::compare_revisions_of(b, a),
    );
    if let (Some(ab), Some(ba)) = (ab, ba) {
        assert_eq!(ab, ba.reverse(), "compareRevisions is not antisymmetric");
    }
    let replace = ok(
        "canReplaceRevision",
        &["held", "incoming"],
        api::can_replace_revision(a, b),
    );
    if let (Some(order), Some(replace)) = (ab, replace) {
        assert_eq!(
            replace,
            order != Ordering::Greater,
            "canReplaceRevision disagrees with compareRevisions ({order:?})"
        );
    }
    ok(
        "mergePendingProjection",
        &["held", "incoming"],
        api::merge_pending_projection(a, b),
    );
    if let Ok(own) = wire::projection(a, &Path::Root("held")) {
        let merged = ok(
            "mergePendingProjection",
            &["held", "incoming"],
            api::merge_pending_projection(a, a),
        );
        assert_eq!(
            merged,
            Some(own),
            "merging a projection with itself changed it"
        );
    }

    // Owner resolution: the answer is task-only, a listed session or the preferred id.
    if let Some(id) = ok(
        "resolveTaskSessionId",
        &["input"],
        api::resolve_task_session_id(a),
    ) {
        if !id.is_empty() {
            let listed = wire::sessions(&a.get("sessions"), &Path::Root("s"))
                .unwrap_or_default()
                .iter()
                .any(|s| s.id == id);
            let preferred = a.get("preferredSessionId");
            let preferred = preferred.string();
            assert!(
                listed || preferred == Some(id.as_str()),
                "resolveTaskSessionId answered {id:?}, neither listed nor preferred"
            );
        }
    }
    if let Some(Selection::Session(id)) =
        ok("selectionOutcome", &["input"], api::selection_outcome(a))
    {
        assert!(!id.is_empty(), "selectionOutcome: an empty session id");
    }

    // Summaries: never both newer than the other.
    let roots = ["incoming", "held"];
    let newer = ok(
        "isNewerStatusSummary",
        &roots,
        api::is_newer_status_summary(a, b),
    );
    let older = ok(
        "isNewerStatusSummary",
        &roots,
        api::is_newer_status_summary(b, a),
    );
    assert!(
        !(newer == Some(true) && older == Some(true)),
        "two summaries each newer than the other"
    );
    ok(
        "mergeFetchedStatusSummary",
        &["input"],
        api::merge_fetched_status_summary(a),
    );
    let _ = (api::normalize_start(a), api::normalize_end(a));
}

fn summary_payload(json: Json<'_>) -> Value {
    json.0.cloned().unwrap_or(Value::Null)
}

type Store = ProjectionStore<Value>;

/// One store call; a rejected call has a well-formed error and leaves the store unchanged.
fn checked<T>(
    store: &mut Store,
    name: &str,
    roots: &[&str],
    call: impl FnOnce(&mut Store) -> Result<T, WireError>,
) -> Option<T> {
    let before = (store.digest(), store.version());
    let result = call(store);
    if let Err(error) = &result {
        check_error(error, roots, name);
        assert_eq!(
            (store.digest(), store.version()),
            before,
            "{name}: a rejected call changed the store"
        );
    }
    result.ok()
}

/// Every `wire::store_api` function on one store; a rejected call changes nothing.
fn store_calls(a: &Json<'_>, b: &Json<'_>) {
    let mut store = Store::new();
    let s = &mut store;
    checked(s, "beginSelection", &["taskId", "options"], |s| {
        store_api::begin_selection(s, a, b, "ticket-1".into())
    });
    checked(s, "id", &["value"], |_| store_api::id(a, "value"));
    checked(s, "applySessionList", &["taskId", "sessions"], |s| {
        store_api::apply_session_list(s, a, b)
    });
    checked(s, "applyTurnList", &["sessionId", "turns"], |s| {
        store_api::apply_turn_list(s, a, b)
    });
    checked(s, "applyMessagePage", &["sessionId", "messages"], |s| {
        store_api::apply_message_page(s, a, b)
    });
    checked(s, "applyMessageEvent", &["kind", "payload"], |s| {
        store_api::apply_message_event(s, a, b)
    });
    checked(s, "applyMessageEvents", &["kind", "payloads"], |s| {
        store_api::apply_message_events(s, a, b)
    });
    for payload in [a, b] {
        checked(s, "applyTurnEvent", &["payload"], |s| {
            store_api::apply_turn_event(s, payload)
        });
        checked(s, "applySessionEvent", &["payload"], |s| {
            store_api::apply_session_event(s, payload)
        });
        checked(s, "applyStatusSummaryEvent", &["payload"], |s| {
            store_api::apply_status_summary_event(s, payload, summary_payload)
        });
        checked(s, "applyTaskUpdated", &["payload"], |s| {
            store_api::apply_task_updated(s, payload, summary_payload)
        });
    }
    s.begin_task_fetch();
    checked(s, "applyTaskSnapshot", &["token", "tasks"], |s| {
        store_api::apply_task_snapshot(s, a, b, summary_payload)
    });
    for tasks in [a, b] {
        let token = json!(s.begin_task_fetch());
        checked(s, "applyTaskSnapshot", &["token", "tasks"], |s| {
            store_api::apply_task_snapshot(s, &Json::new(&token), tasks, summary_payload)
        });
    }
    checked(s, "settleSelection", &["ticket", "outcome"], |s| {
        store_api::settle_selection(s, a, b)
    });
    checked(s, "beginSelection", &["taskId", "options"], |s| {
        store_api::begin_selection(s, a, b, "ticket-2".into())
    });
    let ticket = json!("ticket-2");
    checked(s, "settleSelection", &["ticket", "outcome"], |s| {
        store_api::settle_selection(s, &Json::new(&ticket), b)
    });
    checked(s, "setActiveTask", &["taskId"], |s| {
        store_api::set_active_task(s, a)
    });
    checked(s, "removeTask", &["taskId"], |s| {
        store_api::remove_task(s, a)
    });
    queries(&store, a, b);
}

/// Every query, on the ids the arguments name.
fn queries(store: &Store, a: &Json<'_>, b: &Json<'_>) {
    let mut ids: Vec<String> = Vec::new();
    for v in [a, b] {
        if let Some(text) = v.string() {
            ids.push(text.to_owned());
        }
        for key in ["id", "session_id", "message_id", "task_id"] {
            if let Some(text) = v.get(key).string() {
                ids.push(text.to_owned());
            }
        }
    }
    for id in &ids {
        let (bundle, _) = store.pending_clarification(id);
        let known = bundle.is_some();
        let bundle_ids = bundle.flatten().map(|b| b.message_ids).unwrap_or_default();
        // The same knowledge, the same rows (SPEC §11).
        assert_eq!(
            store.hidden_message_ids(id).0,
            known.then(|| bundle_ids.clone())
        );
        let (action, _) = store.session_pending_action(id);
        let (turn, _) = store.current_turn_id(id);
        if !bundle_ids.is_empty() {
            assert_eq!(action, Some(Some(PendingAction::Clarification)));
            assert_ne!(turn, CurrentTurn::None);
        }
        if store
            .session_state(id)
            .is_some_and(|st| !st.is_input_capable())
        {
            assert_eq!(
                turn,
                CurrentTurn::None,
                "a quarantined session with a current turn"
            );
        }
        let _ = store.has_pending_permission(id);
        let _ = store.task_pending_action(id);
        let _ = store.task_status_summary(id);
        let _ = store.session_projection(id);
        for preferred in ids.iter().map(String::as_str).chain([""]) {
            let _ = store.pending_owner(id, Some(preferred));
        }
        let _ = store.pending_owner(id, None);
    }
}

/// The strings of a value (at most `limit`).
fn strings<'v>(value: &'v Value, out: &mut Vec<&'v str>, limit: usize) {
    if out.len() >= limit {
        return;
    }
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out, limit)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            if out.len() < limit {
                out.push(k);
            }
            strings(v, out, limit);
        }),
        _ => {}
    }
}

/// The timestamp order and the epoch order are total orders on the value's strings: antisymmetric,
/// transitive, and `Equal` exactly when equal (timestamps).
fn orders(value: &Value) {
    let mut texts = Vec::new();
    strings(value, &mut texts, 10);
    let stamps: Vec<Timestamp> = texts.iter().map(|t| Timestamp::parse(t)).collect();
    total(&stamps, |x, y| x.cmp(y), "timestamp");
    for x in &stamps {
        for y in &stamps {
            assert_eq!(
                x.cmp(y) == Ordering::Equal,
                x == y,
                "timestamp order and equality disagree on {x:?}, {y:?}"
            );
        }
    }
    let epochs: Vec<&str> = texts
        .iter()
        .copied()
        .filter(|t| epoch_is_well_formed(t))
        .collect();
    total(&epochs, |x, y| compare_epochs(x, y), "epoch");
}

fn total<T: std::fmt::Debug>(items: &[T], cmp: impl Fn(&T, &T) -> Ordering, what: &str) {
    for x in items {
        for y in items {
            assert_eq!(
                cmp(x, y),
                cmp(y, x).reverse(),
                "{what} order not antisymmetric: {x:?} {y:?}"
            );
            for z in items {
                if cmp(x, y) != Ordering::Greater && cmp(y, z) != Ordering::Greater {
                    assert_ne!(
                        cmp(x, z),
                        Ordering::Greater,
                        "{what} order not transitive: {x:?} {y:?} {z:?}"
                    );
                }
            }
        }
    }
}
