//! The convergence contract (docs/convergence.md) as properties of the native store: server-like
//! histories (tests/history) delivered in random orders, every input 1–3 times, end with the same
//! answers as in-order delivery, and the step invariants hold after every single input.
//!
//! `cargo test --test store_convergence` runs `CONVERGENCE_CASES` histories (default 1,000, split
//! over two shards that run in parallel). The 10⁶ run:
//! `CONVERGENCE_CASES=1000000 cargo test --release --test store_convergence -- --nocapture`.
//! A failing history is shrunk (proptest over the actions, then greedily over the delivered
//! inputs) and written as one store-scenario case to
//! `target/convergence-failures/<shard>.json`, ready for tests/fixtures/store_scenarios.json.
#![cfg(not(target_arch = "wasm32"))]

mod history;

use std::cell::Cell;
use std::collections::{HashMap, HashSet};

use history::{generate, History, Input};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use serde_json::{json, Value};
use task_projection::rules::action::{session_action_source, settled_status, ActionSource};
use task_projection::rules::clarification::{self, Scope};
use task_projection::rules::model::{Message, PendingAction, SessionState, Turn};
use task_projection::rules::order::{merge_turns, row_is_stale, session_field_applies};
use task_projection::rules::pending;
use task_projection::rules::time::Timestamp;
use task_projection::rules::turn::{current_turn, CurrentTurn};
use task_projection::store::ProjectionStore;
use task_projection::trace::explore::{self, Arrival, Step};
use task_projection::wire::{self, store_api as api, Json, Path};

type Store = ProjectionStore<Value>;

/// How each input of `history` may arrive: a snapshot is fetched (begun at a random earlier point
/// than it applies), every other input anywhere; the generator makes none that SPEC orders by
/// arrival (docs/convergence.md's exceptions), so none is pinned.
fn arrivals(history: &History) -> Vec<Arrival> {
    history
        .inputs
        .iter()
        .map(|input| match input {
            // A respond: its start at a random earlier point than its reply (each copy its own
            // click).
            Input::TaskSnapshot { .. } | Input::Respond { .. } => Arrival::Fetched,
            Input::Call { .. } => Arrival::Any,
        })
        .collect()
}

/// What a delivery holds besides the store: the fetch tokens of begun snapshot copies, and the
/// attempts of the responds it sent (by copy). `responds: false` delivers the server's data alone
/// (the user's actions left out): the server's truth the answers are compared with.
struct InFlight {
    tokens: HashMap<usize, u64>,
    attempts: HashMap<usize, u64>,
    /// Starts refused so far (the bundle not live yet): `(copy, input)`. The user clicks as soon
    /// as the question shows, until the reply's point of the delivery.
    waiting: Vec<(usize, usize)>,
    responds: bool,
}

impl InFlight {
    fn new(responds: bool) -> InFlight {
        InFlight {
            tokens: HashMap::new(),
            attempts: HashMap::new(),
            waiting: Vec::new(),
            responds,
        }
    }
}

/// How much of the user's answer the checked deliveries exercised (printed with the case counts).
mod tally {
    use std::cell::Cell;

    thread_local! {
        pub static STARTS: Cell<usize> = const { Cell::new(0) };
        pub static SENT: Cell<usize> = const { Cell::new(0) };
        pub static REPLIES: Cell<usize> = const { Cell::new(0) };
        pub static SETTLED: Cell<usize> = const { Cell::new(0) };
        pub static OPEN: Cell<usize> = const { Cell::new(0) };
        pub static OLDER_AFTER: Cell<usize> = const { Cell::new(0) };
        pub static MERGES: Cell<usize> = const { Cell::new(0) };
    }

    pub fn add(counter: &'static std::thread::LocalKey<Cell<usize>>) {
        counter.with(|c| c.set(c.get() + 1));
    }

    /// This thread's counts (each test runs on its own thread).
    pub fn line() -> String {
        let get = |c: &'static std::thread::LocalKey<Cell<usize>>| c.with(Cell::get);
        format!(
            "{} clicks on a question ({} sent a request), {} replies ({} settled, {} refused or failed), {} inputs produced before the handling delivered after a settlement",
            get(&STARTS),
            get(&SENT),
            get(&REPLIES),
            get(&SETTLED),
            get(&OPEN),
            get(&OLDER_AFTER)
        )
    }
}

/// What a respond step did (for the step checks).
enum Did {
    /// Not a respond step, or one that called nothing (a reply whose start sent no request).
    Nothing,
    /// `respondStart`: whether every answer stayed as it was (a start hides nothing).
    Started { unchanged: bool },
    /// `respondReply`: its result, and whether any answer changed with it (before the body's
    /// position was applied).
    Replied {
        session: String,
        pending_id: String,
        replied: task_projection::store::Replied,
        changed: bool,
    },
}

fn call(store: &mut Store, name: &str, args: &[Value]) -> Result<(), api::CallError> {
    let arg = |i: usize| args.get(i).map_or(Json::ABSENT, Json::new);
    let payload = |j: Json<'_>| j.0.cloned().unwrap_or(Value::Null);
    api::dispatch(store, name, arg, payload, String::new).map(|_| ())
}

/// A respond step (SPEC §13) as `js/respond.js` makes it: the start; the reply to the attempt it
/// sent (none when the start was refused or joined one in flight: the request was another
/// tab's), then the body's `session` and `status_summary`.
fn respond(store: &mut Store, history: &History, step: &Step, held: &mut InFlight) -> Did {
    let Input::Respond {
        session,
        task,
        pending_id,
        reply,
        ..
    } = &history.inputs[step.input]
    else {
        return Did::Nothing;
    };
    if !held.responds {
        return Did::Nothing;
    }
    let copy = step.copy.unwrap_or(0);
    if step.begin {
        return click(store, history, held, copy, step.input);
    }
    // A user who never saw the question never clicked: the request was another tab's.
    held.waiting.retain(|&(c, _)| c != copy);
    let Some(attempt) = held.attempts.remove(&copy) else {
        return Did::Nothing;
    };
    let before = answers(store, history);
    let replied = api::respond_reply(store, &Json::new(&json!(attempt)), &Json::new(reply))
        .expect("a server's reply decodes");
    let changed = answers(store, history) != before;
    let body = &reply["body"];
    if let Some(position) = body.get("session") {
        call(store, "applySessionEvent", std::slice::from_ref(position))
            .expect("the reply's session");
    }
    if let Some(summary) = body.get("status_summary") {
        let event = json!({"task_id": task, "status_summary": summary});
        call(store, "applyStatusSummaryEvent", &[event]).expect("the reply's summary");
    }
    Did::Replied {
        session: session.clone(),
        pending_id: pending_id.clone(),
        replied,
        changed,
    }
}

