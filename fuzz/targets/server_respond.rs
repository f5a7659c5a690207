//! Fuzz target `server_respond` (feature `server`): arbitrary bytes → an interleaving of fixture
//! writes (tasks, sessions, turns, clarification bundles and other messages, state changes,
//! summaries, deletes) and service calls (respond with answers or Skip, two racing responds,
//! classify, summary repair, the task answer, handoffs, restarts with startup reconciliation)
//! against one in-memory SQLite database, on a current-thread tokio runtime. The database and
//! runtime are made once per process and the tables emptied before each input.
//!
//! Checked (SPEC §7, §8), besides "nothing panics":
//! * `respond` places the bundle as `classify` did just before; a bundle that is not active
//!   answers conflict and nothing is written (messages, intents, summaries) or resumed; an active
//!   bundle is never a conflict for a lone responder; success claims every pending row (terminal
//!   afterwards, no intent left), and only a detached answer resumes, exactly once; a retryable
//!   error leaves the bundle pending and no intent; a rejection never resumes;
//! * a terminal bundle (and an answered one) never becomes active again, and a respond to it is
//!   a conflict; a superseded one neither, while nothing that can legitimately move the current
//!   turn happened (state changes, turns, deletes, new rows);
//! * of two racing responds at most one succeeds;
//! * the rows a successful respond claimed stay terminal whatever happens later (reconcile too);
//! * a summary repair answers the rules' task action (SPEC §4, computed here from the stored
//!   rows): `Repaired` writes revision + 1 with every other field kept and publishes one event,
//!   `Unchanged` writes and publishes nothing, repeating a repair is `Unchanged`; a repair never
//!   answers from rows the rules cannot read; the task answer carries the same action.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{json, Map, Value};
use task_projection::rules::model::{
    MessageKind, MessageRecord, PendingAction, SessionRecord, SessionState,
};
use task_projection::rules::pending::{
    session_pending_action, session_pending_read, task_pending_action, turn_pending_action,
    PendingRead,
};
use task_projection::rules::respond::{BundleState, Handoff, RespondReply, Response, ResumeReport};
use task_projection::wire::{self, Json, Path};
use task_projection_server::clock::{wire_time, Clock, ManualClock};
use task_projection_server::events::{drain, BroadcastSink, TASK_STATUS_SUMMARY_UPDATED};
use task_projection_server::projection::Projector;
use task_projection_server::respond::{
    DeliveryError, RespondOutcome, RespondService, ResponseInput, ResumeRequest, Resumer,
    WaiterRegistry,
};
use task_projection_server::revision::RevisionClock;
use task_projection_server::storage::{
    NewMessage, NewSession, NewTask, NewTurn, StateChange, Storage, TurnRow,
};
use task_projection_server::summary::{RepairOutcome, SummaryRepair};
use task_projection_server::Db;

#[path = "common.rs"]
mod common;

use common::Bytes;

/// At most this many operations per input.
const MAX_OPS: usize = 40;

const TASKS: [&str; 2] = ["t0", "t1"];
const SESSIONS: [&str; 3] = ["s0", "s1", "s2"];
const TURNS: [&str; 4] = ["u0", "u1", "u2", "u3"];
const MESSAGES: [&str; 8] = ["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"];
const PENDING: [&str; 3] = ["p0", "p1", "p2"];
const STATES: [&str; 8] = [
    "WAITING_FOR_INPUT",
    "RUNNING",
    "IDLE",
    "COMPLETED",
    "CREATED",
    "FAILED",
    "",
    "bogus",
];
const TIMES: [&str; 8] = [
    "2026-11-29T12:00:00Z",
    "2026-11-29T12:00:01Z",
    "2026-11-29T12:00:02Z",
    "2026-11-29T12:00:02.000000001Z",
    "2026-11-29T12:00:03Z",
    "2026-11-29T12:00:04.5Z",
    "2026-11-29T12:00:05Z",
    "zzz",
];
const STATUSES: [Option<&str>; 8] = [
    Some("pending"),
    Some("pending"),
    None,
    Some(""),
    Some("answered"),
    Some("rejected"),
    Some("expired"),
    Some("cancelled"),
];

/// The operation codes (the first byte of each operation, modulo their count); the bytes after
/// it are its arguments, one byte each (see [`Op::ARGS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Op {
    Task,
    Session,
    Turn,
    CompleteTurn,
    Question,
    Message,
    SetState,
    Waiter,
    WaiterFails,
    ResumeReport,
    Respond,
    Repair,
    TaskAnswer,
    Summary,
    Reconcile,
    Handoff,
    Delete,
    Classify,
    Restart,
    Race,
}

