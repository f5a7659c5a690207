//! Traces: a store's inputs recorded as they arrive, with the answers each one changed and why
//! (docs/trace-format.md), and their replay. Native only: the package records in JS
//! (`js/trace.js`, the opt-in subpath `task-projection/trace`, the same format, so the wasm
//! carries none of this), and
//! `tests/js/trace.test.mjs` requires the two recorders to write the same lines on every store
//! scenario.
//!
//! A [`Recorder`] is fed by the caller after each input the store accepted ([`record`]): the
//! call's name and its arguments as the store received them, each written by the schema of
//! what the decoders read of it (the schemas of `src/wire/shape.rs`, [`Node`]: ids, types,
//! statuses, turn ids, timestamps, revisions, pending ids, question totals; never message text,
//! answers or a summary's prose), then the answers of every held session and task that differ
//! from the last ones written. Lines live in a ring bounded by `maxBytes`; the oldest are dropped and counted
//! in the trace's header.
//!
//! Every line applies on its own ([`apply`]: one public API call), so a replay can deliver them
//! in recorded order and the race explorer ([`explore`]) in any other. [`parse`], [`replay`] and
//! [`explore::explore`] are what the `task-projection-replay` binary is built on; the package's
//! `replayTrace` (`task-projection/trace`) replays through the wasm store.
//!
//! Deciding nothing: the answers are the store's queries, the replay is the public API.

use std::collections::VecDeque;

use crate::error::{WireError, WireErrorKind};
use crate::hash::HashMap;
use crate::json::Json;
use crate::rules::turn::CurrentTurn;
use crate::store::{Navigation, ProjectionStore, Reason};
use crate::wire::{Kind, Path, Wire};

/// The trace format's name (the header's `format`).
pub const FORMAT: &str = "task-projection-trace";
/// The trace format's version (the header's `version`); see docs/trace-format.md.
pub const VERSION: u64 = 1;
/// The engine that recorded a trace (the header's `engine`).
pub const ENGINE: &str = env!("CARGO_PKG_VERSION");
/// `maxBytes` when the options leave it out.
pub const DEFAULT_BYTES: u64 = 1 << 20;
/// The smallest `maxBytes` (the header and the drop count fit in it).
pub const MIN_BYTES: u64 = 1024;
/// The largest `maxBytes`.
pub const MAX_BYTES: u64 = 1 << 28;
/// Room kept in `maxBytes` for the header line.
const HEADER_ROOM: usize = 256;

/// `startRecording(options)`: `{ maxBytes? }` → the bound in bytes (`js/store.js` reads the
/// options once and `js/trace.js` validates them the same way, with the same typed errors).
pub fn options<W: Wire>(options: &W) -> Result<usize, WireError> {
    let path = Path::Root("options");
    if options.is_undefined() {
        return Ok(DEFAULT_BYTES as usize);
    }
    crate::wire::object(options, &path)?;
    let value = options.get("maxBytes");
    if value.is_undefined() {
        return Ok(DEFAULT_BYTES as usize);
    }
    let field = path.key("maxBytes");
    if value.kind() != Kind::Number {
        return Err(WireError::from(WireErrorKind::InvalidType {
            field: field.to_string(),
            expected: "an integer number of bytes",
            got: value.kind().name(),
        }));
    }
    value
        .unsigned()
        .filter(|n| (MIN_BYTES..=MAX_BYTES).contains(n))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            WireError::from(WireErrorKind::InvalidValue {
                field: field.to_string(),
                problem: format!("expected an integer from {MIN_BYTES} to {MAX_BYTES}"),
            })
        })
}

// ---- what is recorded of an argument: the schemas of src/wire/shape.rs -------------------------

// The schema of an argument ([`Node`]): what the store's decoders read of it, as `js/read.js`
// walks it onto the tape (the same keys in the same order: a trace line's arguments are what the
// store received, whichever recorder wrote them).
use crate::wire::shape::{self, Node};

use Node::Leaf as L;

/// The schemas of a recordable call's arguments (its arity), or `None` for other calls.
pub fn schema(call: &str) -> Option<&'static [Node]> {
    Some(match call {
        "applySessionList" => &[L, shape::SESSIONS],
        "applyTurnList" => &[L, shape::TURNS],
        "applyMessagePage" => &[L, shape::MESSAGES],
        "applyMessageEvent" => &[L, Node::Object(&shape::MESSAGE_EVENT)],
        "applyMessageEvents" => &[L, shape::MESSAGE_EVENTS],
        "applyTurnEvent" => &[Node::Object(&shape::TURN_EVENT)],
        "applySessionEvent" => &[Node::Object(&shape::SESSION_EVENT)],
        "applyStatusSummaryEvent" => &[Node::Object(&shape::SUMMARY_EVENT)],
        "applyTaskUpdated" => &[Node::Object(&shape::TASK_INPUT)],
        "removeTask" | "removeSession" | "setActiveTask" => &[L],
        "beginTaskFetch" => &[],
        "applyTaskSnapshot" => &[L, shape::TASK_INPUTS],
        // Only `server.hello` is recorded as a frame: the others are recorded as the apply
        // call `applyFrame` routes them to.
        "applyFrame" => &[Node::Object(&shape::HELLO_FRAME)],
        "beginSelection" => &[L, Node::Object(&shape::SELECTION_OPTIONS)],
        "settleSelection" => &[L, Node::Object(&shape::SETTLE_OUTCOME)],
        "respondStart" => &[L, L, L],
        "respondReply" => &[L, Node::Object(&shape::RESPOND_REPLY)],
        _ => return None,
    })
}

