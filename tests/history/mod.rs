//! A simulated backend for the convergence properties (docs/convergence.md): it runs random
//! actions on tasks, sessions, turns and messages and records every input a client receives
//! (WebSocket frames, and REST snapshots read at that point of the history) in emission order,
//! as store-scenario calls (docs/store-fixture-format.md). Histories are server-like: every
//! version of a row has its own `updated_at`, projections carry strictly increasing revisions
//! (a restart bumps the epoch), ids are never reused, sessions leave a task only with the task,
//! and nothing SPEC lets a later arrival decide (`task.updated` with a summary, invalidated
//! snapshots) is generated. The backend projects with the crate's own rules (SPEC §4), as the
//! reference server does.
#![allow(dead_code)]

mod respond;

use serde_json::{json, Map, Value};
use task_projection::rules::model::{
    Message, MessageKind, PendingAction, RequestStatus, SessionState, Turn, TurnFlags,
};
use task_projection::rules::pending;
use task_projection::rules::time::Timestamp;

/// One input as the store receives it.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// A store call (`applyMessageEvent`, `applySessionList`, ...) with its arguments.
    Call {
        call: &'static str,
        args: Vec<Value>,
    },
    /// A REST task snapshot: `beginTaskFetch()` when the request is issued, then
    /// `applyTaskSnapshot(token, tasks)`.
    TaskSnapshot { tasks: Value },
    /// The user's answer to bundle `pending_id` (SPEC §13), handled by the server at this point of
    /// the history (every earlier input was produced before it handled the response): the client
    /// calls `respondStart(session, pending_id)` at some earlier point of its delivery, and
    /// `respondReply(attempt, reply)` with what came back (`{status, body}` or `{error}`), then
    /// applies the body's `session` and `status_summary` as `js/respond.js` does.
    Respond {
        session: String,
        task: String,
        pending_id: String,
        reply: Value,
    },
}

impl Input {
    fn call(call: &'static str, args: Vec<Value>) -> Input {
        Input::Call { call, args }
    }
}

/// A history: the inputs in emission order, and the ids it used.
#[derive(Clone, Debug)]
pub struct History {
    pub inputs: Vec<Input>,
    pub tasks: Vec<String>,
    /// `(session id, task id)`.
    pub sessions: Vec<(String, String)>,
}

#[derive(Clone, Debug)]
struct SimTurn {
    id: String,
    started_at: u64,
    updated_at: u64,
    completed_at: Option<u64>,
    lifecycle: bool,
    reserved: bool,
    attempted: bool,
}

#[derive(Clone, Debug)]
struct SimMessage {
    id: String,
    turn_id: Option<String>,
    kind: &'static str,
    status: &'static str,
    pending_id: Option<String>,
    total: Option<u32>,
    created_at: u64,
    updated_at: u64,
    deleted: bool,
}

#[derive(Clone, Debug)]
struct SimSession {
    id: String,
    task: usize,
    state: &'static str,
    started_at: u64,
    updated_at: u64,
    is_primary: bool,
    turns: Vec<SimTurn>,
    messages: Vec<SimMessage>,
}

#[derive(Clone, Debug)]
struct SimTask {
    id: String,
    summary_revision: u64,
    summary_action: Option<PendingAction>,
    summary_updated_at: u64,
    removed: bool,
}

/// The simulated backend.
#[derive(Clone)]
struct Sim {
    /// Milliseconds since 2026-11-29T12:00:00Z; every action advances it.
    clock: u64,
    epoch: u64,
    sequence: u64,
    tasks: Vec<SimTask>,
    sessions: Vec<SimSession>,
    inputs: Vec<Input>,
    next_id: u32,
    /// Bundles a respond found no longer active with rows still pending (superseded or
    /// quarantined, SPEC §8): `(session, pending_id)`. A backend never makes one active again.
    dead: Vec<(usize, String)>,
    /// Whether the user answers questions (the respond actions are taken).
    responds: bool,
}

/// The wire text of a clock value: `2026-11-29T12:MM:SS.NNNNNNNNNZ`, 9 fraction digits.
pub fn ts(clock: u64) -> String {
    let (secs, ms) = (clock / 1000, clock % 1000);
    let (hours, minutes, seconds) = (12 + secs / 3600, secs / 60 % 60, secs % 60);
    format!(
        "2026-11-29T{hours:02}:{minutes:02}:{seconds:02}.{:09}Z",
        ms * 1_000_000 + 7
    )
}

