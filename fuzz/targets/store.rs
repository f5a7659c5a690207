//! Fuzz target `store`: arbitrary bytes → a sequence of `ProjectionStore` inputs and queries
//! through `wire::store_api` over `serde_json` values (the calls the JS class makes).
//!
//! Two input forms:
//! * JSON (`[` or `{` first and the whole input parses): a store-scenario case
//!   (`{"steps": [...]}`, tests/fixtures/store_scenarios.json) or its steps array; `save` and
//!   `{"$saved": name}` work as in the scenario runner. The seed corpus is these.
//! * anything else: bytes decoded by hand into calls over a small alphabet of ids, turns,
//!   epochs, sequences and timestamps (so rows collide, revisions tie and clocks are equal),
//!   with malformed values mixed in (wrong types, huge and fractional numbers, empty strings,
//!   nesting).
//!
//! Checked after every call (at most `MAX_CALLS` per input): nothing panics; a rejected call has
//! a well-formed error (see `common::check_error`) and leaves `digest()` and `version()`
//! unchanged; and the step invariants of docs/convergence.md that need no backend model, about
//! the ids the call may have affected (the sessions and tasks it names, the tasks those
//! sessions were said to belong to, the sessions those tasks listed, the ids `take_changes()`
//! lists and the ids whose version moved; every queried id after `removeTask`,
//! `applyTaskSnapshot` and `dispose`), and about every queried id after the last call:
//! * `hiddenMessageIds(s)` is `pendingClarification(s).message_ids`; a bundle implies the
//!   `clarification` action and a current turn; a known state that is not input-capable has no
//!   current turn and no bundle; `pendingOwner(t)` of a pending task is a listed,
//!   input-capable session whose projection is the task's action (and `pendingOwner(t, s)` for
//!   every preferred `s` does not panic: once per task version, and at the end);
//! * a message deleted by a `deleted` event is never hidden as a live question again unless an
//!   add/update event revived it by `rules::order::revives` (tombstones kept by
//!   `stronger_tombstone`), and a page never revives it;
//! * a removed task stays unknown, and so does every session it listed and every session an
//!   input answered `task_removed` for;
//! * an answer changes only with its version (`session_version`, `discovery_version`,
//!   `task_version`) and its id in `take_changes()` (not checked for a task one of whose
//!   sessions the inputs also gave to another task: outside the backend's premise, see
//!   `Harness::moved`; nor, with `FUZZ_KNOWN_BUGS=1`, where a listed (now fixed) bug changes it:
//!   see `known_bugs`);
//! * after each accepted call that takes a status summary, and at the end, the store's snapshot
//!   hydrates into a store with the same digest, snapshot and answers (issue 41: whatever the
//!   store accepted it can hand on; summaries carry fields no rule reads, some beyond the
//!   bounds of `wire::held`), and merged back into the store (`merge`, SPEC §12) it changes no
//!   answer;
//! * at the end, when a call was accepted, replaying the accepted calls into a fresh store
//!   without queries in between gives the same digest and answers (the cached current turn is
//!   invisible).
//!
//! Speed (issue 11 item 7 wants 10^7 executions per run): an answer that changes without any of
//! the signs above is caught when a later call names the id, or at the end, unless a legitimate
//! change of the id comes first; the digest before a call is the one read after the last change;
//! held answers are compared without copying. `fuzz/examples/timing.rs` times `run` natively.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::{json, Map, Value};
use task_projection::rules::model::{PendingAction, Revision, SessionState};
use task_projection::rules::order::{revives, stronger_tombstone, Revival};
use task_projection::rules::turn::CurrentTurn;
use task_projection::store::{MessageEventKind, Navigation, ProjectionStore, Reason};
use task_projection::wire::store_api::{self as api, CallError, Outcome};
use task_projection::wire::{events, Json, Path};
use task_projection::WireError;

#[path = "common.rs"]
mod common;

use common::{check_error, without_undefined, Bytes};

type Store = ProjectionStore<Value>;

/// At most this many calls per input (keeps one execution fast: every store bug found so far
/// reduces to at most 7 calls; 64 calls with every id checked after each ran at ~250 exec/s
/// under libFuzzer, 16 as now at ~3,500).
const MAX_CALLS: usize = 16;

pub fn run(data: &[u8]) {
    run_calls(calls_of(data));
}

fn calls_of(data: &[u8]) -> Vec<Call> {
    let mut calls = match data.first() {
        Some(b'[' | b'{') => json_calls(data),
        _ => None,
    }
    .unwrap_or_else(|| binary_calls(data));
    calls.truncate(MAX_CALLS);
    calls
}

fn run_calls(calls: Vec<Call>) {
    let mut harness = Harness::default();
    for call in calls {
        harness.step(call);
    }
    harness.finish();
}

/// Reduces a failing input to the fewest calls that still fail the same way (the panic message
/// with its ids and numbers blanked), in the JSON form: readable, and a store-scenario case once
/// its queries get expectations. `None` when the input passes. (`tests/fuzz_corpus.rs`
/// `minimize_store_regressions` runs it.)
#[allow(dead_code)]
pub fn minimize(data: &[u8]) -> Option<(String, Vec<u8>)> {
    let fails = |calls: &[Call]| -> Option<String> {
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let calls = calls.to_vec();
        let result = std::panic::catch_unwind(move || run_calls(calls));
        std::panic::set_hook(hook);
        let panic = result.err()?;
        let text = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        Some(text)
    };
    let signature = |text: &str| -> String {
        let blanked: String = text
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .map(|word| {
                let id_like = word.len() <= 3
                    && word.chars().skip(1).all(|c| c.is_ascii_digit())
                    && word.len() > 1;
                if id_like || word.chars().all(|c| c.is_ascii_digit()) {
                    "#"
                } else {
                    word
                }
            })
            .collect::<Vec<_>>()
            .join(" ");
        blanked.chars().take(80).collect()
    };
    let mut calls: Vec<Call> = calls_of(data);
    let message = fails(&calls)?;
    let wanted = signature(&message);
    let mut message = message;
    let mut i = 0;
    while i < calls.len() {
        let mut fewer = calls.clone();
        fewer.remove(i);
        match fails(&fewer) {
            Some(m) if signature(&m) == wanted => {
                calls = fewer;
                message = m;
            }
            _ => i += 1,
        }
    }
    let steps: Vec<Value> = calls
        .iter()
        .map(|c| {
            let args: Vec<Value> = c
                .args
                .iter()
                .map(|a| a.clone().unwrap_or_else(|| json!({"$undefined": true})))
                .collect();
            json!({"call": c.name, "args": args})
        })
        .collect();
    let text = serde_json::to_vec_pretty(&Value::Array(steps)).unwrap_or_default();
    Some((message, text))
}

/// One call of the store API, with its arguments (`None`: absent).
#[derive(Clone, Debug)]
struct Call {
    name: String,
    args: Vec<Option<Value>>,
    /// JSON form: keep the result under this name (`beginTaskFetch`, `beginSelection`).
    save: Option<String>,
    /// JSON form: the arguments may hold `{"$saved": name}` and `{"$undefined": true}` (the
    /// binary form's never do).
    markers: bool,
}

impl Call {
    fn new(name: &str, args: Vec<Option<Value>>) -> Call {
        Call {
            name: name.to_owned(),
            args,
            save: None,
            markers: false,
        }
    }
}

// ---- JSON form ---------------------------------------------------------------------------------

fn json_calls(data: &[u8]) -> Option<Vec<Call>> {
    let value: Value = serde_json::from_slice(data).ok()?;
    let steps = match value {
        Value::Array(steps) => steps,
        Value::Object(mut case) => match case.remove("steps")? {
            Value::Array(steps) => steps,
            _ => return None,
        },
        _ => return None,
    };
    Some(
        steps
            .into_iter()
            .take(MAX_CALLS)
            .map(|mut step| Call {
                name: step["call"].as_str().unwrap_or_default().to_owned(),
                save: step["save"].as_str().map(str::to_owned),
                markers: true,
                args: match step.get_mut("args").map(Value::take) {
                    Some(Value::Array(args)) => args.into_iter().map(Some).collect(),
                    _ => Vec::new(),
                },
            })
            .collect(),
    )
}