// ---- JSON, as the JS recorder writes it (crate::json; numbers by `number`) ------------------

/// A number as JSON: integers exactly (below 2^64), other finite numbers with up to 17
/// fractional digits, `null` for what JSON cannot hold. (`js/trace.js` `number` is the same
/// arithmetic on the same doubles.)
fn number(out: &mut String, n: f64) {
    let a = n.abs();
    if !n.is_finite() || a >= 18_446_744_073_709_551_616.0 {
        out.push_str("null");
        return;
    }
    if n.is_sign_negative() && a != 0.0 {
        out.push('-');
    }
    let int = a.trunc();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    crate::text::push_uint(out, int as u64);
    let mut frac = a - int;
    if frac == 0.0 {
        return;
    }
    out.push('.');
    for _ in 0..17 {
        frac *= 10.0;
        let digit = frac.trunc();
        frac -= digit;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        out.push(char::from(b'0'.saturating_add(digit as u8)));
        if frac == 0.0 {
            break;
        }
    }
}

/// `v` as JSON by `node`: an object's keys of the schema in its order (absent ones left out,
/// `error` as `true`), an object or array where the schema has none as an empty one (as the
/// tape's stand-ins), `undefined` (an argument, an element) as `null`.
fn value<W: Wire>(j: &mut Json, v: &W, node: Node) {
    match (v.kind(), node) {
        (Kind::Bool, _) => j.0.push_str(if v.boolean() == Some(true) {
            "true"
        } else {
            "false"
        }),
        (Kind::Number, _) => number(&mut j.0, v.number().unwrap_or(f64::NAN)),
        (Kind::String, _) => j.text(v.string().as_ref().map_or("", AsRef::as_ref)),
        (Kind::Array, Node::Array(of)) => {
            j.0.push('[');
            for i in 0..v.len() {
                j.sep();
                value(j, &v.at(i), *of);
            }
            j.0.push(']');
        }
        (Kind::Object, Node::Object(shape) | Node::Kept(shape)) => {
            j.0.push('{');
            for &shape::Field { key, node, .. } in shape.read() {
                let field = v.get(key);
                if field.is_undefined() {
                    continue;
                }
                j.key(key);
                if key == "error" {
                    j.0.push_str("true");
                } else {
                    value(j, &field, node);
                }
            }
            j.0.push('}');
        }
        (Kind::Array, _) => j.0.push_str("[]"),
        (Kind::Object, _) => j.0.push_str("{}"),
        _ => j.0.push_str("null"),
    }
}

/// One step's line while it is written: [`Recorder::begin`], then its arguments and results,
/// then [`Recorder::finish`] (or [`Recorder::line`]).
pub struct Step {
    j: Json,
    schema: &'static [Node],
}

impl Step {
    /// The call's arguments by its schema ([`schema`]: as many as the call takes, missing ones
    /// as `null`).
    pub fn args<W: Wire>(mut self, args: &[W]) -> Self {
        self.j.open("args", '[');
        for (i, &node) in self.schema.iter().enumerate() {
            self.j.sep();
            match args.get(i) {
                Some(arg) => value(&mut self.j, arg, node),
                None => self.j.0.push_str("null"),
            }
        }
        self.j.0.push(']');
        self
    }

    /// A text result (a selection's ticket).
    pub fn text(mut self, key: &str, text: &str) -> Self {
        self.j.str(key, Some(text));
        self
    }

    /// A number result (a fetch token).
    pub fn number(mut self, key: &str, n: u64) -> Self {
        self.j.num(key, Some(n));
        self
    }

    /// A flag result (a selection's `reload`).
    pub fn flag(mut self, key: &str, flag: bool) -> Self {
        self.j.bool(key, flag);
        self
    }

    /// A settled selection's navigation, as `settleSelection` returns it.
    pub fn navigation(mut self, navigation: &Navigation) -> Self {
        self.j.open("navigation", '{');
        match navigation {
            Navigation::Session(id) => {
                self.j.str("kind", Some("session"));
                self.j.str("sessionId", Some(id));
            }
            Navigation::TaskOnly => self.j.str("kind", Some("task_only")),
            Navigation::Inert => self.j.str("kind", Some("inert")),
        }
        self.j.0.push('}');
        self
    }
}