impl Op {
    const ALL: [Op; 20] = [
        Op::Task,
        Op::Session,
        Op::Turn,
        Op::CompleteTurn,
        Op::Question,
        Op::Message,
        Op::SetState,
        Op::Waiter,
        Op::WaiterFails,
        Op::ResumeReport,
        Op::Respond,
        Op::Repair,
        Op::TaskAnswer,
        Op::Summary,
        Op::Reconcile,
        Op::Handoff,
        Op::Delete,
        Op::Classify,
        Op::Restart,
        Op::Race,
    ];

    /// How many argument bytes each operation reads.
    const fn args(self) -> usize {
        match self {
            Op::Task | Op::WaiterFails | Op::ResumeReport | Op::Repair | Op::TaskAnswer => 1,
            Op::Delete | Op::Classify => 1,
            Op::Reconcile | Op::Restart => 0,
            Op::SetState | Op::Waiter | Op::Handoff | Op::Race | Op::CompleteTurn => 2,
            Op::Session | Op::Respond => 3,
            Op::Summary => 4,
            Op::Turn | Op::Message => 5,
            Op::Question => 6,
        }
    }
}

/// One operation as seed bytes (`server/tests/fuzz_corpus.rs` writes the seeds with it).
#[allow(dead_code)] // server/tests/fuzz_corpus.rs writes the seed corpus with it
pub fn op(op: Op, args: &[u8]) -> Vec<u8> {
    let mut out = vec![op as u8];
    out.extend((0..op.args()).map(|i| args.get(i).copied().unwrap_or(0)));
    out
}

// ---- the collaborators -------------------------------------------------------------------------

#[derive(Default)]
struct Waiters {
    live: Mutex<HashSet<String>>,
    fail: Mutex<bool>,
    delivered: Mutex<usize>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl WaiterRegistry for Waiters {
    fn has_waiter(&self, pending_id: &str) -> bool {
        lock(&self.live).contains(pending_id)
    }
    async fn deliver(&self, _: &str, _: &ResponseInput) -> Result<(), DeliveryError> {
        if *lock(&self.fail) {
            return Err(DeliveryError("waiter gone".into()));
        }
        *lock(&self.delivered) += 1;
        Ok(())
    }
}

struct Orchestrator {
    report: Mutex<ResumeReport>,
    calls: Mutex<usize>,
}

impl Resumer for Orchestrator {
    async fn resume(&self, _: &ResumeRequest) -> ResumeReport {
        *lock(&self.calls) += 1;
        *lock(&self.report)
    }
}

struct Env {
    runtime: tokio::runtime::Runtime,
    db: Db,
}

/// The process's runtime and database (made once: migrations are the slow part).
fn env() -> &'static Mutex<Env> {
    static ENV: OnceLock<Mutex<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a current-thread runtime");
        let db = runtime
            .block_on(Db::memory())
            .expect("an in-memory SQLite database");
        Mutex::new(Env { runtime, db })
    })
}

pub fn run(data: &[u8]) {
    let env = lock(env());
    let db = env.db.clone();
    env.runtime.block_on(async move {
        reset(&db).await;
        let mut world = World::new(db).await;
        let mut b = Bytes::new(data);
        let mut ops = 0;
        while !b.is_empty() && ops < MAX_OPS {
            let code = usize::from(b.byte()) % Op::ALL.len();
            let op = Op::ALL[code];
            let args: Vec<u8> = (0..op.args()).map(|_| b.byte()).collect();
            world.apply(op, &args).await;
            world.check_answered().await;
            ops += 1;
        }
    });
}

async fn reset(db: &Db) {
    for table in [
        "delivery_intents",
        "stop_intents",
        "task_status_summaries",
        "messages",
        "turns",
        "sessions",
        "tasks",
        "counters",
    ] {
        task_projection_server::db::query(format!("DELETE FROM {table}"))
            .execute(db)
            .await
            .expect("emptying a table");
    }
}

type Service = RespondService<Waiters, Orchestrator>;

/// The services of one server start, and what the checks remember across operations.
struct World {
    db: Db,
    storage: Storage,
    clock: Arc<ManualClock>,
    sink: BroadcastSink,
    events: tokio::sync::broadcast::Receiver<task_projection_server::events::Event>,
    waiters: Arc<Waiters>,
    orchestrator: Arc<Orchestrator>,
    service: Service,
    repair: SummaryRepair,
    /// Bundles a respond answered successfully, with the rows it claimed.
    answered: HashMap<String, Vec<String>>,
    /// Bundles seen terminal (no pending row, no intent) since their last new pending row.
    terminal: HashSet<String>,
    /// Bundles seen superseded, with the `movable` count at that time.
    superseded: HashMap<String, u64>,
    /// Counts the operations that may legitimately move a bundle's turn.
    movable: u64,
}