/// The user clicks: `respondStart`; a refusal (the question not live yet) waits for the next
/// step, a start that joins one in flight sends nothing.
fn click(
    store: &mut Store,
    history: &History,
    held: &mut InFlight,
    copy: usize,
    input: usize,
) -> Did {
    let Input::Respond {
        session,
        pending_id,
        ..
    } = &history.inputs[input]
    else {
        return Did::Nothing;
    };
    let before = answers(store, history);
    held.waiting.retain(|&(c, _)| c != copy);
    match api::respond_start(
        store,
        &Json::new(&json!(session)),
        &Json::new(&json!(pending_id)),
        &Json::ABSENT,
    ) {
        Ok(Ok(started)) if started.fresh => {
            tally::add(&tally::SENT);
            held.attempts.insert(copy, started.attempt);
        }
        Ok(Ok(_)) => {}
        Ok(Err(_)) => held.waiting.push((copy, input)),
        Err(e) => panic!("respondStart({session}, {pending_id}): {e}"),
    }
    Did::Started {
        unchanged: answers(store, history) == before,
    }
}

/// The clicks of the users still waiting for their question to show.
fn clicks(store: &mut Store, history: &History, held: &mut InFlight) -> Vec<Did> {
    let waiting = held.waiting.clone();
    waiting
        .into_iter()
        .map(|(copy, input)| click(store, history, held, copy, input))
        .collect()
}

/// Applies one step through the library's dispatcher.
fn apply(store: &mut Store, history: &History, step: &Step, held: &mut InFlight) -> Did {
    let tokens = &mut held.tokens;
    let token;
    let (call, args): (&str, Vec<Json<'_>>) = match &history.inputs[step.input] {
        Input::Respond { .. } => return respond(store, history, step, held),
        Input::TaskSnapshot { tasks } => {
            let copy = step.copy.unwrap_or(0);
            if step.begin {
                tokens.insert(copy, store.begin_task_fetch());
                return Did::Nothing;
            }
            token = json!(tokens.remove(&copy).expect("begun before applied"));
            (
                "applyTaskSnapshot",
                vec![Json::new(&token), Json::new(tasks)],
            )
        }
        Input::Call { call, args } => (call, args.iter().map(Json::new).collect()),
    };
    let arg = |i: usize| args.get(i).copied().unwrap_or(Json::ABSENT);
    let payload = |j: Json<'_>| j.0.cloned().unwrap_or(Value::Null);
    api::dispatch(store, call, arg, payload, String::new).expect("a server-like input is valid");
    Did::Nothing
}

/// Every query of the contract, per session and task, as the scenario runners spell results.
fn answers(store: &Store, history: &History) -> Vec<(String, Vec<Value>, Value)> {
    let mut out = Vec::new();
    // An answer not known yet (SPEC §11) is `undefined`: the known/unknown state is compared
    // with the answers.
    let known = |answer: Option<Value>| answer.unwrap_or_else(|| json!({"$undefined": true}));
    for (s, _) in &history.sessions {
        let q = |call: &str, value: Value| (call.to_owned(), vec![json!(s)], value);
        out.push(q(
            "sessionPendingAction",
            known(store.session_pending_action(s).0.map(history::action_json)),
        ));
        out.push(q("currentTurnId", turn_json(store.current_turn_id(s).0)));
        out.push(q(
            "pendingClarification",
            known(store.pending_clarification(s).0.map(|b| {
                b.map_or(
                    Value::Null,
                    |b| json!({"pending_id": b.pending_id, "message_ids": b.message_ids}),
                )
            })),
        ));
        out.push(q(
            "hiddenMessageIds",
            known(store.hidden_message_ids(s).0.map(|ids| json!(ids))),
        ));
        out.push(q(
            "hasPendingPermission",
            known(store.has_pending_permission(s).0.map(|b| json!(b))),
        ));
    }
    for t in &history.tasks {
        let q = |call: &str, value: Value| (call.to_owned(), vec![json!(t)], value);
        out.push(q(
            "taskPendingAction",
            known(store.task_pending_action(t).0.map(history::action_json)),
        ));
        out.push(q(
            "taskStatusSummary",
            known(
                store
                    .task_status_summary(t)
                    .0
                    .map(|s| s.cloned().unwrap_or(Value::Null)),
            ),
        ));
        out.push(q(
            "pendingOwner",
            known(
                store
                    .pending_owner(t, None)
                    .0
                    .map(|o| json!(o.unwrap_or(""))),
            ),
        ));
    }
    out
}

fn turn_json(turn: CurrentTurn<&str>) -> Value {
    match turn {
        CurrentTurn::Unknown => json!({"$undefined": true}),
        CurrentTurn::None => Value::Null,
        CurrentTurn::Turn(t) => json!(t),
    }
}

/// What the inputs delivered so far say about one session, as a set (independent of order):
/// the model the step invariants compare the store with.
#[derive(Default)]
struct Delivered {
    /// Rows by id: the newest version delivered (by `updated_at`).
    messages: HashMap<String, Message>,
    deleted: HashSet<String>,
    turns: Vec<Turn>,
    turn_list: bool,
    /// A message page was delivered (SPEC §11).
    paged: bool,
    state: Option<(Option<Timestamp>, SessionState)>,
}

#[derive(Default)]
struct Model {
    sessions: HashMap<String, Delivered>,
    removed_tasks: HashSet<String>,
}

impl Model {
    fn session(&mut self, id: &str) -> &mut Delivered {
        self.sessions.entry(id.to_owned()).or_default()
    }