/// The answers about a session, as a trace writes them.
fn session_answers<P: Clone>(store: &ProjectionStore<P>, id: &str) -> String {
    let mut j = Json::with_capacity(192);
    j.0.push('{');
    // An answer not known yet (SPEC §11) leaves its key out (the query answers `undefined`).
    let (action, why) = store.session_pending_action(id);
    if let Some(action) = action {
        j.action("pendingAction", action);
    }
    j.reason("pendingActionWhy", why);
    let (turn, why) = store.current_turn_id(id);
    match turn {
        // Unknown: the key is left out (`currentTurnId` answers `undefined`).
        CurrentTurn::Unknown => {}
        CurrentTurn::None => j.raw("currentTurn", "null"),
        CurrentTurn::Turn(turn) => j.str("currentTurn", Some(turn)),
    }
    j.reason("currentTurnWhy", why);
    let (bundle, why) = store.pending_clarification(id);
    match bundle {
        None => {}
        Some(None) => j.raw("clarification", "null"),
        Some(Some(bundle)) => {
            j.open("clarification", '{');
            j.str("pending_id", bundle.pending_id);
            j.open("message_ids", '[');
            for m in &bundle.message_ids {
                j.sep();
                j.text(m);
            }
            j.0.push_str("]}");
        }
    }
    j.reason("clarificationWhy", why);
    let (blocked, why) = store.has_pending_permission(id);
    if let Some(blocked) = blocked {
        j.bool("permission", blocked);
    }
    j.reason("permissionWhy", why);
    j.0.push('}');
    j.0
}

/// The answers about a task, as a trace writes them.
fn task_answers<P: Clone>(store: &ProjectionStore<P>, id: &str) -> String {
    let mut j = Json::with_capacity(160);
    j.0.push('{');
    let (action, why) = store.task_pending_action(id);
    if let Some(action) = action {
        j.action("pendingAction", action);
    }
    j.reason("pendingActionWhy", why);
    let (owner, why) = store.pending_owner(id, None);
    if let Some(owner) = owner {
        j.str("pendingOwner", owner);
    }
    j.reason("pendingOwnerWhy", why);
    let (summary, why) = store.task_status_summary(id);
    match summary.map(|held| held.and(store.task_summary_revision(id))) {
        None => {}
        Some(None) => j.raw("summary", "null"),
        Some(Some(revision)) => {
            j.open("summary", '{');
            j.num("revision", revision);
            j.0.push('}');
        }
    }
    j.reason("summaryWhy", why);
    j.0.push('}');
    j.0
}

/// Ids with their answers as written, sorted by id.
type Changed = Vec<(String, String)>;

/// The ids whose answers differ from `held`, with their answers (sorted by id, byte order:
/// code point order); `held` updated.
fn changed_answers<P: Clone, I: Iterator<Item = String>>(
    held: &mut HashMap<Box<str>, String>,
    store: &ProjectionStore<P>,
    ids: I,
    answers: fn(&ProjectionStore<P>, &str) -> String,
) -> Changed {
    let mut ids: Vec<String> = ids.chain(held.keys().map(|k| String::from(&**k))).collect();
    crate::sort::stable_sort_by(&mut ids, |a, b| a.cmp(b));
    ids.dedup();
    let mut out = Vec::new();
    for id in ids {
        let now = answers(store, &id);
        if held.get(&*id) != Some(&now) {
            held.insert(Box::from(&*id), now.clone());
            out.push((id, now));
        }
    }
    out
}

/// Writes `"key":{"id":answers,...}` when `changed` is not empty.
fn write_changed(j: &mut Json, key: &str, changed: &[(String, String)]) {
    if changed.is_empty() {
        return;
    }
    j.open(key, '{');
    for (id, answers) in changed {
        j.key(id);
        j.0.push_str(answers);
    }
    j.0.push('}');
}

/// Records a store's inputs and the answers they change, in a ring of at most `max_bytes`
/// (docs/trace-format.md).
#[derive(Debug)]
pub struct Recorder {
    max_bytes: usize,
    lines: VecDeque<String>,
    /// The bytes of `lines`, a newline each included.
    bytes: usize,
    dropped: u64,
    dropped_bytes: u64,
    steps: u64,
    last_us: u64,
    /// Whether the store held nothing when the recording started (a replay from an empty store
    /// then gives the same answers).
    fresh: bool,
    /// The store's version when the answers were last computed.
    version: u64,
    /// Whether answers are recomputed after every input, even one that moved no version (the
    /// shortcut's check: `tests/trace_replay.rs`).
    always: bool,
    sessions: HashMap<Box<str>, String>,
    tasks: HashMap<Box<str>, String>,
}