impl World {
    async fn new(db: Db) -> World {
        let clock = Arc::new(ManualClock::at("2026-11-29T14:00:00Z").expect("a wire time"));
        let sink = BroadcastSink::new(4096);
        let events = sink.subscribe();
        let waiters = Arc::new(Waiters::default());
        let orchestrator = Arc::new(Orchestrator {
            report: Mutex::new(ResumeReport::AcceptedAndPublished),
            calls: Mutex::new(0),
        });
        let (service, repair) = services(&db, &clock, &sink, &waiters, &orchestrator).await;
        World {
            storage: Storage::new(db.clone()),
            db,
            clock,
            sink,
            events,
            waiters,
            orchestrator,
            service,
            repair,
            answered: HashMap::new(),
            terminal: HashSet::new(),
            superseded: HashMap::new(),
            movable: 0,
        }
    }

    fn now(&self) -> String {
        wire_time(self.clock.now())
    }

    async fn apply(&mut self, op: Op, a: &[u8]) {
        self.clock.advance_secs(1);
        let arg = |i: usize| a.get(i).copied().unwrap_or(0);
        let pick = |i: usize, pool: &[&'static str]| pool[usize::from(arg(i)) % pool.len()];
        let time = |i: usize| TIMES[usize::from(arg(i)) % TIMES.len()];
        // Fixture writes may fail (a duplicate id, a missing parent): that is not a finding.
        match op {
            Op::Task => {
                let task = NewTask {
                    id: pick(0, &TASKS),
                    workspace_id: "ws-1",
                    created_at: TIMES[0],
                };
                let _ = self.storage.insert_task(&task).await;
            }
            Op::Session => {
                let session = NewSession {
                    id: pick(0, &SESSIONS),
                    task_id: pick(1, &TASKS),
                    state: pick(2, &STATES),
                    agent_profile_id: "",
                    is_primary: arg(2) & 0x80 != 0,
                    started_at: TIMES[0],
                    updated_at: TIMES[0],
                };
                let _ = self.storage.insert_session(&session).await;
            }
            Op::Turn => {
                self.movable += 1;
                let session = pick(1, &SESSIONS);
                let Ok(row) = self.storage.session(session).await else {
                    return;
                };
                let mut meta = Map::new();
                let keys = [
                    "lifecycle_only",
                    "prompt_dispatch_pending",
                    "prompt_dispatch_attempted",
                ];
                for (bit, key) in keys.into_iter().enumerate() {
                    if arg(4) & (1u8 << bit) != 0 {
                        meta.insert(key.into(), json!(true));
                    }
                }
                let completed = (arg(3) % 3 == 0).then(|| time(3));
                let turn = NewTurn {
                    id: pick(0, &TURNS),
                    session_id: session,
                    task_id: &row.task_id,
                    started_at: time(2),
                    created_at: time(2),
                    completed_at: completed,
                    metadata: Value::Object(meta),
                };
                let _ = self.storage.insert_turn(&turn).await;
            }
            Op::CompleteTurn => {
                self.movable += 1;
                let _ = self.storage.complete_turn(pick(0, &TURNS), time(1)).await;
            }
            Op::Question | Op::Message => {
                self.movable += 1;
                let session = pick(1, &SESSIONS);
                let Ok(row) = self.storage.session(session).await else {
                    return;
                };
                let turn = match usize::from(arg(2)) % (TURNS.len() + 1) {
                    0 => None,
                    k => Some(TURNS[k - 1]),
                };
                let mut meta = Map::new();
                let extra = arg(5);
                let (kind, status) = if op == Op::Question {
                    let pending = pick(3, &PENDING);
                    meta.insert("pending_id".into(), json!(pending));
                    let status = STATUSES[usize::from(arg(4)) % STATUSES.len()];
                    if status.is_none_or(|s| s.is_empty() || s == "pending") {
                        // A new pending row: the bundle may be active again.
                        self.terminal.remove(pending);
                    }
                    ("clarification_request", status)
                } else {
                    let kinds = ["permission_request", "message", "clarification_request"];
                    let statuses = [Some("pending"), Some("approved"), None, Some("rejected")];
                    (
                        kinds[usize::from(arg(3)) % kinds.len()],
                        statuses[usize::from(arg(4)) % statuses.len()],
                    )
                };
                if let Some(status) = status {
                    meta.insert("status".into(), json!(status));
                }
                if extra & 0x03 != 0 {
                    meta.insert("question_total".into(), json!(extra & 0x03));
                }
                if extra & 0x04 != 0 {
                    meta.insert("agent_disconnected".into(), json!(true));
                }
                let metadata = match extra >> 5 {
                    // Rows the rules cannot read (the projection must fail, not answer clean).
                    7 => json!({"pending_id": 5, "status": ["pending"]}),
                    6 => json!("not an object"),
                    _ => Value::Object(meta),
                };
                let message = NewMessage {
                    id: pick(0, &MESSAGES),
                    session_id: session,
                    task_id: &row.task_id,
                    turn_id: turn,
                    author_type: "agent",
                    message_type: kind,
                    content: "",
                    metadata,
                    created_at: time(5),
                };
                let _ = self.storage.insert_message(&message).await;
            }
            Op::SetState => {
                self.movable += 1;
                let id = pick(0, &SESSIONS);
                if let Ok(row) = self.storage.session(id).await {
                    let now = self.now();
                    let change = StateChange {
                        state: pick(1, &STATES),
                        updated_at: &now,
                        completed_at: None,
                        reason: None,
                    };
                    let _ = self
                        .storage
                        .cas_session_state(id, row.version, &change)
                        .await;
                }
            }
            Op::Waiter => {
                let pending = pick(0, &PENDING).to_owned();
                let mut live = lock(&self.waiters.live);
                if arg(1) % 2 == 0 {
                    live.insert(pending);
                } else {
                    live.remove(&pending);
                }
            }
            Op::WaiterFails => *lock(&self.waiters.fail) = arg(0) % 2 == 1,
            Op::ResumeReport => {
                let reports = [
                    ResumeReport::AcceptedAndPublished,
                    ResumeReport::NotAccepted {
                        rollback_succeeded: true,
                    },
                    ResumeReport::NotAccepted {
                        rollback_succeeded: false,
                    },
                    ResumeReport::AcceptedPublicationFailed,
                    ResumeReport::Ambiguous,
                ];
                *lock(&self.orchestrator.report) = reports[usize::from(arg(0)) % reports.len()];
            }
            Op::Respond => {
                let pending = pick(0, &PENDING);
                self.respond(pending, &response(arg(1), arg(2))).await;
            }
            Op::Race => {
                let pending = pick(0, &PENDING);
                self.race(pending, arg(1)).await;
            }
            Op::Classify => {
                let pending = pick(0, &PENDING);
                if let Ok(state) = self.service.classify(pending).await {
                    self.observe(pending, state);
                }
            }
            Op::Repair => self.repair(pick(0, &TASKS)).await,
            Op::TaskAnswer => self.task_answer(pick(0, &TASKS)).await,
            Op::Summary => {
                let task = pick(0, &TASKS);
                let revision = [0, 1, 4, 5, i64::MAX, -1][usize::from(arg(1)) % 6];
                let mut summary = Map::new();
                summary.insert("revision".into(), json!(revision));
                summary.insert("updated_at".into(), json!(TIMES[0]));
                summary.insert("queued_prompt_count".into(), json!(arg(3)));
                summary.insert("git".into(), json!({"branch": "main"}));
                summary.insert("active_error".into(), Value::Null);
                match arg(2) % 6 {
                    0 => {}
                    1 => {
                        summary.insert("pending_action".into(), json!("clarification"));
                    }
                    2 => {
                        summary.insert("pending_action".into(), json!("permission"));
                    }
                    3 => {
                        summary.insert("pending_action".into(), Value::Null);
                    }
                    4 => {
                        summary.insert("pending_action".into(), json!("bogus"));
                    }
                    _ => {
                        summary.insert("pending_action".into(), json!(7));
                    }
                }
                let summary = match arg(3) % 8 {
                    7 => json!(["not", "an", "object"]),
                    _ => Value::Object(summary),
                };
                let now = self.now();
                match self.storage.summary(task).await {
                    Ok(Some(held)) => {
                        let _ = self
                            .storage
                            .cas_summary(task, held.revision, revision, &summary, &now)
                            .await;
                    }
                    _ => {
                        let _ = self
                            .storage
                            .insert_summary(task, revision, &summary, &now)
                            .await;
                    }
                }
            }
            Op::Reconcile => {
                let _ = self.service.reconcile_intents().await;
            }
            Op::Handoff => {
                let handoffs = [Handoff::None, Handoff::Acknowledged, Handoff::Reserved];
                let handoff = handoffs[usize::from(arg(1)) % handoffs.len()];
                let _ = self
                    .service
                    .record_handoff(pick(0, &PENDING), handoff)
                    .await;
            }
            Op::Delete => {
                self.movable += 1;
                let id = pick(0, &MESSAGES);
                if let Ok(true) = self.storage.delete_message(id).await {
                    // The id may be inserted again as a new row.
                    for rows in self.answered.values_mut() {
                        rows.retain(|r| r != id);
                    }
                }
            }
            Op::Restart => {
                // A new start: a new epoch, no live waiter survives, intents reconciled first.
                self.waiters = Arc::new(Waiters::default());
                let (service, repair) = services(
                    &self.db,
                    &self.clock,
                    &self.sink,
                    &self.waiters,
                    &self.orchestrator,
                )
                .await;
                (self.service, self.repair) = (service, repair);
                let _ = self.service.reconcile_intents().await;
            }
        }
    }

    /// A bundle state seen (by classify or respond): terminal and superseded bundles never
    /// become active again.
    fn observe(&mut self, pending: &str, state: BundleState) {
        if state.is_active() {
            assert!(
                !self.terminal.contains(pending),
                "terminal bundle {pending} became {state:?}"
            );
            assert!(
                self.superseded.get(pending) != Some(&self.movable),
                "superseded bundle {pending} became {state:?} with no turn, state or row change"
            );
        }
        match state {
            BundleState::Terminal => {
                self.terminal.insert(pending.to_owned());
            }
            BundleState::SupersededHistory => {
                self.superseded.insert(pending.to_owned(), self.movable);
            }
            _ => {}
        }
    }

    async fn respond(&mut self, pending: &str, input: &ResponseInput) {
        let Ok(state) = self.service.classify(pending).await else {
            let _ = self.service.respond(pending, input).await;
            return;
        };
        self.observe(pending, state);
        let pending_rows = self.pending_rows(pending).await;
        let before = self.fingerprint().await;
        let resumes = *lock(&self.orchestrator.calls);
        let delivered = *lock(&self.waiters.delivered);
        let Ok(outcome) = self.service.respond(pending, input).await else {
            return;
        };
        let resumed = lock(&self.orchestrator.calls).saturating_sub(resumes);
        let handed = lock(&self.waiters.delivered).saturating_sub(delivered);
        let RespondOutcome {
            reply, state: seen, ..
        } = outcome;
        assert_eq!(
            seen, state,
            "respond placed {pending} otherwise than classify"
        );
        assert!(resumed <= 1, "one respond resumed {resumed} times");
        if input.kind == Response::Reject {
            assert_eq!(resumed, 0, "a rejection resumed the agent");
        }
        if !state.is_active() {
            assert_eq!(
                reply,
                RespondReply::Conflict,
                "{state:?} bundle answered {reply:?}"
            );
            assert_eq!(self.fingerprint().await, before, "a conflict wrote");
            assert_eq!((resumed, handed), (0, 0), "a conflict resumed or delivered");
            return;
        }
        assert_ne!(
            reply,
            RespondReply::Conflict,
            "lone respond to an active bundle conflicted"
        );
        match reply {
            RespondReply::Success => {
                match (state, input.kind) {
                    (BundleState::ActiveLive, _) => {
                        assert_eq!(
                            (handed, resumed),
                            (1, 0),
                            "live success without one delivery"
                        )
                    }
                    (_, Response::Answer) => assert_eq!(resumed, 1, "detached answer resumes once"),
                    (_, Response::Reject) => assert_eq!(resumed, 0),
                }
                let still = self.pending_rows(pending).await;
                assert!(
                    still.iter().all(|id| !pending_rows.contains(id)),
                    "success left claimed rows pending: {still:?}"
                );
                assert!(
                    self.intent(pending).await.is_none(),
                    "success left an intent"
                );
                if let Ok(after) = self.service.classify(pending).await {
                    assert_eq!(
                        after,
                        BundleState::Terminal,
                        "an answered bundle is not terminal"
                    );
                    self.observe(pending, after);
                }
                self.answered.insert(pending.to_owned(), pending_rows);
            }
            RespondReply::RetryableError => {
                assert_eq!(
                    self.pending_rows(pending).await,
                    pending_rows,
                    "a retryable error did not restore the bundle"
                );
                assert!(
                    self.intent(pending).await.is_none(),
                    "retryable error left an intent"
                );
            }
            RespondReply::NonRetryableError | RespondReply::Conflict => {}
        }
    }

    /// Two responds to one bundle at once: at most one succeeds.
    async fn race(&mut self, pending: &str, payload: u8) {
        let (answer, reject) = (response(0, payload), response(1, payload));
        let (a, b) = tokio::join!(
            self.service.respond(pending, &answer),
            self.service.respond(pending, &reject)
        );
        let wins = [&a, &b]
            .iter()
            .filter(|r| matches!(r, Ok(o) if o.reply == RespondReply::Success))
            .count();
        assert!(wins <= 1, "two racing responds both succeeded: {a:?} {b:?}");
        for outcome in [a, b].into_iter().flatten() {
            if outcome.state == BundleState::Terminal {
                self.terminal.insert(pending.to_owned());
            }
        }
        if let Ok(state) = self.service.classify(pending).await {
            self.observe(pending, state);
        }
    }

    /// The ids of the bundle's rows that are pending now (missing, empty or `pending` status).
    async fn pending_rows(&self, pending: &str) -> Vec<String> {
        let mut out = Vec::new();
        for session in self
            .storage
            .sessions_with_bundle(pending)
            .await
            .unwrap_or_default()
        {
            for row in self
                .storage
                .messages_of_session(&session)
                .await
                .unwrap_or_default()
            {
                let is_row = row.kind() == MessageKind::ClarificationRequest
                    && row.pending_id() == Some(pending);
                if is_row && row.status().is_pending() {
                    out.push(row.id().to_owned());
                }
            }
        }
        out.sort();
        out
    }

    async fn intent(&self, pending: &str) -> Option<()> {
        self.storage
            .delivery_intent(pending)
            .await
            .ok()
            .flatten()
            .map(|_| ())
    }

    /// Everything a conflict must not write.
    async fn fingerprint(&self) -> Vec<String> {
        let mut out = Vec::new();
        for sql in [
            "SELECT id || ':' || version || ':' || metadata FROM messages ORDER BY id",
            "SELECT pending_id || ':' || handoff || ':' || message_ids FROM delivery_intents ORDER BY pending_id",
            "SELECT task_id || ':' || revision || ':' || summary FROM task_status_summaries ORDER BY task_id",
        ] {
            let rows: Vec<String> = task_projection_server::db::query_scalar(sql)
                .fetch_all(&self.db)
                .await
                .unwrap_or_default();
            out.extend(rows);
        }
        out
    }

    /// The rows claimed by a successful respond stay terminal.
    async fn check_answered(&self) {
        for (pending, ids) in &self.answered {
            for id in ids {
                if let Ok(row) = self.storage.message(id).await {
                    assert!(
                        !row.status().is_pending(),
                        "row {id} of answered bundle {pending} is pending again"
                    );
                }
            }
        }
    }

    /// The SPEC §4 task action, computed here from the stored rows; `None` when a row does not
    /// decode (the rules cannot answer).
    async fn rule_action(&self, task: &str) -> Option<Option<PendingAction>> {
        struct Projected {
            id: String,
            state: SessionState,
            action: Option<PendingAction>,
        }
        impl SessionRecord for Projected {
            fn id(&self) -> &str {
                &self.id
            }
            fn task_id(&self) -> Option<&str> {
                None
            }
            fn state(&self) -> Option<SessionState> {
                Some(self.state)
            }
            fn is_primary(&self) -> bool {
                false
            }
            fn action(&self) -> Option<PendingAction> {
                self.action
            }
        }
        let mut projected = Vec::new();
        for session in self.storage.sessions_of_task(task).await.ok()? {
            let turns = self.storage.turns_of_session(&session.id).await.ok()?;
            let action = match self.storage.messages_of_session(&session.id).await {
                Ok(messages) => {
                    session_pending_action(Some(session.state()), Some(&turns[..]), &messages).0
                }
                // Some row is unreadable. The rules read only the current turn's request rows:
                // the answer comes from those, and is unreadable only when one of them is.
                Err(_) => {
                    self.narrow_rule_action(&session.id, session.state(), &turns)
                        .await?
                }
            };
            projected.push(Projected {
                id: session.id.clone(),
                state: session.state(),
                action,
            });
        }
        Some(task_pending_action(&projected))
    }

    /// The rules' answer for a session some of whose message rows are unreadable: which turns
    /// messages reference comes from the `turn_id` column (always text), the current turn from the
    /// rules, and only that turn's request rows are decoded (`None`: one of them is unreadable).
    async fn narrow_rule_action(
        &self,
        session: &str,
        state: SessionState,
        turns: &[TurnRow],
    ) -> Option<Option<PendingAction>> {
        let rows: Vec<(String, Option<String>, String)> = task_projection_server::db::query(
            "SELECT id, turn_id, message_type FROM messages WHERE session_id = $1 ORDER BY seq",
        )
        .bind(session)
        .fetch_all(&self.db)
        .await
        .ok()?
        .iter()
        .map(|row| {
            Some((
                row.get("id").ok()?,
                row.get("turn_id").ok()?,
                row.get("message_type").ok()?,
            ))
        })
        .collect::<Option<_>>()?;
        let referenced: HashSet<&str> = rows
            .iter()
            .filter_map(|(_, turn, _)| turn.as_deref().filter(|t| !t.is_empty()))
            .collect();
        match session_pending_read(Some(state), Some(turns), |t| referenced.contains(t)) {
            PendingRead::Decided(_) => Some(None),
            PendingRead::Turn(turn) => {
                let mut requests = Vec::new();
                for (id, row_turn, kind) in &rows {
                    let request = kind == "clarification_request" || kind == "permission_request";
                    if request && row_turn.as_deref() == Some(turn) {
                        requests.push(self.storage.message(id).await.ok()?);
                    }
                }
                Some(turn_pending_action(requests.into_iter()).0)
            }
        }
    }

    async fn repair(&mut self, task: &str) {
        drain(&mut self.events);
        let held = self.storage.summary(task).await.ok().flatten();
        let rule = self.rule_action(task).await;
        let Ok(outcome) = self.repair.repair(task).await else {
            return;
        };
        let published = drain(&mut self.events)
            .iter()
            .filter(|e| e.name == TASK_STATUS_SUMMARY_UPDATED)
            .count();
        let stored = self.storage.summary(task).await.ok().flatten();
        match &outcome {
            RepairOutcome::NoSummary => assert!(held.is_none() && stored.is_none()),
            RepairOutcome::Unchanged(summary) | RepairOutcome::Repaired(summary) => {
                let Some(rule) = rule else {
                    panic!("summary repair of {task} answered {outcome:?} from unreadable rows");
                };
                assert_eq!(
                    summary_action(summary),
                    Some(rule),
                    "repaired summary of {task} is not the rules' action"
                );
                let stored = stored.expect("a summary after its repair");
                assert_eq!(&stored.summary, summary, "the answer is not what is stored");
                let held = held.expect("a summary before its repair");
                if matches!(outcome, RepairOutcome::Unchanged(_)) {
                    assert_eq!(published, 0, "an unchanged repair published");
                    assert_eq!(stored.revision, held.revision, "an unchanged repair wrote");
                } else {
                    assert_eq!(published, 1, "a repair published {published} events");
                    assert_eq!(Some(stored.revision), held.revision.checked_add(1));
                    assert_eq!(summary["revision"], json!(stored.revision));
                    if let Value::Object(old) = &held.summary {
                        for (key, value) in old {
                            if !["pending_action", "revision", "updated_at"].contains(&key.as_str())
                            {
                                assert_eq!(summary.get(key), Some(value), "repair lost {key}");
                            }
                        }
                    }
                    // Repeating a correct repair writes and publishes nothing.
                    let again = self.repair.repair(task).await;
                    assert!(
                        matches!(again, Ok(RepairOutcome::Unchanged(_)) | Err(_)),
                        "a second repair of {task}: {again:?}"
                    );
                    assert!(
                        drain(&mut self.events).is_empty(),
                        "a second repair published"
                    );
                }
            }
            RepairOutcome::Invalidated { attempts } => {
                assert!(*attempts >= 1 && *attempts <= 3, "{attempts} attempts");
                assert_eq!(published, 0, "an invalidated repair published");
                let (held, stored) = (held.map(|h| h.summary), stored.map(|s| s.summary));
                assert_eq!(held, stored, "an invalidated repair wrote");
            }
        }
    }

    async fn task_answer(&mut self, task: &str) {
        let rule = self.rule_action(task).await;
        let Ok(answer) = self.repair.task_answer(task).await else {
            return;
        };
        let Some(rule) = rule else {
            panic!("task answer of {task} from unreadable rows: {answer}");
        };
        let legacy =
            wire::pending_action(&Json::new(&answer["task_pending_action"]), &Path::Root("t"));
        assert_eq!(
            legacy.ok().flatten(),
            Some(rule),
            "task_pending_action is not the rules'"
        );
        if let Some(summary) = answer.get("status_summary") {
            assert_eq!(
                summary_action(summary),
                Some(rule),
                "answered summary is not the rules'"
            );
            assert!(answer.get("status_summary_invalidated").is_none());
        }
        drain(&mut self.events);
    }
}

/// The `pending_action` a summary object carries (omitted = clean); `None` when it does not
/// decode.
fn summary_action(summary: &Value) -> Option<Option<PendingAction>> {
    wire::summary(&Json::new(summary), &Path::Root("status_summary"))
        .ok()
        .flatten()
        .map(|s| s.pending_action)
}

fn response(kind: u8, payload: u8) -> ResponseInput {
    let payloads = [
        json!({"answers": ["yes", "blue"]}),
        json!({"rejected": true}),
        Value::Null,
        json!("x"),
        json!({"answers": [{"deep": [1, 2, {"a": "é\u{0}"}]}]}),
        json!({"answers": ["y".repeat(300)]}),
    ];
    ResponseInput {
        kind: if kind % 2 == 0 {
            Response::Answer
        } else {
            Response::Reject
        },
        payload: payloads[usize::from(payload) % payloads.len()].clone(),
    }
}

async fn services(
    db: &Db,
    clock: &Arc<ManualClock>,
    sink: &BroadcastSink,
    waiters: &Arc<Waiters>,
    orchestrator: &Arc<Orchestrator>,
) -> (Service, SummaryRepair) {
    let revisions = RevisionClock::start(db.clone())
        .await
        .expect("the revision clock starts");
    let projector = Projector::new(Storage::new(db.clone()), revisions);
    let repair = SummaryRepair::new(projector.clone(), Arc::new(sink.clone()), clock.clone());
    let service = RespondService::new(
        projector,
        waiters.clone(),
        orchestrator.clone(),
        Arc::new(sink.clone()),
        clock.clone(),
    )
    .with_summary_repair(repair.clone());
    (service, repair)
}

/// Seeds: the scenarios of server/tests/server_respond.rs and server/tests/server_summary.rs as
/// operations.
#[allow(dead_code)] // server/tests/fuzz_corpus.rs writes the seed corpus with it
pub fn seeds() -> Vec<(&'static str, Vec<u8>)> {
    let base = [
        op(Op::Task, &[0]),
        op(Op::Session, &[0, 0, 0]),
        op(Op::Turn, &[0, 0, 1, 1, 0]),
        op(Op::Question, &[0, 0, 1, 0, 0, 0]),
        op(Op::Question, &[1, 0, 1, 0, 0, 0]),
    ]
    .concat();
    let with = |ops: &[Vec<u8>]| [base.clone(), ops.concat()].concat();
    vec![
        (
            "detached_answer",
            with(&[op(Op::Respond, &[0, 0, 0]), op(Op::Respond, &[0, 0, 0])]),
        ),
        ("detached_reject", with(&[op(Op::Respond, &[0, 1, 1])])),
        (
            "superseded_56",
            with(&[
                op(Op::Turn, &[1, 0, 4, 1, 0]),
                op(Op::Classify, &[0]),
                op(Op::Respond, &[0, 0, 0]),
            ]),
        ),
        (
            "acceptance_failure_57",
            with(&[
                op(Op::ResumeReport, &[1]),
                op(Op::Respond, &[0, 0, 0]),
                op(Op::ResumeReport, &[0]),
                op(Op::Respond, &[0, 0, 0]),
                op(Op::Respond, &[0, 0, 0]),
            ]),
        ),
        (
            "live_waiter",
            with(&[
                op(Op::Waiter, &[0, 0]),
                op(Op::Respond, &[0, 1, 1]),
                op(Op::Classify, &[0]),
            ]),
        ),
        (
            "live_delivery_failure",
            with(&[
                op(Op::Waiter, &[0, 0]),
                op(Op::WaiterFails, &[1]),
                op(Op::Respond, &[0, 0, 0]),
            ]),
        ),
        (
            "unpublished_stays_terminal",
            with(&[
                op(Op::ResumeReport, &[3]),
                op(Op::Respond, &[0, 0, 0]),
                op(Op::Respond, &[0, 0, 0]),
            ]),
        ),
        (
            "reconcile_restores",
            with(&[
                op(Op::ResumeReport, &[2]),
                op(Op::Respond, &[0, 0, 0]),
                op(Op::Respond, &[0, 1, 0]),
                op(Op::Restart, &[]),
                op(Op::Classify, &[0]),
            ]),
        ),
        (
            "reconcile_retires",
            with(&[
                op(Op::ResumeReport, &[2]),
                op(Op::Respond, &[0, 0, 0]),
                op(Op::Turn, &[1, 0, 4, 1, 0]),
                op(Op::Reconcile, &[]),
                op(Op::Question, &[2, 0, 2, 2, 0, 0]),
                op(Op::Respond, &[2, 0, 0]),
                op(Op::Handoff, &[2, 1]),
                op(Op::Reconcile, &[]),
            ]),
        ),
        (
            "race",
            with(&[op(Op::Race, &[0, 0]), op(Op::Race, &[0, 1])]),
        ),
        (
            "summary_repair",
            with(&[
                op(Op::Summary, &[0, 2, 0, 2]),
                op(Op::Repair, &[0]),
                op(Op::Repair, &[0]),
                op(Op::TaskAnswer, &[0]),
                op(Op::Respond, &[0, 0, 0]),
                op(Op::TaskAnswer, &[0]),
            ]),
        ),
        (
            "summary_overflow",
            with(&[
                op(Op::Summary, &[0, 4, 2, 0]),
                op(Op::Repair, &[0]),
                op(Op::TaskAnswer, &[0]),
            ]),
        ),
        (
            "quarantine",
            with(&[
                op(Op::SetState, &[0, 2]),
                op(Op::Classify, &[0]),
                op(Op::SetState, &[0, 0]),
                op(Op::Respond, &[0, 0, 0]),
            ]),
        ),
        (
            "corrupt_rows",
            with(&[
                op(Op::Question, &[3, 0, 1, 0, 0, 0xe0]),
                op(Op::Summary, &[0, 1, 1, 0]),
                op(Op::Repair, &[0]),
                op(Op::TaskAnswer, &[0]),
                op(Op::Respond, &[0, 0, 0]),
            ]),
        ),
        (
            "two_sessions_permission",
            with(&[
                op(Op::Session, &[1, 0, 1]),
                op(Op::Turn, &[2, 1, 2, 1, 0]),
                op(Op::Message, &[4, 1, 3, 0, 0]),
                op(Op::Summary, &[0, 1, 0, 1]),
                op(Op::Repair, &[0]),
                op(Op::Delete, &[4]),
                op(Op::Repair, &[0]),
            ]),
        ),
    ]
}