    fn row(&mut self, session: &str, value: &Value) {
        let m = wire::message(&Json::new(value), &Path::Root("row")).expect("valid row");
        let d = self.session(session);
        if d.deleted.contains(&m.id) {
            return;
        }
        match d.messages.get(&m.id) {
            Some(held) if row_is_stale(held.updated_at.as_ref(), m.updated_at.as_ref()) => {}
            _ => {
                d.messages.insert(m.id.clone(), m);
            }
        }
    }

    fn state(&mut self, session: &str, value: &Value) {
        let Some(state) = value["state"].as_str().filter(|s| !s.is_empty()) else {
            return;
        };
        let clock = value["updated_at"].as_str().map(Timestamp::parse);
        let d = self.session(session);
        if d.state
            .as_ref()
            .is_none_or(|(held, _)| session_field_applies(held.as_ref(), clock.as_ref()))
        {
            d.state = Some((clock, SessionState::parse(state)));
        }
    }

    fn turns(&mut self, session: &str, rows: &[Value], list: bool) {
        let rows: Vec<Turn> = rows
            .iter()
            .map(|t| wire::turn(&Json::new(t), &Path::Root("turn")).expect("valid turn"))
            .collect();
        let d = self.session(session);
        d.turns = merge_turns(std::mem::take(&mut d.turns), rows);
        d.turn_list |= list;
    }