impl Recorder {
    /// Starts recording `store`: its current answers are the baseline (not written).
    pub fn new<P: Clone>(max_bytes: usize, store: &ProjectionStore<P>) -> Recorder {
        let fresh = store.session_ids().next().is_none() && store.task_ids().next().is_none();
        let mut recorder = Recorder {
            max_bytes,
            lines: VecDeque::new(),
            bytes: 0,
            dropped: 0,
            dropped_bytes: 0,
            steps: 0,
            last_us: 0,
            fresh,
            version: store.version(),
            always: false,
            sessions: HashMap::default(),
            tasks: HashMap::default(),
        };
        recorder.answers(store, true);
        recorder
    }

    /// The same recorder without the shortcut (answers are only recomputed when the store's
    /// version moved): every input recomputes every held id's answers. The lines must not
    /// change; `tests/trace_replay.rs` checks it.
    pub fn recomputing_always(mut self) -> Recorder {
        self.always = true;
        self
    }

    /// Begins the line of an input `call` the store accepted at `time_ms` (monotonic
    /// milliseconds: `performance.now()`, or a native caller's clock; a time before the last
    /// one recorded is taken as the last one). `None` for a call that is not an input.
    pub fn begin(&mut self, time_ms: f64, call: &str) -> Option<Step> {
        let schema = schema(call)?;
        self.steps = self.steps.saturating_add(1);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let us = (time_ms * 1000.0) as u64;
        self.last_us = self.last_us.max(us);
        let mut j = Json::with_capacity(256);
        j.0.push('{');
        j.num("step", Some(self.steps));
        j.num("us", Some(self.last_us));
        j.str("call", Some(call));
        Some(Step { j, schema })
    }

    /// The answers changed since the last computation: `(sessions, tasks)`.
    fn answers<P: Clone>(&mut self, store: &ProjectionStore<P>, force: bool) -> (Changed, Changed) {
        // No state change, no answer change: the version moves with every change.
        if !force && !self.always && store.version() == self.version {
            return (Vec::new(), Vec::new());
        }
        self.version = store.version();
        let sessions = changed_answers(
            &mut self.sessions,
            store,
            store.session_ids().map(String::from),
            session_answers,
        );
        let tasks = changed_answers(
            &mut self.tasks,
            store,
            store.task_ids().map(String::from),
            task_answers,
        );
        (sessions, tasks)
    }

    /// The finished line of `step` (the input's `reason`, the answers it changed), not kept.
    pub fn line<P: Clone>(
        &mut self,
        step: Step,
        store: &ProjectionStore<P>,
        reason: Option<Reason>,
    ) -> String {
        let mut j = step.j;
        if let Some(reason) = reason {
            j.reason("reason", reason);
        }
        // Selection and navigation inputs move no version: answered all the same, cheaply.
        let (sessions, tasks) = self.answers(store, false);
        j.open("answers", '{');
        write_changed(&mut j, "sessions", &sessions);
        write_changed(&mut j, "tasks", &tasks);
        j.0.push_str("}}");
        j.0
    }

    /// Finishes `step` and keeps its line, dropping the oldest lines beyond the bound.
    pub fn finish<P: Clone>(
        &mut self,
        step: Step,
        store: &ProjectionStore<P>,
        reason: Option<Reason>,
    ) {
        let line = self.line(step, store, reason);
        self.push(line);
    }

    fn push(&mut self, line: String) {
        let room = self.max_bytes.saturating_sub(HEADER_ROOM);
        let size = line.len().saturating_add(1);
        self.lines.push_back(line);
        self.bytes = self.bytes.saturating_add(size);
        while self.bytes > room {
            let Some(old) = self.lines.pop_front() else {
                break;
            };
            let size = old.len().saturating_add(1);
            self.bytes = self.bytes.saturating_sub(size);
            self.dropped = self.dropped.saturating_add(1);
            self.dropped_bytes = self.dropped_bytes.saturating_add(size as u64);
        }
    }

    /// The trace: the header line, then the lines kept, each ending in a newline.
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(self.bytes.saturating_add(HEADER_ROOM));
        let mut j = Json::with_capacity(HEADER_ROOM);
        j.0.push('{');
        j.str("format", Some(FORMAT));
        j.num("version", Some(VERSION));
        j.str("engine", Some(ENGINE));
        j.num("maxBytes", u64::try_from(self.max_bytes).ok());
        j.bool("fresh", self.fresh);
        j.num("steps", Some(self.steps));
        j.num("dropped", Some(self.dropped));
        j.num("droppedBytes", Some(self.dropped_bytes));
        j.0.push('}');
        out.push_str(&j.0);
        out.push('\n');
        for line in &self.lines {
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

pub mod explore;
mod native;
pub use native::*;