const STATES: [&str; 6] = [
    "RUNNING",
    "WAITING_FOR_INPUT",
    "IDLE",
    "RUNNING",
    "COMPLETED",
    "CANCELLED",
];

impl Sim {
    fn tick(&mut self) -> u64 {
        self.clock += 1 + u64::from(self.next_id % 3);
        self.clock
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}{}", self.next_id)
    }

    fn revision(&mut self) -> Value {
        self.sequence += 1;
        json!({"epoch": self.epoch.to_string(), "sequence": self.sequence})
    }

    fn live(&self, s: usize) -> bool {
        let session = &self.sessions[s];
        !self.tasks[session.task].removed && !SessionState::parse(session.state).is_terminal()
    }

    fn add_session(&mut self, task: usize) -> usize {
        let now = self.tick();
        let primary = !self.sessions.iter().any(|s| s.task == task);
        let id = self.fresh("sess-");
        self.sessions.push(SimSession {
            id,
            task,
            state: "RUNNING",
            started_at: now,
            updated_at: now,
            is_primary: primary,
            turns: Vec::new(),
            messages: Vec::new(),
        });
        let s = self.sessions.len() - 1;
        self.emit_session_event(s);
        s
    }

    fn rule_turns(&self, s: usize) -> Vec<Turn> {
        self.sessions[s]
            .turns
            .iter()
            .map(|t| Turn {
                id: t.id.clone(),
                completed: t.completed_at.is_some(),
                started_at: Timestamp::parse(&ts(t.started_at)),
                created_at: Timestamp::parse(&ts(t.started_at)),
                updated_at: Some(Timestamp::parse(&ts(t.updated_at))),
                flags: TurnFlags {
                    lifecycle_only: t.lifecycle,
                    prompt_dispatch_pending: t.reserved,
                    prompt_dispatch_attempted: t.attempted,
                },
            })
            .collect()
    }

    fn rule_messages(&self, s: usize) -> Vec<Message> {
        let mut rows: Vec<&SimMessage> = self.sessions[s]
            .messages
            .iter()
            .filter(|m| !m.deleted)
            .collect();
        rows.sort_by_key(|m| (m.created_at, m.id.clone()));
        rows.into_iter().map(rule_message).collect()
    }

    /// The backend's projection of a session (SPEC §4, with the crate's rules).
    fn projection(&self, s: usize) -> Option<PendingAction> {
        let state = SessionState::parse(self.sessions[s].state);
        let turns = self.rule_turns(s);
        pending::session_pending_action(Some(state), Some(&turns), &self.rule_messages(s)).0
    }

    fn projection_keys(&mut self, s: usize, payload: &mut Map<String, Value>) {
        let action = self.projection(s);
        payload.insert("pending_action".into(), action_json(action));
        payload.insert("pending_action_revision".into(), self.revision());
    }

    fn task_action(&self, task: usize) -> Option<PendingAction> {
        let mut clarification = false;
        for s in (0..self.sessions.len()).filter(|&s| self.sessions[s].task == task) {
            if !SessionState::parse(self.sessions[s].state).is_input_capable() {
                continue;
            }
            match self.projection(s) {
                Some(PendingAction::Permission) => return Some(PendingAction::Permission),
                Some(PendingAction::Clarification) => clarification = true,
                None => {}
            }
        }
        clarification.then_some(PendingAction::Clarification)
    }

    fn summary_json(&self, task: usize) -> Value {
        let t = &self.tasks[task];
        let mut summary = json!({
            "revision": t.summary_revision,
            "updated_at": ts(t.summary_updated_at),
            "queued_prompt_count": t.summary_revision % 3,
        });
        if let Some(action) = t.summary_action {
            summary["pending_action"] = json!(action.as_str());
        }
        summary
    }

    /// Publishes the task's status summary when its action changed (and once at creation).
    fn repair_summary(&mut self, task: usize, force: bool) {
        let action = self.task_action(task);
        if !force && action == self.tasks[task].summary_action {
            return;
        }
        let now = self.tick();
        let t = &mut self.tasks[task];
        t.summary_revision += 1;
        t.summary_action = action;
        t.summary_updated_at = now;
        let payload = json!({
            "task_id": t.id,
            "workspace_id": "ws-1",
            "status_summary": self.summary_json(task),
        });
        self.inputs
            .push(Input::call("applyStatusSummaryEvent", vec![payload]));
    }

    fn emit_session_event(&mut self, s: usize) {
        let session = &self.sessions[s];
        let mut payload = Map::new();
        payload.insert("id".into(), json!(session.id));
        payload.insert("task_id".into(), json!(self.tasks[session.task].id));
        payload.insert("state".into(), json!(session.state));
        payload.insert("updated_at".into(), json!(ts(session.updated_at)));
        self.projection_keys(s, &mut payload);
        self.inputs.push(Input::call(
            "applySessionEvent",
            vec![Value::Object(payload)],
        ));
        let task = self.sessions[s].task;
        self.repair_summary(task, false);
    }

    fn turn_json(&self, s: usize, t: &SimTurn) -> Value {
        let session = &self.sessions[s];
        let mut metadata = Map::new();
        if t.lifecycle {
            metadata.insert("lifecycle_only".into(), json!(true));
        }
        if t.reserved {
            metadata.insert("prompt_dispatch_pending".into(), json!(true));
        }
        if t.attempted {
            metadata.insert("prompt_dispatch_attempted".into(), json!(true));
        }
        json!({
            "id": t.id,
            "session_id": session.id,
            "task_id": self.tasks[session.task].id,
            "started_at": ts(t.started_at),
            "created_at": ts(t.started_at),
            "updated_at": ts(t.updated_at),
            "completed_at": t.completed_at.map(ts),
            "metadata": metadata,
        })
    }

    fn emit_turn(&mut self, s: usize, index: usize) {
        let before = self.projection(s);
        let turn = self.sessions[s].turns[index].clone();
        let payload = self.turn_json(s, &turn);
        self.inputs
            .push(Input::call("applyTurnEvent", vec![payload]));
        // A turn that moves the current turn moves the projection: the backend publishes it
        // with a `session.state_changed` of the same state.
        if self.projection(s) != before {
            self.emit_session_event(s);
        }
    }

    fn message_json(&self, s: usize, m: &SimMessage, id_key: &str) -> Map<String, Value> {
        let session = &self.sessions[s];
        let mut metadata = Map::new();
        if let Some(p) = &m.pending_id {
            metadata.insert("pending_id".into(), json!(p));
        }
        if let Some(n) = m.total {
            metadata.insert("question_total".into(), json!(n));
        }
        if m.kind != "message" {
            metadata.insert("status".into(), json!(m.status));
        }
        let mut row = Map::new();
        row.insert(id_key.into(), json!(m.id));
        row.insert("session_id".into(), json!(session.id));
        row.insert("task_id".into(), json!(self.tasks[session.task].id));
        if let Some(turn) = &m.turn_id {
            row.insert("turn_id".into(), json!(turn));
        }
        row.insert("author_type".into(), json!("agent"));
        row.insert("type".into(), json!(m.kind));
        row.insert("metadata".into(), Value::Object(metadata));
        row.insert("created_at".into(), json!(ts(m.created_at)));
        row.insert("updated_at".into(), json!(ts(m.updated_at)));
        row
    }

    fn emit_message(&mut self, s: usize, index: usize, kind: &'static str, project: bool) {
        let m = self.sessions[s].messages[index].clone();
        let mut payload = self.message_json(s, &m, "message_id");
        payload.insert("content".into(), json!("…"));
        if project {
            self.projection_keys(s, &mut payload);
        }
        self.inputs.push(Input::call(
            "applyMessageEvent",
            vec![json!(kind), Value::Object(payload)],
        ));
        if project {
            let task = self.sessions[s].task;
            self.repair_summary(task, false);
        } else {
            // The backend could not project: it publishes the projection once it can, with a
            // `session.state_changed` of the same state (SPEC §5 drops the projection of an
            // update older than the held row, so the next projection must come from an input
            // that is not older).
            self.emit_session_event(s);
        }
    }

    fn newest_turn(&self, s: usize) -> Option<String> {
        self.sessions[s].turns.last().map(|t| t.id.clone())
    }

    fn add_message(
        &mut self,
        s: usize,
        kind: &'static str,
        pending: Option<(String, Option<u32>)>,
        turnless: bool,
        project: bool,
    ) {
        let now = self.tick();
        let id = self.fresh("msg-");
        let turn_id = if turnless { None } else { self.newest_turn(s) };
        let (pending_id, total) = match pending {
            Some((p, n)) => (Some(p), n),
            None => (None, None),
        };
        self.sessions[s].messages.push(SimMessage {
            id,
            turn_id,
            kind,
            status: "pending",
            pending_id,
            total,
            created_at: now,
            updated_at: now,
            deleted: false,
        });
        let index = self.sessions[s].messages.len() - 1;
        self.emit_message(s, index, "added", project);
    }

    fn snapshot_sessions(&mut self, task: usize) {
        let revision = self.revision();
        let mut listed: Vec<usize> = (0..self.sessions.len())
            .filter(|&s| self.sessions[s].task == task)
            .collect();
        listed.sort_by_key(|&s| std::cmp::Reverse(self.sessions[s].started_at));
        let rows: Vec<Value> = listed
            .iter()
            .map(|&s| {
                let session = &self.sessions[s];
                json!({
                    "id": session.id,
                    "task_id": self.tasks[task].id,
                    "state": session.state,
                    "started_at": ts(session.started_at),
                    "updated_at": ts(session.updated_at),
                    "is_primary": session.is_primary,
                    "pending_action": action_json(self.projection(s)),
                    "pending_action_revision": revision,
                })
            })
            .collect();
        let id = self.tasks[task].id.clone();
        self.inputs.push(Input::call(
            "applySessionList",
            vec![json!(id), json!(rows)],
        ));
    }

    fn step(&mut self, action: (u8, u8, u8, u8)) {
        let (kind, a, b, c) = action;
        let live: Vec<usize> = (0..self.sessions.len()).filter(|&s| self.live(s)).collect();
        let pick = |n: u8| -> Option<usize> {
            (!live.is_empty()).then(|| live[usize::from(n) % live.len()])
        };
        let project = c % 9 != 0;
        match kind % 24 {
            0 => {
                let task = usize::from(a) % self.tasks.len();
                let count = self.sessions.iter().filter(|s| s.task == task).count();
                if !self.tasks[task].removed && count < 3 {
                    self.add_session(task);
                }
            }
            1 | 2 => {
                let Some(s) = pick(a) else { return };
                self.complete_open_turn(s);
                let now = self.tick();
                let id = self.fresh("turn-");
                self.sessions[s].turns.push(SimTurn {
                    id,
                    started_at: now,
                    updated_at: now,
                    completed_at: None,
                    lifecycle: b % 7 == 3,
                    reserved: b % 5 == 1,
                    attempted: false,
                });
                let index = self.sessions[s].turns.len() - 1;
                self.emit_turn(s, index);
            }
            3 => {
                let Some(s) = pick(a) else { return };
                self.complete_open_turn(s);
            }
            4 => {
                let Some(s) = pick(a) else { return };
                let Some(index) = self.sessions[s]
                    .turns
                    .iter()
                    .rposition(|t| t.reserved && !t.attempted)
                else {
                    return;
                };
                let now = self.tick();
                let turn = &mut self.sessions[s].turns[index];
                turn.attempted = true;
                turn.updated_at = now;
                self.emit_turn(s, index);
            }
            5..=7 => {
                let Some(s) = pick(a) else { return };
                self.add_message(s, "message", None, b % 6 == 0, project);
            }
            8 | 9 => {
                let Some(s) = pick(a) else { return };
                let size = 1 + usize::from(b % 3);
                let pending_id = self.fresh("p-");
                let total = (c % 4 != 0).then_some(size as u32);
                for _ in 0..size {
                    self.add_message(
                        s,
                        "clarification_request",
                        Some((pending_id.clone(), total)),
                        false,
                        project,
                    );
                }
            }
            10 => {
                let Some(s) = pick(a) else { return };
                self.add_message(s, "permission_request", None, b % 8 == 0, project);
            }
            11 | 12 => {
                // Answer (or skip) a pending question bundle, or resolve a permission.
                let Some(s) = pick(a) else { return };
                let candidates: Vec<usize> = (0..self.sessions[s].messages.len())
                    .filter(|&i| {
                        let m = &self.sessions[s].messages[i];
                        !m.deleted && m.kind != "message" && m.status == "pending"
                    })
                    .collect();
                if candidates.is_empty() {
                    return;
                }
                let first = candidates[usize::from(b) % candidates.len()];
                let group: Vec<usize> = match self.sessions[s].messages[first].pending_id.clone() {
                    Some(p) => candidates
                        .iter()
                        .copied()
                        .filter(|&i| self.sessions[s].messages[i].pending_id.as_ref() == Some(&p))
                        .collect(),
                    None => vec![first],
                };
                for i in group {
                    let now = self.tick();
                    let m = &mut self.sessions[s].messages[i];
                    m.status = match (m.kind, c % 2) {
                        ("permission_request", 0) => "approved",
                        ("permission_request", _) => "rejected",
                        (_, 0) => "answered",
                        _ => "rejected",
                    };
                    m.updated_at = now;
                    self.emit_message(s, i, "updated", project);
                }
            }
            13 => {
                let Some(s) = pick(a) else { return };
                let alive: Vec<usize> = (0..self.sessions[s].messages.len())
                    .filter(|&i| !self.sessions[s].messages[i].deleted)
                    .collect();
                if alive.is_empty() {
                    return;
                }
                let i = alive[usize::from(b) % alive.len()];
                self.sessions[s].messages[i].deleted = true;
                self.emit_message(s, i, "deleted", project);
            }
            14 => {
                let Some(s) = pick(a) else { return };
                let state = STATES[usize::from(b) % STATES.len()];
                if state == self.sessions[s].state {
                    return;
                }
                let now = self.tick();
                self.sessions[s].state = state;
                self.sessions[s].updated_at = now;
                self.emit_session_event(s);
            }
            15 => {
                // A restart: a new epoch, the sequence starts over.
                self.epoch += 1;
                self.sequence = 0;
                self.tick();
            }
            16 => {
                let task = usize::from(a) % self.tasks.len();
                if !self.tasks[task].removed {
                    self.snapshot_sessions(task);
                }
            }
            17 => {
                let Some(s) = pick(a) else { return };
                let id = self.sessions[s].id.clone();
                let turns: Vec<Value> = self.sessions[s]
                    .turns
                    .clone()
                    .iter()
                    .map(|t| self.turn_json(s, t))
                    .collect();
                self.inputs
                    .push(Input::call("applyTurnList", vec![json!(id), json!(turns)]));
            }
            18 => {
                let Some(s) = pick(a) else { return };
                let id = self.sessions[s].id.clone();
                let mut rows: Vec<SimMessage> = self.sessions[s]
                    .messages
                    .iter()
                    .filter(|m| !m.deleted)
                    .cloned()
                    .collect();
                rows.sort_by_key(|m| m.created_at);
                // A page is a window: sometimes only the newest rows.
                if b % 3 == 0 {
                    let keep = usize::from(c % 4) + 1;
                    rows.drain(..rows.len().saturating_sub(keep));
                }
                let rows: Vec<Value> = rows
                    .iter()
                    .map(|m| Value::Object(self.message_json(s, m, "id")))
                    .collect();
                self.inputs.push(Input::call(
                    "applyMessagePage",
                    vec![json!(id), json!(rows)],
                ));
            }
            21..=23 if self.responds => {
                let Some(s) = pick(a) else { return };
                self.respond(s, b, c, project);
            }
            19 if c % 2 == 0 => {
                // `task.updated` without a `status_summary` key (SPEC §7: the held summary
                // stays), with the legacy action.
                let task = usize::from(a) % self.tasks.len();
                if !self.tasks[task].removed {
                    let payload = json!({
                        "id": self.tasks[task].id,
                        "task_pending_action": action_json(self.task_action(task)),
                        "updated_at": ts(self.clock),
                    });
                    self.inputs
                        .push(Input::call("applyTaskUpdated", vec![payload]));
                }
            }
            _ => {
                if c % 3 == 0 {
                    let tasks: Vec<Value> = (0..self.tasks.len())
                        .filter(|&t| !self.tasks[t].removed)
                        .map(|t| json!({"id": self.tasks[t].id, "status_summary": self.summary_json(t)}))
                        .collect();
                    self.inputs.push(Input::TaskSnapshot {
                        tasks: json!(tasks),
                    });
                } else if c % 3 == 1 {
                    let task = usize::from(a) % self.tasks.len();
                    if !self.tasks[task].removed {
                        self.snapshot_sessions(task);
                    }
                }
            }
        }
    }

    fn complete_open_turn(&mut self, s: usize) {
        let Some(index) = self.sessions[s]
            .turns
            .iter()
            .rposition(|t| t.completed_at.is_none())
        else {
            return;
        };
        let now = self.tick();
        let turn = &mut self.sessions[s].turns[index];
        turn.completed_at = Some(now);
        turn.updated_at = now;
        self.emit_turn(s, index);
    }
}