    fn deliver(&mut self, input: &Input) {
        let Input::Call { call, args } = input else {
            return;
        };
        match *call {
            "applyMessageEvent" => {
                let session = args[1]["session_id"].as_str().unwrap_or_default();
                if args[0] == "deleted" {
                    let id = args[1]["message_id"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    let d = self.session(session);
                    d.messages.remove(&id);
                    d.deleted.insert(id);
                } else {
                    self.row(session, &args[1]);
                }
            }
            "applyMessagePage" => {
                let session = args[0].as_str().unwrap_or_default().to_owned();
                self.session(&session).paged = true;
                for row in args[1].as_array().into_iter().flatten() {
                    self.row(&session, row);
                }
            }
            "applySessionEvent" => {
                let id = args[0]["id"].as_str().unwrap_or_default().to_owned();
                self.state(&id, &args[0]);
            }
            "applySessionList" => {
                for row in args[1].as_array().into_iter().flatten() {
                    let id = row["id"].as_str().unwrap_or_default().to_owned();
                    self.state(&id, row);
                }
            }
            "applyTurnEvent" => {
                let session = args[0]["session_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                self.turns(&session, std::slice::from_ref(&args[0]), false);
            }
            "applyTurnList" => {
                let session = args[0].as_str().unwrap_or_default().to_owned();
                let rows = args[1].as_array().cloned().unwrap_or_default();
                self.turns(&session, &rows, true);
            }
            "removeTask" => {
                self.removed_tasks
                    .insert(args[0].as_str().unwrap_or_default().to_owned());
            }
            _ => {}
        }
    }
}

/// The step invariants (docs/convergence.md) on every session; `Err` describes the first one
/// broken, with the answers the model expects (query, args, expected).
type Broken = (String, Vec<(String, Vec<Value>, Value)>);

fn check_invariants(store: &Store, history: &History, model: &Model) -> Result<(), Broken> {
    let got = answers(store, history);
    for (s, task) in &history.sessions {
        if model.removed_tasks.contains(task) {
            continue;
        }
        let d = model.sessions.get(s.as_str());
        let empty = Delivered::default();
        let d = d.unwrap_or(&empty);
        // The bundles the user's replies settled count as answered (SPEC §13), for as long as
        // the store holds their settlement (when it retires is checked by the respond checks).
        let settled = store.settled_bundles(s);
        let marked: Vec<Message> = d
            .messages
            .values()
            .map(|m| {
                let mut m = m.clone();
                let is_settled = m
                    .pending_id
                    .as_deref()
                    .is_some_and(|p| settled.iter().any(|b| &*b.pending_id == p));
                m.status = settled_status(m.status, is_settled);
                m
            })
            .collect();
        let mut rows: Vec<&Message> = marked.iter().collect();
        rows.sort_by(|a, b| {
            a.created_at
                .cmp(&b.created_at)
                .then_with(|| a.id.cmp(&b.id))
        });
        let state = d.state.as_ref().map(|(_, state)| *state);
        let turns = d.turn_list.then_some(&d.turns[..]);
        let referenced = |t: &str| rows.iter().any(|m| m.turn_id.as_deref() == Some(t));
        let current = current_turn(turns, state, referenced)
            .0
            .map(|i| d.turns[i].id.as_str());
        let projection = store.session_projection(s).and_then(|(a, _)| a);
        // While a settlement's position is not older than the held projection, the rows decide
        // the session's action (SPEC §13).
        let held_revision = store.session_projection(s).and_then(|(_, r)| r);
        let rows_decide = settled.iter().any(|b| {
            let in_current = match current {
                CurrentTurn::Unknown => true,
                CurrentTurn::None => false,
                CurrentTurn::Turn(turn) => rows.iter().any(|m| {
                    m.turn_id.as_deref() == Some(turn)
                        && m.pending_id.as_deref() == Some(&*b.pending_id)
                }),
            };
            session_action_source(b.position.as_ref(), held_revision, in_current)
                == ActionSource::Rows
        });
        let scope = Scope {
            current_turn: current,
            pending_action: projection,
        };
        let bundle: Vec<&str> = clarification::pending_bundle(&rows, Some(&scope))
            .into_iter()
            .map(|i| rows[i].id.as_str())
            .collect();
        let request = clarification::pending_request(&rows, Some(&scope)).map(|i| rows[i]);
        let expected_bundle = match (request, bundle.is_empty()) {
            (Some(r), false) => {
                json!({"pending_id": r.pending_id, "message_ids": bundle})
            }
            _ => Value::Null,
        };
        let action = match projection {
            Some(action) if !rows_decide => action,
            _ => pending::session_pending_action(state, turns, &rows).0,
        };
        // SPEC §11: the rows' answers are known once the turn list and a page were delivered;
        // the action once a projection was, or those rows.
        let undefined = json!({"$undefined": true});
        let rows_known = d.turn_list && d.paged;
        let rows_answer = |v: Value| if rows_known { v } else { undefined.clone() };
        // A quarantined session's discovery answers are known from its state alone (SPEC §2).
        let discovery_known = rows_known || state.is_some_and(|s| !s.is_input_capable());
        let discovery_answer = |v: Value| {
            if discovery_known {
                v
            } else {
                undefined.clone()
            }
        };
        let action_known = projection.is_some() || rows_known;
        let expected = vec![
            (
                "currentTurnId".to_owned(),
                vec![json!(s)],
                discovery_answer(turn_json(current)),
            ),
            (
                "pendingClarification".to_owned(),
                vec![json!(s)],
                discovery_answer(expected_bundle),
            ),
            (
                "hiddenMessageIds".to_owned(),
                vec![json!(s)],
                discovery_answer(json!(bundle)),
            ),
            (
                "hasPendingPermission".to_owned(),
                vec![json!(s)],
                rows_answer(json!(clarification::has_pending_permission(&rows))),
            ),
            (
                "sessionPendingAction".to_owned(),
                vec![json!(s)],
                if action_known {
                    history::action_json(action)
                } else {
                    undefined.clone()
                },
            ),
        ];
        for (call, args, want) in &expected {
            let have = got
                .iter()
                .find(|(c, a, _)| c == call && a == args)
                .map(|(_, _, v)| v.clone());
            if have.as_ref() != Some(want) {
                return Err((
                    format!("{call}({s}) is {have:?}, the delivered inputs say {want}"),
                    expected,
                ));
            }
        }
        // A deleted message never answers again (server histories never re-add an id).
        let hidden = store.hidden_message_ids(s).0.unwrap_or_default();
        if let Some(id) = hidden.iter().find(|id| d.deleted.contains(**id)) {
            return Err((
                format!("deleted {id} is hidden as a live question of {s}"),
                expected,
            ));
        }
        // A bundle implies the clarification action; an open question needs a current turn.
        if matches!(store.pending_clarification(s).0, Some(Some(_))) {
            if store.session_pending_action(s).0 != Some(Some(PendingAction::Clarification)) {
                return Err((
                    format!("{s} shows a bundle but its action is not clarification"),
                    expected,
                ));
            }
            if store.current_turn_id(s).0 == CurrentTurn::None {
                return Err((
                    format!("{s} shows a bundle without a current turn"),
                    expected,
                ));
            }
        }
    }
    // The pending owner is a listed, input-capable session with the task's action.
    for t in &history.tasks {
        let (Some(Some(owner)), Some(Some(action))) = (
            store.pending_owner(t, None).0,
            store.task_pending_action(t).0,
        ) else {
            continue;
        };
        let capable = store
            .session_state(owner)
            .is_some_and(SessionState::is_input_capable);
        // The action the owner rule reads: a settled session's rows decide it (SPEC §13).
        let own = store.session_owner_action(owner);
        if !capable || own != Some(action) {
            return Err((
                format!("pendingOwner({t}) = {owner} is not a pending owner"),
                Vec::new(),
            ));
        }
    }
    Ok(())
}

/// The steps of in-order delivery: every input once, a snapshot begun right before it applies.
fn in_order(history: &History) -> Vec<Step> {
    explore::in_order(&arrivals(history))
}

/// A random delivery (the explorer's, `trace::explore::shuffled`): every input `1 + dups[i] % 3`
/// times in a shuffled order; a snapshot copy is begun at a random earlier point.
fn shuffled(history: &History, seed: u64, dups: &[u8]) -> Vec<Step> {
    explore::shuffled(&arrivals(history), seed, dups)
}

/// Runs a delivery; `Err((steps applied, why, expected answers))` at the first broken invariant.
fn deliver(history: &History, steps: &[Step], check: bool) -> Result<Store, (usize, Broken)> {
    deliver_hydrating(history, steps, check, None)
}

/// The server's truth: its data delivered in order, the user's actions left out (what every
/// delivery's final answers must equal).
fn truth(history: &History) -> Vec<(String, Vec<Value>, Value)> {
    let store = run(history, &in_order(history), false, None, false).expect("in order");
    answers(&store, history)
}

/// A store's snapshot through JSON text into a new store (SPEC §12).
fn rehydrated(store: &Store) -> Store {
    let text = api::dehydrate(store, &Json::ABSENT, |p: &Value, out: &mut String| {
        out.push_str(&p.to_string())
    })
    .expect("dehydrate");
    let parsed: Value = serde_json::from_str(&text).expect("a snapshot is JSON");
    api::hydrate(&Json::new(&parsed), &Json::ABSENT, |j: Json<'_>| {
        j.0.cloned().unwrap_or(Value::Null)
    })
    .expect("a snapshot hydrates")
}

/// [`deliver`], the store replaced by its snapshot's hydrated store once, after the first step at
/// or past `hydrate_at` where no task-list fetch is in flight (a snapshot holds no fetch token: a
/// page load abandons its requests).
fn deliver_hydrating(
    history: &History,
    steps: &[Step],
    check: bool,
    hydrate_at: Option<usize>,
) -> Result<Store, (usize, Broken)> {
    run(history, steps, check, hydrate_at, true)
}

/// A settlement the checks follow: session, bundle, the index of the input the server handled
/// the response at (every earlier input was produced before it).
type Settlement = (String, String, usize);

/// The respond checks of one step (SPEC §13): a start changes no answer (the bundle is still
/// shown while in flight); a refused or failed reply changes none (it hides nothing); a reply
/// that settled its bundle (`applied`) settles it for good: it is never live again, whatever
/// arrives after, in particular no input produced before the server handled the response (the
/// simulated server never restores a bundle it answered, and never reopens one it found no
/// longer active).
fn check_respond(
    store: &Store,
    did: &Did,
    settled: &mut Vec<Settlement>,
    step: &Step,
) -> Result<(), String> {
    match did {
        Did::Started { unchanged: false } => return Err("a respond start changed an answer".into()),
        Did::Started { .. } => tally::add(&tally::STARTS),
        Did::Replied {
            session,
            pending_id,
            replied,
            changed,
        } => {
            if !replied.outcome.settles() && (*changed || replied.applied) {
                return Err(format!(
                    "a {} reply to {pending_id} of {session} changed an answer",
                    replied.outcome.as_str()
                ));
            }
            tally::add(&tally::REPLIES);
            // The store's settlements. (A settling reply that counted but settled nothing because
            // discovery did not show the bundle then may show it again:
            // `regression_a_won_reply_settles_a_bundle_an_older_projection_hides`.)
            if replied.applied {
                tally::add(&tally::SETTLED);
                settled.push((session.clone(), pending_id.clone(), step.input));
            } else if !replied.outcome.settles() {
                tally::add(&tally::OPEN);
            }
        }
        Did::Nothing => {}
    }
    for (session, pending_id, handled) in settled.iter() {
        if step.input < *handled && !step.begin {
            tally::add(&tally::OLDER_AFTER);
        }
        let live = store
            .pending_clarification(session)
            .0
            .flatten()
            .and_then(|b| b.pending_id);
        if live == Some(pending_id.as_str()) {
            let when = if step.input < *handled {
                "produced before the server handled the response"
            } else {
                "produced after the handling"
            };
            return Err(format!(
                "settled {pending_id} of {session} is live again after input #{} ({when})",
                step.input
            ));
        }
    }
    Ok(())
}

fn run(
    history: &History,
    steps: &[Step],
    check: bool,
    hydrate_at: Option<usize>,
    responds: bool,
) -> Result<Store, (usize, Broken)> {
    run_handing_off(
        history,
        steps,
        check,
        hydrate_at.map(|at| (at, None)),
        responds,
    )
}

/// Another page's snapshot merged into the store being delivered to (SPEC §12): `snapshot`,
/// made by a store that took `inputs` (indices into the history, in its order); `whole`: the
/// snapshot holds everything that store held (the step invariants, which compare the store with
/// what was delivered, then count those inputs as delivered; a snapshot of some tasks only
/// leaves the store knowing less than that, and only the final answers are checked).
struct Merge {
    snapshot: Value,
    inputs: Vec<usize>,
    whole: bool,
}

/// [`run`], with a hand-off once, after the first step at or past `at` where no task-list fetch
/// is in flight: the store replaced by its snapshot's hydrated store (`None`: a page load, which
/// abandons its requests), or another page's snapshot merged into it (`Some`: a client-side
/// navigation; the store, its requests and its answers in flight stay).
fn run_handing_off(
    history: &History,
    steps: &[Step],
    check: bool,
    hand_off: Option<(usize, Option<Merge>)>,
    responds: bool,
) -> Result<Store, (usize, Broken)> {
    let mut store = Store::new();
    let mut model = Model::default();
    let mut held = InFlight::new(responds);
    let mut settled = Vec::new();
    let mut pending = hand_off;
    let mut invariants = check;
    for (n, step) in steps.iter().enumerate() {
        let did = apply(&mut store, history, step, &mut held);
        if pending.as_ref().is_some_and(|(at, _)| n >= *at) && held.tokens.is_empty() {
            match pending.take().and_then(|(_, merge)| merge) {
                None => {
                    store = rehydrated(&store);
                    // A page load abandons its requests: their replies reach no store.
                    held.attempts.clear();
                }
                Some(merge) => {
                    api::merge(&mut store, &Json::new(&merge.snapshot), |j: Json<'_>| {
                        j.0.cloned().unwrap_or(Value::Null)
                    })
                    .expect("a snapshot merges");
                    tally::add(&tally::MERGES);
                    if merge.whole {
                        for &i in &merge.inputs {
                            model.deliver(&history.inputs[i]);
                        }
                    } else {
                        invariants = false;
                    }
                }
            }
        }
        if !step.begin {
            model.deliver(&history.inputs[step.input]);
        }
        if invariants {
            check_invariants(&store, history, &model).map_err(|broken| (n + 1, broken))?;
        }
        if check {
            check_respond(&store, &did, &mut settled, step)
                .map_err(|why| (n + 1, (why, Vec::new())))?;
        }
        for did in clicks(&mut store, history, &mut held) {
            if check {
                check_respond(&store, &did, &mut settled, step)
                    .map_err(|why| (n + 1, (why, Vec::new())))?;
            }
        }
    }
    Ok(store)
}