/// Does the value hold a `{"$saved": name}` or `{"$undefined": true}` marker (the JSON form's)?
fn has_marker(value: &Value) -> bool {
    match value {
        Value::Object(map) => {
            map.contains_key("$saved")
                || map.contains_key("$undefined")
                || map.values().any(has_marker)
        }
        Value::Array(items) => items.iter().any(has_marker),
        _ => false,
    }
}

/// `{"$saved": name}` anywhere → the saved value; then `{"$undefined": true}` removed.
fn resolve(value: &Value, saved: &HashMap<String, Value>) -> Option<Value> {
    fn go(value: &Value, saved: &HashMap<String, Value>) -> Value {
        match value {
            Value::Object(map) if map.len() == 1 && map.contains_key("$saved") => map["$saved"]
                .as_str()
                .and_then(|name| saved.get(name))
                .cloned()
                .unwrap_or(Value::Null),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| (k.clone(), go(v, saved))).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| go(v, saved)).collect()),
            other => other.clone(),
        }
    }
    without_undefined(&go(value, saved))
}

// ---- binary form -------------------------------------------------------------------------------

const TASKS: [&str; 3] = ["t0", "t1", "t2"];
const SESSIONS: [&str; 4] = ["s0", "s1", "s2", "s3"];
const TURNS: [&str; 4] = ["u0", "u1", "u2", "u3"];
const MESSAGES: [&str; 6] = ["m0", "m1", "m2", "m3", "m4", "m5"];
const PENDING: [&str; 3] = ["p0", "p1", "p2"];
/// Value-form timestamps in SPEC order with an equal pair in two spellings, and raw text.
const TIMES: [&str; 9] = [
    "2026-11-29T12:00:00Z",
    "2026-11-29T12:00:00.000000001Z",
    "2026-11-29T12:00:00.5Z",
    "2026-11-29T12:00:01Z",
    "2026-11-29T12:00:01.000000000Z",
    "2026-11-29T12:00:02.999999999Z",
    "2026-11-29 12:00:03",
    "zzz",
    "",
];
const EPOCHS: [&str; 7] = ["1", "2", "10", "01", "", "x1", "18446744073709551617999"];
const STATES: [&str; 8] = [
    "RUNNING",
    "WAITING_FOR_INPUT",
    "RUNNING",
    "IDLE",
    "COMPLETED",
    "CREATED",
    "",
    "bogus",
];
const KINDS: [&str; 6] = [
    "clarification_request",
    "clarification_request",
    "clarification_request",
    "permission_request",
    "permission_request",
    "message",
];
const STATUSES: [&str; 8] = [
    "pending",
    "pending",
    "",
    "answered",
    "rejected",
    "expired",
    "approved",
    "cancelled",
];
const KEYS: [&str; 16] = [
    "id",
    "session_id",
    "task_id",
    "message_id",
    "turn_id",
    "metadata",
    "status",
    "pending_action",
    "pending_action_revision",
    "epoch",
    "sequence",
    "revision",
    "status_summary",
    "state",
    "created_at",
    "sessions",
];

/// Builds argument values from bytes: mostly well-formed, sometimes not.
struct Gen<'a> {
    b: Bytes<'a>,
}

fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(value) = value {
        map.insert(key.to_owned(), value);
    }
}