fn rule_message(m: &SimMessage) -> Message {
    Message {
        id: m.id.clone(),
        turn_id: m.turn_id.clone(),
        kind: MessageKind::parse(m.kind),
        status: RequestStatus::parse(Some(m.status)),
        pending_id: m.pending_id.clone(),
        question_total: m.total.map(f64::from),
        flags: Default::default(),
        created_at: Timestamp::parse(&ts(m.created_at)),
        updated_at: Some(Timestamp::parse(&ts(m.updated_at))),
    }
}

pub fn action_json(action: Option<PendingAction>) -> Value {
    action.map_or(Value::Null, |a| json!(a.as_str()))
}

/// Runs `actions` on a fresh backend with `tasks` tasks (1 or 2) of one session each; with
/// `remove`, the last task is deleted at the end.
pub fn generate(tasks: usize, actions: &[(u8, u8, u8, u8)], remove: bool) -> History {
    generate_with(tasks, actions, remove, true)
}

/// [`generate`], the user's answers left out when `responds` is false (the respond actions do
/// nothing).
pub fn generate_with(
    tasks: usize,
    actions: &[(u8, u8, u8, u8)],
    remove: bool,
    responds: bool,
) -> History {
    let mut sim = Sim {
        clock: 0,
        epoch: 7,
        sequence: 0,
        tasks: Vec::new(),
        sessions: Vec::new(),
        inputs: Vec::new(),
        next_id: 0,
        dead: Vec::new(),
        responds,
    };
    for t in 0..tasks.max(1) {
        sim.tasks.push(SimTask {
            id: format!("task-{}", t + 1),
            summary_revision: 0,
            summary_action: None,
            summary_updated_at: 0,
            removed: false,
        });
        sim.repair_summary(t, true);
        sim.add_session(t);
    }
    for &action in actions {
        // A backend never makes a bundle it answered "no longer active" active again (SPEC §8):
        // an action that would (a state change back to RUNNING, a delete that unpublishes a
        // reservation) is not taken.
        let before = (!sim.dead.is_empty()).then(|| sim.clone());
        sim.step(action);
        if let Some(before) = before {
            if sim.revives_dead() {
                sim = before;
            }
        }
    }
    if remove && sim.tasks.len() > 1 {
        let last = sim.tasks.len() - 1;
        sim.tasks[last].removed = true;
        let id = sim.tasks[last].id.clone();
        sim.inputs.push(Input::call("removeTask", vec![json!(id)]));
    }
    History {
        inputs: sim.inputs,
        tasks: sim.tasks.iter().map(|t| t.id.clone()).collect(),
        sessions: sim
            .sessions
            .iter()
            .map(|s| (s.id.clone(), sim.tasks[s.task].id.clone()))
            .collect(),
    }
}