/// What is wrong with delivering `steps` instead of in order, if anything.
fn failure(history: &History, steps: &[Step]) -> Option<(usize, Broken)> {
    let reference = truth(history);
    match deliver(history, steps, true) {
        Err(e) => Some(e),
        Ok(store) => {
            let got = answers(&store, history);
            let diff: Vec<String> = got
                .iter()
                .zip(&reference)
                .filter(|(a, b)| a != b)
                .map(|((c, a, v), (_, _, w))| format!("{c}({a:?}): {v} instead of {w}"))
                .collect();
            (!diff.is_empty()).then(|| (steps.len(), (diff.join("; "), reference)))
        }
    }
}

/// `history` without the inputs not `kept`, and `steps` renumbered to it.
fn restricted(history: &History, kept: &[bool], steps: &[Step]) -> (History, Vec<Step>) {
    let mut index = vec![None; history.inputs.len()];
    let mut inputs = Vec::new();
    for (i, input) in history.inputs.iter().enumerate() {
        if kept[i] {
            index[i] = Some(inputs.len());
            inputs.push(input.clone());
        }
    }
    let steps = steps
        .iter()
        .filter_map(|s| index[s.input].map(|input| Step { input, ..s.clone() }))
        .collect();
    (
        History {
            inputs,
            ..history.clone()
        },
        steps,
    )
}