impl Gen<'_> {
    fn str_of(&mut self, pool: &[&str]) -> Value {
        Value::from(self.b.pick(pool))
    }

    /// An id argument or field: one of `pool`, rarely absent, `null` or of a wrong type.
    fn id(&mut self, pool: &[&str]) -> Option<Value> {
        let k = self.b.byte();
        match k {
            0..=243 => Some(Value::from(pool[usize::from(k) % pool.len()])),
            244 | 245 => None,
            246 => Some(Value::Null),
            247 => Some(Value::from("")),
            248 => Some(json!(7)),
            _ => Some(self.wild(2)),
        }
    }

    fn optional_id(&mut self, pool: &[&str]) -> Option<Value> {
        if self.b.one_in(4) {
            None
        } else {
            self.id(pool)
        }
    }

    fn time(&mut self) -> Option<Value> {
        let k = self.b.below(TIMES.len() + 3);
        match TIMES.get(k) {
            Some(t) => Some(Value::from(*t)),
            None if k == TIMES.len() => None,
            None if k == TIMES.len() + 1 => Some(Value::Null),
            None => Some(self.wild(1)),
        }
    }

    fn flag(&mut self) -> Option<Value> {
        let flags = [
            None,
            None,
            None,
            Some(json!(true)),
            Some(json!(false)),
            Some(json!(1)),
            Some(json!("1")),
            Some(json!("true")),
            Some(json!("yes")),
            Some(json!(0)),
            Some(Value::Null),
        ];
        self.b.pick(&flags)
    }

    fn sequence(&mut self) -> Value {
        let k = self.b.below(12);
        match k {
            0..=3 => json!(k),
            4 => json!(9_007_199_254_740_993_u64),
            5 => json!(u64::MAX),
            6 => json!(-1),
            7 => json!(1.5),
            8 => json!("2"),
            9 => json!(1e300),
            10 => json!(-0.0),
            _ => Value::Null,
        }
    }

    fn revision(&mut self) -> Option<Value> {
        match self.b.below(10) {
            0 => None,
            1 => Some(Value::Null),
            2..=8 => {
                let epoch = self.b.pick(&EPOCHS);
                Some(json!({"epoch": epoch, "sequence": self.sequence()}))
            }
            _ => Some(self.wild(2)),
        }
    }

    fn action(&mut self) -> Option<Value> {
        match self.b.below(9) {
            0..=2 => Some(json!("clarification")),
            3 => Some(json!("permission")),
            4 | 5 => Some(Value::Null),
            6 | 7 => None,
            _ => Some(self.wild(1)),
        }
    }

    /// Both projection keys, or (mostly together) neither.
    fn projection(&mut self, map: &mut Map<String, Value>) {
        match self.b.below(6) {
            0 | 1 => {}
            2 => put(map, "pending_action", self.action()),
            3 => put(map, "pending_action_revision", self.revision()),
            _ => {
                put(map, "pending_action", self.action());
                put(map, "pending_action_revision", self.revision());
            }
        }
    }

    fn metadata(&mut self) -> Option<Value> {
        match self.b.below(12) {
            0 => None,
            1 => Some(self.wild(2)),
            _ => {
                let mut m = Map::new();
                if !self.b.one_in(6) {
                    put(&mut m, "pending_id", self.optional_id(&PENDING));
                }
                if !self.b.one_in(5) {
                    let status = if self.b.one_in(12) {
                        self.wild(1)
                    } else {
                        self.str_of(&STATUSES)
                    };
                    m.insert("status".into(), status);
                }
                let totals = [
                    None,
                    None,
                    Some(json!(1)),
                    Some(json!(2)),
                    Some(json!(3)),
                    Some(json!(0)),
                    Some(json!(-1)),
                    Some(json!(1.5)),
                    Some(json!("2")),
                    Some(json!(1e300)),
                    Some(Value::Null),
                ];
                put(&mut m, "question_total", self.b.pick(&totals));
                put(&mut m, "agent_disconnected", self.flag());
                Some(Value::Object(m))
            }
        }
    }

    /// A message row; `event`: spelled as a WebSocket payload (`message_id`, projection keys).
    fn message(&mut self, event: bool) -> Value {
        if self.b.one_in(32) {
            return self.wild(3);
        }
        let mut m = Map::new();
        let id_key = if event && !self.b.one_in(8) {
            "message_id"
        } else {
            "id"
        };
        put(&mut m, id_key, self.id(&MESSAGES));
        if event {
            put(&mut m, "session_id", self.id(&SESSIONS));
            put(&mut m, "task_id", self.optional_id(&TASKS));
        }
        put(&mut m, "turn_id", self.optional_id(&TURNS));
        let kind = if self.b.one_in(16) {
            self.wild(1)
        } else {
            self.str_of(&KINDS)
        };
        m.insert("type".into(), kind);
        put(&mut m, "metadata", self.metadata());
        put(&mut m, "created_at", self.time());
        put(&mut m, "updated_at", self.time());
        if event {
            self.projection(&mut m);
        }
        Value::Object(m)
    }

    fn turn(&mut self, event: bool) -> Value {
        if self.b.one_in(32) {
            return self.wild(3);
        }
        let mut t = Map::new();
        put(&mut t, "id", self.id(&TURNS));
        if event {
            put(&mut t, "session_id", self.id(&SESSIONS));
            put(&mut t, "task_id", self.optional_id(&TASKS));
        }
        put(&mut t, "started_at", self.time());
        put(&mut t, "created_at", self.time());
        put(&mut t, "updated_at", self.time());
        if !self.b.one_in(3) {
            put(&mut t, "completed_at", self.time());
        }
        if !self.b.one_in(3) {
            let mut meta = Map::new();
            put(&mut meta, "lifecycle_only", self.flag());
            put(&mut meta, "prompt_dispatch_pending", self.flag());
            put(&mut meta, "prompt_dispatch_attempted", self.flag());
            t.insert("metadata".into(), Value::Object(meta));
        }
        Value::Object(t)
    }

    fn session(&mut self, event: bool) -> Value {
        if self.b.one_in(32) {
            return self.wild(3);
        }
        let mut s = Map::new();
        let id_key = if event && self.b.one_in(4) {
            "session_id"
        } else {
            "id"
        };
        put(&mut s, id_key, self.id(&SESSIONS));
        put(&mut s, "task_id", self.optional_id(&TASKS));
        let state = match self.b.below(12) {
            10 => None,
            11 => Some(self.wild(1)),
            _ => Some(self.str_of(&STATES)),
        };
        put(&mut s, "state", state);
        put(&mut s, "is_primary", self.flag());
        put(&mut s, "updated_at", self.time());
        self.projection(&mut s);
        Value::Object(s)
    }

    fn summary(&mut self) -> Option<Value> {
        match self.b.below(10) {
            0 => None,
            1 => Some(Value::Null),
            2 => Some(self.wild(2)),
            _ => {
                let mut s = Map::new();
                let revisions = [
                    Some(json!(0)),
                    Some(json!(1)),
                    Some(json!(2)),
                    Some(json!(3)),
                    Some(json!(5)),
                    None,
                    Some(json!(-1)),
                    Some(json!(1.5)),
                    Some(json!("3")),
                    Some(json!(u64::MAX)),
                ];
                put(&mut s, "revision", self.b.pick(&revisions));
                put(&mut s, "pending_action", self.action());
                put(&mut s, "updated_at", self.time());
                s.insert("queued_prompt_count".into(), json!(self.b.byte()));
                if self.b.one_in(4) {
                    // A field no rule reads, held as is: around the bounds of
                    // `wire::held` (32 levels, 10,000 values) or wild.
                    let extra = match self.b.below(4) {
                        0 => {
                            let mut v = self.wild(0);
                            for _ in 0..self.b.below(40) {
                                v = json!({ "next": v });
                            }
                            v
                        }
                        1 if self.b.one_in(8) => {
                            Value::Array(vec![json!(0); 9_980 + self.b.below(40)])
                        }
                        _ => self.wild(3),
                    };
                    s.insert("git".into(), extra);
                }
                Some(Value::Object(s))
            }
        }
    }

    fn task(&mut self) -> Value {
        if self.b.one_in(32) {
            return self.wild(3);
        }
        let mut t = Map::new();
        put(&mut t, "id", self.id(&TASKS));
        put(&mut t, "status_summary", self.summary());
        put(&mut t, "status_summary_invalidated", self.flag());
        if !self.b.one_in(3) {
            put(&mut t, "task_pending_action", self.action());
        }
        Value::Object(t)
    }

    fn list(&mut self, max: usize, mut item: impl FnMut(&mut Self) -> Value) -> Value {
        let n = self.b.below(max.saturating_add(1));
        Value::Array((0..n).map(|_| item(self)).collect())
    }

    /// A malformed value: any JSON type, extreme numbers, long and odd strings, nesting.
    fn wild(&mut self, depth: u8) -> Value {
        let k = self.b.below(if depth == 0 { 12 } else { 16 });
        match k {
            0 => Value::Null,
            1 => json!(true),
            2 => json!(0),
            3 => json!(-0.0),
            4 => json!(1.797_693_134_862_315_7e308),
            5 => json!(5e-324),
            6 => json!(18_446_744_073_709_551_616.0_f64),
            7 => json!(-1),
            8 => json!(""),
            9 => Value::from("é".repeat(usize::from(self.b.byte()))),
            10 => Value::from("\u{0}\u{1F600}\u{FFFD}"),
            11 => self.str_of(&SESSIONS),
            12 => {
                let n = self.b.below(4);
                Value::Array((0..n).map(|_| self.wild(depth - 1)).collect())
            }
            13 | 14 => {
                let n = self.b.below(4);
                let mut map = Map::new();
                for _ in 0..n {
                    let key = self.b.pick(&KEYS);
                    let value = self.wild(depth - 1);
                    map.insert(key.to_owned(), value);
                }
                Value::Object(map)
            }
            _ => {
                // Deep nesting (well below serde_json's recursion limit).
                let mut v = self.wild(0);
                for _ in 0..self.b.below(100) {
                    v = Value::Array(vec![v]);
                }
                v
            }
        }
    }
}

/// The user's answer (SPEC §13): `respondStart(session, pending)` or `respondReply(attempt,
/// reply)`, the reply one the reference server or client could send (statuses, `claimed`,
/// `success`, `outcome`, a position) or a malformed one.
fn respond_call(g: &mut Gen<'_>) -> (&'static str, Vec<Option<Value>>) {
    if g.b.one_in(2) {
        // A bundle's, or (one in four) the blocked permission's.
        let kind = g.b.one_in(4).then(|| json!("permission"));
        return ("respondStart", vec![g.id(&SESSIONS), g.id(&PENDING), kind]);
    }
    let attempt = match g.b.below(8) {
        7 => Some(g.wild(1)),
        n => Some(json!({"$attempt": n % 3})),
    };
    let reply = match g.b.below(8) {
        0 => json!({"error": g.b.pick(&["network", "timeout", "dns"])}),
        1 => g.wild(2),
        2 => json!({"status": g.b.pick(&[200u32, 204, 409, 503, 429, 404, 500, 302, 0, 65_536])}),
        _ => {
            let mut body = Map::new();
            for key in ["success", "claimed"] {
                match g.b.below(4) {
                    0 => {}
                    1 => {
                        body.insert(key.into(), g.wild(1));
                    }
                    n => {
                        body.insert(key.into(), json!(n == 2));
                    }
                }
            }
            if !g.b.one_in(3) {
                let outcome = g.b.pick(&[
                    "success",
                    "conflict",
                    "retryable_error",
                    "non_retryable_error",
                    "x",
                ]);
                body.insert("outcome".into(), json!(outcome));
            }
            if !g.b.one_in(3) {
                let mut session = Map::new();
                if let Some(revision) = g.revision() {
                    session.insert("pending_action_revision".into(), revision);
                }
                body.insert("session".into(), Value::Object(session));
            }
            let status = g.b.pick(&[200u32, 200, 200, 409, 503, 404, 500]);
            json!({"status": status, "body": body})
        }
    };
    ("respondReply", vec![attempt, Some(reply)])
}