/// The history recorded as a trace (docs/trace-format.md) by the native recorder: every input in
/// emission order, a snapshot begun right before it applies; `max_bytes` bounds the ring.
pub fn record(history: &History, max_bytes: usize) -> String {
    use task_projection::store::ProjectionStore;
    use task_projection::trace::{self, Recorder};
    let mut store = ProjectionStore::<Value>::new();
    let mut recorder = Recorder::new(max_bytes, &store);
    for (n, input) in history.inputs.iter().enumerate() {
        let ms = n as f64;
        let mut record = |call: &str, args: &[Value]| {
            trace::record(&mut recorder, &mut store, ms, call, args)
                .expect("a server-like input is valid")
        };
        match input {
            Input::Call { call, args } => {
                record(call, args);
            }
            Input::TaskSnapshot { tasks } => {
                let token = record("beginTaskFetch", &[]).token.expect("a token");
                record("applyTaskSnapshot", &[json!(token), tasks.clone()]);
            }
            // The user's action is the client's, not the server's data: a trace of the
            // server's inputs leaves it out (the explorer pins client actions anyway).
            Input::Respond { .. } => {}
        }
    }
    recorder.text()
}

/// A history of at least `inputs` inputs on two tasks (the actions drawn from `seed`).
pub fn long(seed: u64, inputs: usize) -> History {
    let mut state = seed | 1;
    let mut actions = Vec::new();
    loop {
        for _ in 0..64 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let b = (state >> 24).to_le_bytes();
            actions.push((b[0], b[1], b[2], b[3]));
        }
        let history = generate(2, &actions, false);
        if history.inputs.len() >= inputs {
            return history;
        }
    }
}