/// Shrinks a failing delivery with the explorer's shrinker (`trace::explore::shrink`): inputs
/// left out of the history (the in-order reference is the history without them), duplicates
/// dropped, steps moved back toward emission order, while the failure persists.
fn shrink(history: &History, steps: &[Step]) -> (History, Vec<Step>, usize, Broken) {
    let (kept, steps, (upto, broken)) =
        explore::shrink(&arrivals(history), steps, |kept, steps| {
            // A server's data is whole around a user's answer (its handling's writes): with a
            // respond kept, only responds are left out.
            let responds = history
                .inputs
                .iter()
                .zip(kept)
                .any(|(input, &k)| k && matches!(input, Input::Respond { .. }));
            let data_dropped = history
                .inputs
                .iter()
                .zip(kept)
                .any(|(input, &k)| !k && !matches!(input, Input::Respond { .. }));
            if responds && data_dropped {
                return None;
            }
            let (small, small_steps) = restricted(history, kept, steps);
            failure(&small, &small_steps)
        })
        .expect("shrinking a failure");
    let (small, small_steps) = restricted(history, &kept, &steps);
    (small, small_steps, upto, broken)
}

/// The failing delivery as one store-scenario case: its steps up to the failure, then the
/// queries with the answers they should have given.
fn scenario(
    history: &History,
    steps: &[Step],
    upto: usize,
    why: &str,
    expected: &[(String, Vec<Value>, Value)],
) -> Value {
    let mut out = Vec::new();
    for step in steps.iter().take(upto) {
        match &history.inputs[step.input] {
            Input::TaskSnapshot { tasks } => {
                let name = format!("token{}", step.copy.unwrap_or(0));
                if step.begin {
                    out.push(json!({"call": "beginTaskFetch", "save": name}));
                } else {
                    out.push(
                        json!({"call": "applyTaskSnapshot", "args": [{"$saved": name}, tasks]}),
                    );
                }
            }
            Input::Call { call, args } => out.push(json!({"call": call, "args": args})),
            // Not replayable by the scenario runners yet (no respond calls): written for a
            // reader, to become a tests/store_respond.rs case.
            Input::Respond {
                session,
                pending_id,
                reply,
                ..
            } => {
                let name = format!("attempt{}", step.copy.unwrap_or(0));
                if step.begin {
                    out.push(json!({"call": "respondStart", "args": [session, pending_id], "save": name}));
                } else {
                    out.push(json!({"call": "respondReply", "args": [{"$saved": name}, reply]}));
                }
            }
        }
    }
    for (call, args, value) in expected {
        out.push(json!({"call": call, "args": args, "expect": value}));
    }
    json!({"name": format!("convergence: {why}"), "steps": out})
}

fn report(shard: &str, case: &Value) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/convergence-failures");
    std::fs::create_dir_all(&dir).ok();
    std::fs::write(
        dir.join(format!("{shard}.json")),
        serde_json::to_string_pretty(case).unwrap_or_default(),
    )
    .ok();
}