/// The workspace inbox (SPEC §14): a page (rows over the ids, duplicated, truncated, placed or
/// not, malformed now and then), the boot seed, a failed read, the answer.
fn inbox_call(g: &mut Gen<'_>) -> (&'static str, Vec<Option<Value>>) {
    let workspace = if g.b.one_in(8) {
        Some(g.wild(1))
    } else {
        Some(json!("w0"))
    };
    let at = |g: &mut Gen<'_>| match g.b.below(4) {
        0 => None,
        1 => Some(g.wild(1)),
        _ => Some(json!({"stream": "st", "offset": g.b.below(12)})),
    };
    match g.b.below(6) {
        0 => {
            let seed =
                json!({"workspaceId": "w0", "count": g.b.below(5), "hasMore": g.b.one_in(2)});
            ("applyInboxSeed", vec![Some(seed)])
        }
        1 => ("inboxReadFailed", vec![workspace, at(g)]),
        2 => ("inbox", vec![workspace, g.time()]),
        _ => {
            let mut rows = Vec::new();
            for _ in 0..g.b.below(4) {
                let mut row = Map::new();
                for (key, value) in [
                    ("pending_id", g.id(&PENDING)),
                    ("session_id", g.id(&SESSIONS)),
                    ("task_id", g.id(&TASKS)),
                    ("created_at", g.time()),
                ] {
                    if let Some(value) = value {
                        row.insert(key.into(), value);
                    }
                }
                if g.b.one_in(4) {
                    row.insert("messages".into(), g.wild(2));
                }
                rows.push(Value::Object(row));
            }
            let mut page = json!({"bundles": rows, "hidden_count": g.b.below(3)});
            if !g.b.one_in(3) {
                page["count"] = json!(rows_len(&page));
            }
            if g.b.one_in(3) {
                page["next_cursor"] = json!("c");
            }
            if g.b.one_in(4) {
                page["next_snooze_expiry"] = g.time().unwrap_or(Value::Null);
            }
            if !g.b.one_in(3) {
                page["stream"] = json!("st");
                page["offset"] = json!(g.b.below(12));
            }
            if g.b.one_in(10) {
                page = g.wild(2);
            }
            ("applyInboxPage", vec![workspace, Some(page), at(g)])
        }
    }
}

fn rows_len(page: &Value) -> usize {
    page["bundles"].as_array().map_or(0, Vec::len)
}

/// The calls the bytes spell: one op byte, then its arguments; now and then one argument is
/// replaced by a malformed value.
fn binary_calls(data: &[u8]) -> Vec<Call> {
    let mut g = Gen {
        b: Bytes::new(data),
    };
    let mut calls = Vec::new();
    while !g.b.is_empty() && calls.len() < MAX_CALLS {
        let op = g.b.byte();
        let corrupt = g.b.byte();
        let some = Some;
        let (name, mut args): (&str, Vec<Option<Value>>) = match op % 16 {
            0 | 1 => {
                let kind = [
                    "added", "updated", "deleted", "added", "updated", "deleted", "x",
                ];
                let kind = g.b.pick(&kind);
                if op % 16 == 0 {
                    (
                        "applyMessageEvent",
                        vec![some(json!(kind)), some(g.message(true))],
                    )
                } else {
                    let payloads = g.list(3, |g| g.message(true));
                    (
                        "applyMessageEvents",
                        vec![some(json!(kind)), some(payloads)],
                    )
                }
            }
            2 => {
                let page = g.list(4, |g| g.message(false));
                ("applyMessagePage", vec![g.id(&SESSIONS), some(page)])
            }
            3 => {
                let list = g.list(3, |g| g.session(false));
                ("applySessionList", vec![g.id(&TASKS), some(list)])
            }
            4 => {
                let list = g.list(3, |g| g.turn(false));
                ("applyTurnList", vec![g.id(&SESSIONS), some(list)])
            }
            5 => ("applyTurnEvent", vec![some(g.turn(true))]),
            6 => ("applySessionEvent", vec![some(g.session(true))]),
            7 => {
                let mut p = Map::new();
                put(&mut p, "task_id", g.id(&TASKS));
                put(&mut p, "status_summary", g.summary());
                ("applyStatusSummaryEvent", vec![some(Value::Object(p))])
            }
            8 => ("applyTaskUpdated", vec![some(g.task())]),
            9 => ("beginTaskFetch", vec![]),
            10 => {
                // The token: the n-th begun one (resolved by the harness), or a bogus value.
                let token = match g.b.below(8) {
                    6 => some(json!(987_654)),
                    7 => some(g.wild(1)),
                    n => some(json!({"$token": n})),
                };
                let tasks = g.list(3, |g| g.task());
                ("applyTaskSnapshot", vec![token, some(tasks)])
            }
            11 if g.b.one_in(2) => ("removeSession", vec![g.id(&SESSIONS)]),
            11 => ("removeTask", vec![g.id(&TASKS)]),
            12 => {
                let options = match g.b.below(4) {
                    0 => None,
                    1 => some(g.wild(2)),
                    _ => {
                        let mut o = Map::new();
                        put(&mut o, "preferredSessionId", g.optional_id(&SESSIONS));
                        some(Value::Object(o))
                    }
                };
                ("beginSelection", vec![g.id(&TASKS), options])
            }
            13 => {
                let ticket = match g.b.below(8) {
                    6 => some(json!("ticket-none")),
                    7 => some(g.wild(1)),
                    n => some(json!({"$ticket": n})),
                };
                let outcome = match g.b.below(8) {
                    0 => json!({"error": "load failed"}),
                    1 => json!({"aborted": true}),
                    2 => json!({"timedOut": true}),
                    3 => g.wild(2),
                    4 => json!({}),
                    _ => {
                        // (Not `json!`: it would copy the list through `to_value`.)
                        let mut o = Map::new();
                        o.insert("sessions".into(), g.list(3, |g| g.session(false)));
                        Value::Object(o)
                    }
                };
                ("settleSelection", vec![ticket, some(outcome)])
            }
            14 => {
                let task = if g.b.one_in(4) {
                    some(Value::Null)
                } else {
                    g.id(&TASKS)
                };
                ("setActiveTask", vec![task])
            }
            15 if g.b.one_in(3) => respond_call(&mut g),
            15 if g.b.one_in(2) => inbox_call(&mut g),
            _ => {
                let queries = [
                    "sessionPendingAction",
                    "currentTurnId",
                    "pendingClarification",
                    "hasPendingPermission",
                    "taskPendingAction",
                    "pendingOwner",
                ];
                let query = g.b.pick(&queries);
                let pool: &[&str] = if query.starts_with("task") || query == "pendingOwner" {
                    &TASKS
                } else {
                    &SESSIONS
                };
                (query, vec![g.id(pool), g.optional_id(&SESSIONS)])
            }
        };
        if corrupt % 16 == 0 && !args.is_empty() {
            let at = usize::from(corrupt / 16) % args.len();
            args[at] = if corrupt & 0x80 == 0 {
                Some(g.wild(3))
            } else {
                None
            };
        }
        calls.push(Call::new(name, args));
    }
    calls
}

// ---- the harness -------------------------------------------------------------------------------

/// Every answer about one session, as values (reasons are not compared): `S = &str` as the
/// store gives them (compared with the held ones without copying), `String` held.
#[derive(Clone, Debug, PartialEq)]
struct SessionAnswers<S = String> {
    turn: CurrentTurn<S>,
    /// The answers below, flattened: an unknown one (SPEC §11) as clean, with its `known` flag.
    action: Option<PendingAction>,
    action_known: bool,
    bundle: Option<(Option<S>, Vec<S>)>,
    permission: bool,
    /// The discovery answers (turn, bundle) and the permission are known.
    rows_known: (bool, bool),
    state: Option<SessionState>,
}

/// Every answer about one task (`V = &Value`, `S = &str` as read; owned as held).
#[derive(Clone, Debug, PartialEq)]
struct TaskAnswers<V = Value, S = String> {
    /// Flattened as in [`SessionAnswers`]; `known`: the action (and summary), the owner.
    action: Option<PendingAction>,
    summary: Option<V>,
    owner: Option<S>,
    known: (bool, bool),
}