fn cases() -> u32 {
    std::env::var("CONVERGENCE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000)
}

type Params = (usize, Vec<(u8, u8, u8, u8)>, bool, u64, Vec<u8>);

fn params() -> impl Strategy<Value = Params> {
    (
        1usize..=2,
        prop::collection::vec(any::<(u8, u8, u8, u8)>(), 0..40),
        prop::bool::weighted(0.25),
        any::<u64>(),
        prop::collection::vec(any::<u8>(), 0..80),
    )
}

/// One shard of the property: `cases / 2` histories from its own seed.
fn run_shard(shard: u64) {
    let total = cases();
    let config = Config {
        cases: total / 2 + total % 2 * u32::from(shard == 0),
        rng_seed: RngSeed::Fixed(0x5eed_0000 + shard),
        failure_persistence: None,
        max_shrink_iters: 4_096,
        ..Config::default()
    };
    let name = format!("shard-{shard}");
    let mut runner = TestRunner::new(config);
    let (inputs, steps_run) = (Cell::new(0usize), Cell::new(0usize));
    let result = runner.run(&params(), |(tasks, actions, remove, seed, dups)| {
        let history = generate(tasks, &actions, remove);
        let steps = shuffled(&history, seed, &dups);
        inputs.set(inputs.get() + history.inputs.len());
        steps_run.set(steps_run.get() + steps.len());
        if failure(&history, &steps).is_none() {
            return Ok(());
        }
        let (small, small_steps, upto, (why, expected)) = shrink(&history, &steps);
        report(&name, &scenario(&small, &small_steps, upto, &why, &expected));
        Err(TestCaseError::fail(format!(
            "{why} (after {upto} of {} delivered inputs; case in target/convergence-failures/{name}.json)",
            small_steps.len()
        )))
    });
    println!(
        "convergence {name}: {} histories, {} inputs, {} deliveries: {}",
        runner.config().cases,
        inputs.get(),
        steps_run.get(),
        if result.is_ok() {
            "0 failures"
        } else {
            "FAILED"
        }
    );
    println!("convergence {name}: {}", tally::line());
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn random_delivery_converges_shard_0() {
    run_shard(0);
}

#[test]
fn random_delivery_converges_shard_1() {
    run_shard(1);
}

/// SPEC §12: a store dehydrated and hydrated at a random point of a random delivery (every input
/// 1–3 times, shuffled) keeps the step invariants and ends with the answers of in-order delivery,
/// known/unknown state included: the snapshot carries everything later inputs are ordered
/// against. `CONVERGENCE_CASES` histories (default 1,000).
#[test]
fn hydrating_anywhere_in_a_random_delivery_converges() {
    hydrated_deliveries_converge(
        "hydrate convergence",
        cases(),
        0x6879_6472,
        params().boxed(),
    );
}

/// Random deliveries of histories from `strategy`, each hydrated at a random point (SPEC §12):
/// the step invariants after every step, the server's truth at the end; prints the counts.
fn hydrated_deliveries_converge(
    label: &str,
    cases: u32,
    seed: u64,
    strategy: BoxedStrategy<Params>,
) {
    let mut runner = TestRunner::new(Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    });
    let (hydrated, steps_run) = (Cell::new(0usize), Cell::new(0usize));
    let result = runner.run(
        &(strategy, any::<u16>()),
        |((tasks, actions, remove, seed, dups), at)| {
            let history = generate(tasks, &actions, remove);
            let steps = shuffled(&history, seed, &dups);
            let at = usize::from(at) % (steps.len() + 1);
            let reference = truth(&history);
            let store = deliver_hydrating(&history, &steps, true, Some(at))
                .map_err(|(n, (why, _))| TestCaseError::fail(format!("step {n}: {why}")))?;
            hydrated.set(hydrated.get() + 1);
            steps_run.set(steps_run.get() + steps.len());
            let got = answers(&store, &history);
            for ((call, args, value), (_, _, want)) in got.iter().zip(&reference) {
                prop_assert_eq!(
                    value,
                    want,
                    "{}({:?}) after a hydrate at {}",
                    call,
                    args,
                    at
                );
            }
            Ok(())
        },
    );
    println!(
        "{label}: {} histories hydrated at a random point, {} deliveries; {}",
        hydrated.get(),
        steps_run.get(),
        tally::line()
    );
    result.unwrap();
}

/// SPEC §12 (issue 43 item 3): another page's snapshot merged into the store at a random point
/// of a random delivery (every input 1–3 times, shuffled, the user's answers in it). The
/// snapshot is another store's: one that took a random prefix of another random delivery of the
/// same history (older or newer than the store, or neither), dehydrated whole or for one task.
/// The respond checks hold after every input (a settled answer is never shown again, by the
/// snapshot either), the step invariants while the snapshot was whole, and the final answers are
/// the server's truth. `CONVERGENCE_CASES` histories (default 1,000).
#[test]
fn merging_another_pages_snapshot_anywhere_converges() {
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        rng_seed: RngSeed::Fixed(0x6d65_7267),
        failure_persistence: None,
        ..Config::default()
    });
    let (histories, steps_run, scoped, taken) = (
        Cell::new(0usize),
        Cell::new(0usize),
        Cell::new(0usize),
        Cell::new(0usize),
    );
    let result = runner.run(
        &(respond_params(), any::<(u16, u64, u16, u8)>()),
        |((tasks, actions, remove, seed, dups), (at, other, prefix, scope))| {
            let history = generate(tasks, &actions, remove);
            let steps = shuffled(&history, seed, &dups);
            let at = usize::from(at) % (steps.len() + 1);
            let source_steps = shuffled(&history, other, &[]);
            let upto = usize::from(prefix) % (source_steps.len() + 1);
            let source_steps = &source_steps[..upto];
            let source = run(&history, source_steps, false, None, false).expect("a source");
            let task = history
                .sessions
                .get(usize::from(scope) % 4)
                .map(|(_, t)| t.clone());
            let options = match task.filter(|_| scope % 4 != 0) {
                Some(task) => {
                    scoped.set(scoped.get() + 1);
                    json!({ "tasks": [task] })
                }
                None => Value::Null,
            };
            let text = api::dehydrate(
                &source,
                &if options.is_null() {
                    Json::ABSENT
                } else {
                    Json::new(&options)
                },
                |p: &Value, out: &mut String| out.push_str(&p.to_string()),
            )
            .expect("dehydrate");
            taken.set(taken.get() + upto);
            let merge = Merge {
                snapshot: serde_json::from_str(&text).expect("a snapshot is JSON"),
                inputs: source_steps
                    .iter()
                    .filter(|s| !s.begin)
                    .map(|s| s.input)
                    .collect(),
                whole: options.is_null(),
            };
            let reference = truth(&history);
            let store = run_handing_off(&history, &steps, true, Some((at, Some(merge))), true)
                .map_err(|(n, (why, _))| TestCaseError::fail(format!("step {n}: {why}")))?;
            histories.set(histories.get() + 1);
            steps_run.set(steps_run.get() + steps.len());
            let got = answers(&store, &history);
            for ((call, args, value), (_, _, want)) in got.iter().zip(&reference) {
                prop_assert_eq!(value, want, "{}({:?}) after a merge at {}", call, args, at);
            }
            Ok(())
        },
    );
    println!(
        "merge convergence: {} histories, {} deliveries, {} snapshots merged ({} of one task), from stores that took {} inputs; {}",
        histories.get(),
        steps_run.get(),
        tally::MERGES.with(Cell::get),
        scoped.get(),
        taken.get(),
        tally::line()
    );
    result.unwrap();
}

/// Histories where about half the actions are the user answering a question (SPEC §13).
fn respond_params() -> impl Strategy<Value = Params> {
    let action = prop_oneof![
        any::<(u8, u8, u8, u8)>(),
        any::<(u8, u8, u8)>().prop_map(|(a, b, c)| (21, a, b, c)),
    ];
    (
        1usize..=2,
        prop::collection::vec(action, 0..30),
        prop::bool::weighted(0.25),
        any::<u64>(),
        prop::collection::vec(any::<u8>(), 0..80),
    )
}

/// SPEC §13 in the convergence contract: the user's answers (starts at random points, each
/// clicked again as soon as the question shows; replies won, lost, no longer active, refused,
/// failed, timed out, unreadable, duplicated; the reply's position applied after it) in random
/// deliveries with duplicates and a hydrate at a random point: the step invariants and the
/// respond checks hold after every input (a start and a failed reply change no answer; a settled
/// bundle is never shown again, by an input produced before the server handled the response or
/// after), and the final answers are the server's truth (its data in order, no answers).
/// `CONVERGENCE_CASES / 2` histories (default 500).
#[test]
fn responds_at_random_points_converge_to_the_servers_truth() {
    hydrated_deliveries_converge(
        "respond convergence",
        cases() / 2,
        0x5e7d_0013,
        respond_params().boxed(),
    );
}