fn session_answers<'s>(store: &'s Store, s: &str) -> SessionAnswers<&'s str> {
    let action = store.session_pending_action(s).0;
    let bundle = store.pending_clarification(s).0;
    let permission = store.has_pending_permission(s).0;
    SessionAnswers {
        turn: store.current_turn_id(s).0,
        action: action.flatten(),
        action_known: action.is_some(),
        rows_known: (bundle.is_some(), permission.is_some()),
        bundle: bundle.flatten().map(|b| (b.pending_id, b.message_ids)),
        permission: permission.unwrap_or(false),
        state: store.session_state(s),
    }
}

fn task_answers<'s>(store: &'s Store, t: &str) -> TaskAnswers<&'s Value, &'s str> {
    let action = store.task_pending_action(t).0;
    let summary = store.task_status_summary(t).0;
    let owner = store.pending_owner(t, None).0;
    assert_eq!(
        action.is_some(),
        summary.is_some(),
        "action and summary know alike"
    );
    TaskAnswers {
        action: action.flatten(),
        summary: summary.flatten(),
        owner: owner.flatten(),
        known: (action.is_some(), owner.is_some()),
    }
}

impl SessionAnswers<&str> {
    fn owned(&self) -> SessionAnswers {
        SessionAnswers {
            turn: self.turn.map(str::to_owned),
            action: self.action,
            action_known: self.action_known,
            rows_known: self.rows_known,
            bundle: self.bundle.as_ref().map(|(pending, ids)| {
                (
                    pending.map(str::to_owned),
                    ids.iter().map(|m| (*m).to_owned()).collect(),
                )
            }),
            permission: self.permission,
            state: self.state,
        }
    }
}

fn same_turn(held: &CurrentTurn<String>, read: CurrentTurn<&str>) -> bool {
    match (held, read) {
        (CurrentTurn::Turn(a), CurrentTurn::Turn(b)) => a == b,
        (CurrentTurn::Unknown, CurrentTurn::Unknown) | (CurrentTurn::None, CurrentTurn::None) => {
            true
        }
        _ => false,
    }
}

type HeldBundle = Option<(Option<String>, Vec<String>)>;

fn same_bundle(held: &HeldBundle, read: &Option<(Option<&str>, Vec<&str>)>) -> bool {
    match (held, read) {
        (Some((p, ids)), Some((q, read_ids))) => {
            p.as_deref() == *q
                && ids.len() == read_ids.len()
                && ids.iter().zip(read_ids).all(|(a, b)| a == b)
        }
        (None, None) => true,
        _ => false,
    }
}

impl PartialEq<SessionAnswers<&str>> for SessionAnswers {
    fn eq(&self, read: &SessionAnswers<&str>) -> bool {
        same_turn(&self.turn, read.turn)
            && same_bundle(&self.bundle, &read.bundle)
            && self.action == read.action
            && self.action_known == read.action_known
            && self.permission == read.permission
            && self.rows_known == read.rows_known
            && self.state == read.state
    }
}

impl TaskAnswers<&Value, &str> {
    fn owned(&self) -> TaskAnswers {
        TaskAnswers {
            action: self.action,
            summary: self.summary.cloned(),
            owner: self.owner.map(str::to_owned),
            known: self.known,
        }
    }
}

impl PartialEq<TaskAnswers<&Value, &str>> for TaskAnswers {
    fn eq(&self, read: &TaskAnswers<&Value, &str>) -> bool {
        self.action == read.action
            && self.summary.as_ref() == read.summary
            && self.owner.as_deref() == read.owner
            && self.known == read.known
    }
}

#[derive(Default)]
struct Harness {
    store: Store,
    /// `store.digest()` while the store is unchanged since it was read (`None`: read it again).
    digest: Option<u64>,
    /// Fetch tokens begun and not yet used, oldest first.
    tokens: Vec<u64>,
    tickets: Vec<String>,
    /// The attempts respondStart returned, oldest first (SPEC §13).
    attempts: Vec<u64>,
    ticket_seq: u32,
    saved: HashMap<String, Value>,
    /// The ids the calls named (at most `LIMIT` each), and with the alphabet the ids queried.
    sessions: BTreeSet<String>,
    tasks: BTreeSet<String>,
    query_sessions: Vec<String>,
    query_tasks: Vec<String>,
    /// Session → message deleted by an event and not revived since → the tombstone's revision.
    deleted: HashMap<String, HashMap<String, Option<Revision>>>,
    removed_tasks: HashSet<String>,
    /// Sessions an accepted list of the task named.
    members: HashMap<String, HashSet<String>>,
    /// Sessions that must stay unknown.
    gone: HashSet<String>,
    /// The tasks each session was said to belong to (lists and tagged inputs).
    claims: HashMap<String, HashSet<String>>,
    /// Tasks one of whose sessions was said to belong to another task too: outside the backend's
    /// premise ("sessions leave a task only with the task", docs/convergence.md), their answers
    /// are not held to their version (see the report of issue 11 item 7).
    moved: HashSet<String>,
    /// Known bug (see `known_bugs`): the task of an accepted `applyStatusSummaryEvent` without a
    /// summary, whose answers this step may change without `task_version`.
    summary_known: Option<String>,
    /// The previous answers with the versions they were read at.
    seen_sessions: HashMap<String, (u64, u64, SessionAnswers)>,
    seen_tasks: HashMap<String, (u64, TaskAnswers)>,
    /// The accepted state-changing calls, resolved, with their ticket, for the final replay.
    accepted: Vec<(Call, Option<String>)>,
    /// The last call, and the sessions and tasks it named.
    last_call: String,
    touched_sessions: Vec<String>,
    touched_tasks: Vec<String>,
}

/// The argument names of each call (the roots of its error paths).
fn roots(name: &str) -> &'static [&'static str] {
    match name {
        "applySessionList" => &["taskId", "sessions"],
        "applyTurnList" => &["sessionId", "turns"],
        "applyMessagePage" => &["sessionId", "messages"],
        "applyMessageEvent" => &["kind", "payload"],
        "applyMessageEvents" => &["kind", "payloads"],
        "applyTaskSnapshot" => &["token", "tasks"],
        "removeTask" | "setActiveTask" => &["taskId"],
        "removeSession" => &["sessionId"],
        "beginSelection" => &["taskId", "options"],
        "settleSelection" => &["ticket", "outcome"],
        "taskPendingAction" | "taskStatusSummary" => &["taskId"],
        "pendingOwner" => &["taskId", "preferredSessionId"],
        "respondStart" => &["sessionId", "pendingId", "kind"],
        "respondReply" => &["attempt", "reply"],
        "applyInboxPage" => &["workspaceId", "page", "at"],
        "applyInboxSeed" => &["seed"],
        "inboxReadFailed" => &["workspaceId", "at"],
        "inbox" => &["workspaceId", "now"],
        "sessionPendingAction"
        | "currentTurnId"
        | "pendingClarification"
        | "hiddenMessageIds"
        | "hasPendingPermission" => &["sessionId"],
        _ => &["payload"],
    }
}

fn payload(json: Json<'_>) -> Value {
    json.0.cloned().unwrap_or(Value::Null)
}

/// The sessions and tasks a call names, and which task each named session is said to belong to
/// (a list's task, or an input's `task_id`).
#[derive(Default)]
struct Named {
    sessions: Vec<String>,
    tasks: Vec<String>,
    claims: Vec<(String, String)>,
}

fn named(name: &str, args: &[Option<Value>]) -> Named {
    let mut out = Named::default();
    let arg = |i: usize| args.get(i).and_then(Option::as_ref);
    let text = |v: Option<&Value>, key: &str| {
        v.and_then(|v| v.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let top = |i: usize| arg(i).and_then(Value::as_str).map(str::to_owned);
    // A session named with the task it is said to belong to.
    let session = |out: &mut Named, id: Option<String>, task: Option<String>| {
        if let Some(id) = id {
            if let Some(task) = &task {
                out.claims.push((id.clone(), task.clone()));
            }
            out.sessions.push(id);
        }
        out.tasks.extend(task);
    };
    match name {
        "applySessionList" => {
            out.tasks.extend(top(0));
            for row in items(arg(1)) {
                session(&mut out, text(Some(row), "id"), top(0));
                session(&mut out, text(Some(row), "id"), text(Some(row), "task_id"));
            }
        }
        "settleSelection" => {
            for row in items(arg(1).and_then(|o| o.get("sessions"))) {
                session(&mut out, text(Some(row), "id"), text(Some(row), "task_id"));
            }
        }
        "applyTurnList" | "applyMessagePage" => out.sessions.extend(top(0)),
        "applyMessageEvent" => session(
            &mut out,
            text(arg(1), "session_id"),
            text(arg(1), "task_id"),
        ),
        "applyMessageEvents" => {
            for p in items(arg(1)) {
                session(
                    &mut out,
                    text(Some(p), "session_id"),
                    text(Some(p), "task_id"),
                );
            }
        }
        "applyTurnEvent" => session(
            &mut out,
            text(arg(0), "session_id"),
            text(arg(0), "task_id"),
        ),
        "applySessionEvent" => {
            let id = text(arg(0), "id").or_else(|| text(arg(0), "session_id"));
            session(&mut out, id, text(arg(0), "task_id"));
        }
        "applyStatusSummaryEvent" => out.tasks.extend(text(arg(0), "task_id")),
        "applyTaskUpdated" => out.tasks.extend(text(arg(0), "id")),
        "applyTaskSnapshot" => {
            for t in items(arg(1)) {
                out.tasks.extend(text(Some(t), "id"));
            }
        }
        "removeTask" | "setActiveTask" | "taskPendingAction" | "taskStatusSummary" => {
            out.tasks.extend(top(0));
        }
        "beginSelection" => {
            out.tasks.extend(top(0));
            out.sessions.extend(text(arg(1), "preferredSessionId"));
        }
        "pendingOwner" => {
            out.tasks.extend(top(0));
            out.sessions.extend(top(1));
        }
        _ => out.sessions.extend(top(0)),
    }
    out
}

/// The elements of an array argument or field (none when it is not an array).
fn items(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// Runs one call on a store through the library's dispatcher (`store_api::dispatch`): `Ok(reason)`
/// (`None` for calls without one). Only the inputs and queries of the store API: any other name
/// (`dispose`, `beginTaskFetch`: the harness runs them; `renew`, `applyFrame`, unknown ones)
/// changes nothing and answers `Ok(None)`.
fn apply(
    store: &mut Store,
    name: &str,
    args: &[Option<Value>],
    ticket: Option<String>,
) -> Result<(Option<Reason>, Option<u64>), WireError> {
    let respond = matches!(
        name,
        "respondStart"
            | "respondReply"
            | "applyInboxPage"
            | "applyInboxSeed"
            | "inboxReadFailed"
            | "inbox"
    );
    if !api::INPUTS.contains(&name) && !api::QUERIES.contains(&name) && !respond {
        return Ok((None, None));
    }
    let arg = |i: usize| Json(args.get(i).and_then(Option::as_ref));
    let ticket = || ticket.unwrap_or_default();
    match api::dispatch(store, name, arg, payload, ticket) {
        Ok(outcome) => {
            if let Outcome::Settled(Navigation::Session(s), _) = &outcome {
                assert!(!s.is_empty(), "settleSelection navigated to an empty id");
            }
            let attempt = match &outcome {
                Outcome::Started(started) => Some(started.attempt),
                _ => None,
            };
            Ok((outcome.reason(), attempt))
        }
        Err(CallError::Wire(error)) => Err(error),
        // A respond that may not start is refused by code, nothing changed (SPEC §13).
        Err(CallError::UnknownCall(_) | CallError::Refused(_)) => Ok((None, None)),
    }
}

/// Whether the checks step around the store bugs listed here (only with `FUZZ_KNOWN_BUGS=1`;
/// by default they are checked: the bug below is fixed, fuzz/regressions/store/ replays it):
/// * `summary-event-marks-task-known`: `applyStatusSummaryEvent` without a summary (key absent
///   or `null`) answers `Unchanged` but sets the task's `known` flag (src/store/tasks.rs
///   `apply_status_summary_event`) without `touch_task`; a task known only through its session
///   list then switches `taskPendingAction` from the sessions' rule to the legacy field (SPEC §4,
///   `effective_action`) without `task_version` or `take_changes()`.
fn known_bugs() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("FUZZ_KNOWN_BUGS").is_ok_and(|v| v == "1"))
}

impl Harness {
    fn step(&mut self, call: Call) {
        let Call {
            name,
            args,
            save,
            markers,
        } = call;
        self.summary_known = None;
        let mut args: Vec<Option<Value>> = args
            .into_iter()
            .map(|a| match a {
                Some(a) if markers && has_marker(&a) => resolve(&a, &self.saved),
                a => a,
            })
            .collect();
        // The binary form's `{"$token": n}` / `{"$ticket": n}`: the n-th begun one.
        for a in args.iter_mut().flatten() {
            if let Some(n) = a.get("$token").and_then(Value::as_u64) {
                *a = self
                    .tokens
                    .get(usize::try_from(n).unwrap_or(0))
                    .map_or(json!(0), |t| json!(t));
            } else if let Some(n) = a.get("$attempt").and_then(Value::as_u64) {
                // The n-th newest attempt respondStart returned (0 when none).
                let i = usize::try_from(n).unwrap_or(0);
                *a = json!(self.attempts.iter().rev().nth(i).copied().unwrap_or(0));
            } else if let Some(n) = a.get("$ticket").and_then(Value::as_u64) {
                let i = usize::try_from(n).unwrap_or(0);
                *a = self
                    .tickets
                    .iter()
                    .rev()
                    .nth(i)
                    .map_or(json!(""), |t| json!(t));
            }
        }
        let named = named(&name, &args);
        const LIMIT: usize = 12;
        let known = (self.sessions.len(), self.tasks.len());
        for id in &named.sessions {
            if self.sessions.len() < LIMIT && !self.sessions.contains(id) {
                self.sessions.insert(id.clone());
            }
        }
        for id in &named.tasks {
            if self.tasks.len() < LIMIT && !self.tasks.contains(id) {
                self.tasks.insert(id.clone());
            }
        }

        if known != (self.sessions.len(), self.tasks.len()) || self.query_sessions.is_empty() {
            self.refresh_queried();
            // The answers about ids first named by this call, read before it runs.
            self.record_new_ids();
        }
        for (session, task) in named.claims {
            let tasks = self.claims.entry(session).or_default();
            tasks.insert(task);
            if tasks.len() > 1 {
                self.moved.extend(tasks.iter().cloned());
            }
        }
        // What the step checks: the named ids, the tasks the named sessions were said to belong
        // to and the sessions the named tasks listed.
        let (mut sessions, mut tasks) = (named.sessions, named.tasks);
        let listed = tasks.len();
        for s in &sessions {
            tasks.extend(self.claims.get(s).into_iter().flatten().cloned());
        }
        for t in &tasks[..listed] {
            sessions.extend(self.members.get(t).into_iter().flatten().cloned());
        }
        (self.touched_sessions, self.touched_tasks) = (sessions, tasks);
        self.last_call.clone_from(&name);
        match name.as_str() {
            "dispose" => {
                let queried = (
                    std::mem::take(&mut self.sessions),
                    std::mem::take(&mut self.tasks),
                );
                *self = Harness::default();
                (self.sessions, self.tasks) = queried;
                self.refresh_queried();
                self.check_ids(true);
                return;
            }
            "beginTaskFetch" => {
                let token = self.store.begin_task_fetch();
                self.digest = None;
                self.tokens.push(token);
                if let Some(name) = &save {
                    self.saved.insert(name.clone(), json!(token));
                }
                self.accepted
                    .push((Call::new("beginTaskFetch", vec![]), None));
                self.check();
                return;
            }
            _ => {}
        }
        let ticket = (name == "beginSelection").then(|| {
            self.ticket_seq = self.ticket_seq.wrapping_add(1);
            format!("ticket-{}", self.ticket_seq)
        });
        let query = api::QUERIES.contains(&name.as_str());
        // The digest before the call: the one read after the last change when there was none
        // since (queries change nothing a digest sees; were it otherwise, the check below fails
        // on the next rejected call).
        let digest = if query {
            0
        } else {
            *self.digest.get_or_insert_with(|| self.store.digest())
        };
        let before = (digest, self.store.version());
        let result = apply(&mut self.store, &name, &args, ticket.clone());
        if let Ok((_, Some(attempt))) = &result {
            self.attempts.push(*attempt);
        }
        match result.map(|(reason, _)| reason) {
            Err(error) => {
                check_error(&error, roots(&name), &name);
                let digest = if query { 0 } else { self.store.digest() };
                assert_eq!(
                    (digest, self.store.version()),
                    before,
                    "{name}: a rejected call changed the store, or a query since the last accepted \
                     call did ({error})"
                );
            }
            Ok(_) if query => {
                assert_eq!(self.store.version(), before.1, "a query changed the store");
            }
            Ok(reason) => {
                self.digest = None;
                if name == "applyStatusSummaryEvent" && reason == Some(Reason::Unchanged) {
                    self.summary_known = args
                        .first()
                        .and_then(Option::as_ref)
                        .and_then(|p| p.get("task_id"))
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                }
                if let Some(ticket) = &ticket {
                    if let Some(name) = &save {
                        self.saved.insert(name.clone(), json!(ticket));
                    }
                    self.tickets.push(ticket.clone());
                }
                if name == "applyTaskSnapshot" {
                    let token = args
                        .first()
                        .and_then(|a| a.as_ref())
                        .and_then(Value::as_u64);
                    self.tokens.retain(|t| Some(*t) != token);
                }
                self.model(&name, &args, reason);
                // Issue 41: a store that took a summary can still be written and read back
                // (every other call is checked so at the end).
                let takes_summary = matches!(
                    name.as_str(),
                    "applyStatusSummaryEvent" | "applyTaskUpdated" | "applyTaskSnapshot"
                );
                self.accepted.push((Call::new(&name, args), ticket));
                if takes_summary {
                    self.hydrate_matches();
                }
            }
        }
        self.check();
    }

    /// What an accepted call tells the model (deletes, removals, list membership).
    fn model(&mut self, name: &str, args: &[Option<Value>], reason: Option<Reason>) {
        let arg = |i: usize| Json(args.get(i).and_then(Option::as_ref));
        let str_arg = |i: usize| {
            args.get(i)
                .and_then(Option::as_ref)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let removed = reason == Some(Reason::TaskRemoved);
        let applied = !matches!(
            reason,
            Some(Reason::TaskRemoved | Reason::TaskMismatchRejected)
        );
        match name {
            "applyMessageEvent" | "applyMessageEvents" => {
                let Ok(kind) = events::message_event_kind(&arg(0), &Path::Root("kind")) else {
                    return;
                };
                let batch = name == "applyMessageEvents";
                let payloads: Vec<Json<'_>> = if batch {
                    (0..task_projection::wire::Wire::len(&arg(1)))
                        .map(|i| task_projection::wire::Wire::at(&arg(1), i))
                        .collect()
                } else {
                    vec![arg(1)]
                };
                for p in payloads {
                    let Ok(event) = events::message_event(&p, &Path::Root("payload")) else {
                        continue;
                    };
                    let (session, message) = (&event.session_id, &event.message.id);
                    let revision = event.projection.as_ref().and_then(|p| p.revision.as_ref());
                    if removed && !batch {
                        self.gone.insert(session.clone());
                    }
                    match kind {
                        // Only a single event says for sure that its delete applied.
                        MessageEventKind::Deleted if applied && !batch => {
                            let held = self.deleted.entry(session.clone()).or_default();
                            let kept = match held.get(message) {
                                Some(held) => stronger_tombstone(held.as_ref(), revision),
                                None => revision.cloned(),
                            };
                            held.insert(message.clone(), kept);
                        }
                        MessageEventKind::Deleted => {}
                        _ => {
                            if let Some(held) = self.deleted.get_mut(session) {
                                let revived = held.get(message).is_some_and(|held| {
                                    revives(held.as_ref(), Revival::Event(revision))
                                });
                                if revived {
                                    held.remove(message);
                                }
                            }
                        }
                    }
                }
            }
            "applyTurnList" | "applyMessagePage" if removed => {
                self.gone.extend(str_arg(0));
            }
            "applyTurnEvent" | "applySessionEvent" if removed => {
                let payload = args.first().and_then(Option::as_ref);
                let id = payload.and_then(|p| match name {
                    "applyTurnEvent" => p.get("session_id"),
                    _ => p.get("id").or_else(|| p.get("session_id")),
                });
                self.gone
                    .extend(id.and_then(Value::as_str).map(str::to_owned));
            }
            "applySessionList" => {
                let Some(task) = str_arg(0) else { return };
                let ids: Vec<String> = args
                    .get(1)
                    .and_then(Option::as_ref)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s.get("id").and_then(Value::as_str).map(str::to_owned))
                    .collect();
                if removed {
                    self.gone.extend(ids);
                } else {
                    self.members.entry(task).or_default().extend(ids);
                }
            }
            "removeSession" => self.gone.extend(str_arg(0)),
            "removeTask" => {
                let Some(task) = str_arg(0) else { return };
                self.gone
                    .extend(self.members.get(&task).into_iter().flatten().cloned());
                self.removed_tasks.insert(task);
            }
            _ => {}
        }
    }

    /// The answers about the queried ids not read yet.
    fn record_new_ids(&mut self) {
        let store = &self.store;
        for s in &self.query_sessions {
            if !self.seen_sessions.contains_key(s) {
                let versions = (store.session_version(s), store.discovery_version(s));
                let answers = session_answers(store, s).owned();
                self.seen_sessions
                    .insert(s.clone(), (versions.0, versions.1, answers));
            }
        }
        for t in &self.query_tasks {
            if !self.seen_tasks.contains_key(t) {
                let answers = task_answers(store, t).owned();
                self.seen_tasks
                    .insert(t.clone(), (store.task_version(t), answers));
            }
        }
    }

    /// The ids to query: the alphabet and the ids the calls named.
    fn refresh_queried(&mut self) {
        let all = |alphabet: &[&str], named: &BTreeSet<String>| -> Vec<String> {
            alphabet
                .iter()
                .map(|s| (*s).to_owned())
                .chain(named.iter().cloned())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect()
        };
        self.query_sessions = all(&SESSIONS, &self.sessions);
        self.query_tasks = all(&TASKS, &self.tasks);
    }

    /// The step invariants after a call, about the ids it may have affected: those it named,
    /// those `take_changes()` lists and those whose version moved. (Not every queried id after
    /// every call: that was most of the time of an execution. An answer that changes without
    /// any of these is caught when a later call names the id, and by `finish`, unless a
    /// legitimate change of the id comes first.) Calls that remove tasks wholesale check all.
    fn check(&mut self) {
        let all = matches!(
            self.last_call.as_str(),
            "removeTask" | "applyTaskSnapshot" | "dispose"
        );
        self.check_ids(all);
    }

    /// `all`: every queried id, and `pendingOwner(t, preferred)` for every task, not only those
    /// whose version moved. (The held answers are copied only when they changed.)
    fn check_ids(&mut self, all: bool) {
        let changes = self.store.take_changes();
        let store = &self.store;
        let touched_sessions = &self.touched_sessions;
        let touched_tasks = &self.touched_tasks;
        for s in &self.query_sessions {
            let versions = (store.session_version(s), store.discovery_version(s));
            let look = all
                || touched_sessions.contains(s)
                || changes.sessions.contains(s)
                || self
                    .seen_sessions
                    .get(s)
                    .is_none_or(|(v, d, _)| (*v, *d) != versions);
            if !look {
                continue;
            }
            let answers = session_answers(store, s);
            let hidden = store.hidden_message_ids(s).0;
            let bundle_ids: &[&str] = answers.bundle.as_ref().map_or(&[], |b| &b.1);
            assert_eq!(
                hidden.as_deref(),
                answers.rows_known.0.then_some(bundle_ids),
                "hiddenMessageIds({s}) is not the bundle"
            );
            let hidden = hidden.unwrap_or_default();
            if answers.bundle.is_some() {
                assert_eq!(
                    answers.action,
                    Some(PendingAction::Clarification),
                    "{s} shows a bundle but its action is {:?}",
                    answers.action
                );
                assert_ne!(
                    answers.turn,
                    CurrentTurn::None,
                    "{s}: a bundle without a current turn"
                );
            }
            if answers.state.is_some_and(|st| !st.is_input_capable()) {
                assert_eq!(
                    answers.turn,
                    CurrentTurn::None,
                    "quarantined {s} has a current turn"
                );
                assert_eq!(answers.bundle, None, "quarantined {s} shows a bundle");
            }
            if let Some(deleted) = self.deleted.get(s) {
                for m in &hidden {
                    assert!(
                        !deleted.contains_key(*m),
                        "deleted message {m} is hidden as a live question of {s}"
                    );
                }
            }
            if self.gone.contains(s) {
                assert_eq!(
                    store.current_turn_id(s).1,
                    Reason::TaskRemoved,
                    "session {s} of a removed task came back"
                );
            }
            let Some((version, discovery, held)) = self.seen_sessions.get_mut(s) else {
                self.seen_sessions
                    .insert(s.clone(), (versions.0, versions.1, answers.owned()));
                continue;
            };
            let same = *held == answers;
            if !same {
                assert_ne!(
                    *version, versions.0,
                    "the answers about {s} changed without session_version: {held:?} → {answers:?}"
                );
                assert!(
                    changes.sessions.contains(s),
                    "the answers about {s} changed but take_changes() lacks it: {held:?} → {answers:?}"
                );
            }
            if *discovery == versions.1 {
                assert!(
                    same_turn(&held.turn, answers.turn) && same_bundle(&held.bundle, &answers.bundle),
                    "current turn or bundle of {s} changed without discovery_version: {held:?} → {answers:?}"
                );
            }
            if !same {
                *held = answers.owned();
            }
            (*version, *discovery) = versions;
        }
        for t in &self.query_tasks {
            let version = store.task_version(t);
            let held = self.seen_tasks.get_mut(t);
            let moved = held.as_ref().is_none_or(|(v, _)| *v != version);
            if !(all || moved || touched_tasks.contains(t) || changes.tasks.contains(t)) {
                continue;
            }
            let answers = task_answers(store, t);
            if self.removed_tasks.contains(t) {
                assert_eq!(
                    store.task_pending_action(t).1,
                    Reason::TaskRemoved,
                    "removed task {t} came back"
                );
            }
            if let (Some(owner), Some(action)) = (answers.owner, answers.action) {
                let capable = store
                    .session_state(owner)
                    .is_some_and(SessionState::is_input_capable);
                // The action the owner rule reads: the projection, or the rows while a settled
                // answer is newer (SPEC §13).
                let own = store.session_owner_action(owner);
                assert!(
                    capable && own == Some(action),
                    "pendingOwner({t}) = {owner} is not a pending owner of {action:?}"
                );
            }
            // With a preferred session: only that nothing panics, so once per task version (a
            // change of one of its sessions moves it too).
            if all || moved {
                for preferred in SESSIONS {
                    let _ = store.pending_owner(t, Some(preferred));
                }
            }
            let Some((held_version, held)) = held else {
                self.seen_tasks
                    .insert(t.clone(), (version, answers.owned()));
                continue;
            };
            if *held != answers {
                let excused = known_bugs() && self.summary_known.as_ref() == Some(t);
                if !self.moved.contains(t) && !excused {
                    assert_ne!(
                        *held_version, version,
                        "the answers about task {t} changed without task_version: {held:?} → {answers:?}"
                    );
                    assert!(
                        changes.tasks.contains(t),
                        "the answers about task {t} changed but take_changes() lacks it: {held:?} → {answers:?}"
                    );
                }
                *held = answers.owned();
            }
            *held_version = version;
        }
    }

    /// After the last call: `pendingOwner` with every preferred session, and the accepted calls
    /// replayed into a fresh store, without queries in between, end in the same state and answers
    /// (skipped when no call was accepted: the store is fresh but for its caches).
    fn finish(&mut self) {
        self.check_ids(true);
        if !self.accepted.is_empty() {
            self.replay_matches();
        }
        self.hydrate_matches();
    }

    /// SPEC §12: the store's snapshot, through JSON text, hydrates into a store with the same
    /// state, answers and snapshot.
    fn hydrate_matches(&self) {
        let payload = |p: &Value, out: &mut String| out.push_str(&p.to_string());
        let text = api::dehydrate(&self.store, &Json::ABSENT, payload).expect("dehydrate");
        let parsed: Value = serde_json::from_str(&text).expect("a snapshot is JSON");
        let hydrated: Store = api::hydrate(&Json::new(&parsed), &Json::ABSENT, |j: Json<'_>| {
            j.0.cloned().unwrap_or(Value::Null)
        })
        .unwrap_or_else(|e| panic!("the store's own snapshot is refused: {e}\n{text}"));
        assert_eq!(
            hydrated.digest(),
            self.store.digest(),
            "hydrate: another state"
        );
        assert_eq!(
            api::dehydrate(&hydrated, &Json::ABSENT, payload).expect("dehydrate"),
            text,
            "hydrate: another snapshot"
        );
        self.same_answers(&hydrated, "hydrate");
        // SPEC §12 merge: the store's own snapshot merged back into it (a page handing over what
        // the store already holds) changes no answer, and the merged store still hands on.
        let mut merged = self.store.clone();
        api::merge(&mut merged, &Json::new(&parsed), |j: Json<'_>| {
            j.0.cloned().unwrap_or(Value::Null)
        })
        .unwrap_or_else(|e| panic!("the store's own snapshot does not merge: {e}\n{text}"));
        self.same_answers(&merged, "merging its own snapshot");
        api::dehydrate(&merged, &Json::ABSENT, payload).expect("the merged store dehydrates");
    }

    fn replay_matches(&self) {
        let mut fresh = Store::new();
        for (call, ticket) in &self.accepted {
            if call.name == "beginTaskFetch" {
                fresh.begin_task_fetch();
                continue;
            }
            let result = apply(&mut fresh, &call.name, &call.args, ticket.clone()).map(|(r, _)| r);
            assert!(
                result.is_ok(),
                "replay: {} was rejected: {result:?}",
                call.name
            );
        }
        assert_eq!(
            fresh.digest(),
            self.store.digest(),
            "replay ends in another state"
        );
        self.same_answers(&fresh, "replay");
    }

    /// `other` answers every queried session and task as the store does (`what` it is, for the
    /// message).
    fn same_answers(&self, other: &Store, what: &str) {
        for s in &self.query_sessions {
            assert_eq!(
                session_answers(other, s),
                session_answers(&self.store, s),
                "{what} answers differently about {s}"
            );
        }
        for t in &self.query_tasks {
            assert_eq!(
                task_answers(other, t),
                task_answers(&self.store, t),
                "{what} answers differently about task {t}"
            );
        }
    }
}

/// A store-scenario case as a seed (the JSON form).
#[allow(dead_code)] // tests/fuzz_corpus.rs writes the seed corpus with it
pub fn seed_of_case(case: &Value) -> Vec<u8> {
    let steps: Vec<Value> = case["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|step| {
            let mut out = Map::new();
            for key in ["call", "args", "save"] {
                if let Some(v) = step.get(key) {
                    out.insert(key.to_owned(), v.clone());
                }
            }
            Value::Object(out)
        })
        .collect();
    serde_json::to_vec(&Value::Array(steps)).unwrap_or_default()
}