/// In-order delivery itself satisfies the step invariants after every input.
#[test]
fn in_order_delivery_keeps_the_invariants() {
    let mut runner = TestRunner::new(Config {
        cases: cases().min(500),
        rng_seed: RngSeed::Fixed(0x0bde_0001),
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&params(), |(tasks, actions, remove, _, _)| {
            let history = generate(tasks, &actions, remove);
            let steps = in_order(&history);
            match deliver(&history, &steps, true) {
                Ok(_) => Ok(()),
                Err((n, (why, _))) => Err(TestCaseError::fail(format!("step {n}: {why}"))),
            }
        })
        .unwrap();
}

/// A field no rule reads, JSON at the edge of what a held summary may be (`wire::held`): up to
/// 32 levels with the summary (29 wrappers, the object, its inner object), odd keys and
/// strings, `-0`, big and small numbers.
fn odd_field(seed: u8) -> Value {
    let mut v = json!({ "__proto__": { "x": -0.0 }, "é😀": [1e300, 5e-324, u64::MAX, "\u{0}"] });
    for i in 0..usize::from(seed % 30) {
        v = json!({ "next": v, "i": i });
    }
    v
}

/// `history` with every summary carrying [`odd_field`] (both deliveries get the same inputs).
fn with_odd_summaries(mut history: History, seed: u8) -> History {
    let extra = odd_field(seed);
    // `get_mut`: indexing would insert a `null` summary where the key is absent.
    let mark = |holder: &mut Value| {
        let summary = holder
            .get_mut("status_summary")
            .and_then(Value::as_object_mut);
        if let Some(map) = summary {
            map.insert("git".into(), extra.clone());
        }
    };
    for input in &mut history.inputs {
        match input {
            Input::TaskSnapshot { tasks } => {
                for task in tasks.as_array_mut().into_iter().flatten() {
                    mark(task);
                }
            }
            Input::Call { call, args }
                if matches!(*call, "applyStatusSummaryEvent" | "applyTaskUpdated") =>
            {
                if let Some(payload) = args.first_mut() {
                    mark(payload);
                }
            }
            Input::Respond { reply, .. } => {
                if let Some(body) = reply.get_mut("body") {
                    mark(body);
                }
            }
            Input::Call { .. } => {}
        }
    }
    history
}

/// A summary beyond a bound of `wire::held` (`kind % 3`: 33 levels, 10,001 values, 2^20 + 1
/// characters), newer than any the history sends: it would change the answers if it were taken.
fn beyond_bounds(kind: u8, task: &str) -> Value {
    let git = match kind % 3 {
        0 => (0..32).fold(json!({}), |v, _| json!({ "next": v })),
        1 => json!(vec![0; 9_997]),
        _ => json!("x".repeat(1 << 20)),
    };
    json!({
        "task_id": task,
        "status_summary": { "revision": 1_000_000, "pending_action": "permission", "git": git },
    })
}

/// The store's snapshot, through JSON text, hydrates into a store with the same digest,
/// snapshot and answers (issue 41: whatever the store accepted it can hand on).
fn round_trips(store: &Store, history: &History) -> Result<(), String> {
    let write = |s: &Store| {
        api::dehydrate(s, &Json::ABSENT, |p: &Value, out: &mut String| {
            out.push_str(&p.to_string())
        })
        .map_err(|e| format!("dehydrate: {e}"))
    };
    let text = write(store)?;
    let back = rehydrated(store);
    if back.digest() != store.digest() {
        return Err("the hydrated store's digest differs".into());
    }
    if write(&back)? != text {
        return Err("the hydrated store's snapshot differs".into());
    }
    if answers(&back, history) != answers(store, history) {
        return Err("the hydrated store's answers differ".into());
    }
    Ok(())
}

/// Issue 41 as a property: random histories whose summaries carry fields no rule reads (at the
/// edge of the bounds), delivered shuffled with duplicates, with summaries beyond the bounds
/// mixed in at random points: each of those is refused with `invalid_value` and changes nothing,
/// after every step the store dehydrates and hydrates back alike, and the answers end as in
/// order. `CONVERGENCE_CASES` histories (default 1,000).
#[test]
fn summaries_beyond_the_bounds_mixed_in_leave_the_store_sound() {
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        rng_seed: RngSeed::Fixed(0x0041_5eed),
        failure_persistence: None,
        ..Config::default()
    });
    let (histories, steps_run, refused) = (Cell::new(0usize), Cell::new(0usize), Cell::new(0usize));
    let result = runner.run(
        &(
            params(),
            any::<u8>(),
            prop::collection::vec(any::<(u16, u8)>(), 0..6),
        ),
        |((tasks, actions, remove, seed, dups), odd, hostile)| {
            // Without the user's answers: this property is about summaries (and the extra
            // inputs of answers would double its run time).
            let history =
                with_odd_summaries(history::generate_with(tasks, &actions, remove, false), odd);
            let steps = shuffled(&history, seed, &dups);
            let reference = truth(&history);
            let mut store = Store::new();
            let mut held = InFlight::new(true);
            for (n, step) in steps.iter().enumerate() {
                apply(&mut store, &history, step, &mut held);
                for &(at, kind) in &hostile {
                    if usize::from(at) % steps.len().max(1) != n || history.tasks.is_empty() {
                        continue;
                    }
                    let task = &history.tasks[usize::from(kind) % history.tasks.len()];
                    let payload = beyond_bounds(kind, task);
                    let before = (store.digest(), store.version());
                    let outcome = api::dispatch(
                        &mut store,
                        "applyStatusSummaryEvent",
                        |i| {
                            if i == 0 {
                                Json::new(&payload)
                            } else {
                                Json::ABSENT
                            }
                        },
                        |j: Json<'_>| j.0.cloned().unwrap_or(Value::Null),
                        String::new,
                    );
                    let refused_as_invalid = matches!(
                        outcome,
                        Err(api::CallError::Wire(ref e)) if e.code().as_str() == "invalid_value"
                    );
                    prop_assert!(refused_as_invalid, "step {}: {:?}", n, outcome.map(|_| ()));
                    prop_assert_eq!(
                        (store.digest(), store.version()),
                        before,
                        "a refused call changed the store"
                    );
                    refused.set(refused.get() + 1);
                }
                round_trips(&store, &history)
                    .map_err(|why| TestCaseError::fail(format!("step {n}: {why}")))?;
            }
            histories.set(histories.get() + 1);
            steps_run.set(steps_run.get() + steps.len());
            prop_assert_eq!(answers(&store, &history), reference);
            Ok(())
        },
    );
    println!(
        "sound summaries: {} histories, {} deliveries each followed by a round trip, {} summaries beyond the bounds refused",
        histories.get(),
        steps_run.get(),
        refused.get()
    );
    result.unwrap();
}
