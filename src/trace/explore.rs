//! The race explorer (docs/trace-format.md, "Explorer"): a trace's inputs delivered in random
//! orders with duplicates, as the network could deliver them (docs/convergence.md), each order's
//! final answers compared with those of the recorded order, and every difference shrunk to the
//! smallest delivery that still produces it, written as a trace that `task-projection-replay`
//! replays.
//!
//! The delivery model is the one `tests/store_convergence.rs` proves the contract with, and both
//! use this module: [`in_order`], [`shuffled`] (every input 1–3 times in a random order, a REST
//! snapshot's `beginTaskFetch` at a random earlier point than its `applyTaskSnapshot`) and
//! [`shrink`]. Inputs whose order SPEC lets decide an answer (the exceptions of
//! docs/convergence.md) and the client's own actions (selection, the connection's hello) are
//! [`Arrival::Pinned`]: delivered once, in their recorded order relative to each other ([`plan`]
//! says which and why), so what the explorer reports is a break of the contract, not one of its
//! exceptions.
//!
//! The engine is a parameter ([`Engine`]: one input applied to a store), so a test can run the
//! explorer against a deliberately broken one and see it find the race (`tests/trace_explore.rs`).
//! Native only, deciding nothing: every answer is the store's, through the public API.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::native::{apply, note, Applied, ApplyError, Trace};
use super::{session_answers, task_answers, Recorder};
use crate::rules::model::Revision;
use crate::rules::revision::compare_revisions;
use crate::store::ProjectionStore;

/// The store a trace is replayed on (the caller's payloads are JSON values).
pub type Store = ProjectionStore<Value>;

/// One input applied to a store: `call(...args)` of the public API, `ticket` the ticket a
/// `beginSelection` gets ([`apply`] is the engine; a test passes a broken one).
pub trait Engine {
    fn apply(
        &self,
        store: &mut Store,
        call: &str,
        args: &[Value],
        ticket: Option<&str>,
    ) -> Result<Applied, ApplyError>;
}

impl<F> Engine for F
where
    F: Fn(&mut Store, &str, &[Value], Option<&str>) -> Result<Applied, ApplyError>,
{
    fn apply(
        &self,
        store: &mut Store,
        call: &str,
        args: &[Value],
        ticket: Option<&str>,
    ) -> Result<Applied, ApplyError> {
        self(store, call, args, ticket)
    }
}

/// An engine as a plain function.
pub type ApplyFn = fn(&mut Store, &str, &[Value], Option<&str>) -> Result<Applied, ApplyError>;

/// This engine: [`apply`] through `wire::store_api`.
pub const ENGINE: ApplyFn = apply;

// ---- the delivery model -----------------------------------------------------------------------

/// How the network may deliver an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// 1–3 times, anywhere.
    Any,
    /// A REST snapshot, 1–3 times: each copy begun (`beginTaskFetch`) at a random earlier point
    /// than it is applied (`applyTaskSnapshot`).
    Fetched,
    /// Once, in its recorded order relative to the other pinned inputs.
    Pinned,
    /// Pinned, and a `beginTaskFetch` (it opens a fetch).
    PinnedBegin,
    /// Pinned, and an `applyTaskSnapshot` (it closes the fetch its pinned begin opened).
    PinnedApply,
}

impl Arrival {
    fn pinned(self) -> bool {
        matches!(
            self,
            Arrival::Pinned | Arrival::PinnedBegin | Arrival::PinnedApply
        )
    }
}

/// One delivered step: an input, or the `beginTaskFetch` of a copy of a snapshot (`begin`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The input's index.
    pub input: usize,
    /// For a [`Arrival::Fetched`] input: which copy (its begin and its apply share it).
    pub copy: Option<usize>,
    /// The `beginTaskFetch` half of a fetched copy.
    pub begin: bool,
}

impl Step {
    fn one(input: usize) -> Step {
        Step {
            input,
            copy: None,
            begin: false,
        }
    }

    /// The recorded order of steps: by input, a copy's begin before its apply.
    fn key(&self) -> (usize, bool) {
        (self.input, !self.begin)
    }
}

/// The store keeps this many begun fetches (`store::MAX_FETCHES`); a delivery never has more in
/// flight, so no token is forgotten.
const FETCHES: usize = 32;

/// The copy id of copy `c` of input `i` (`in_order` uses copy 0).
fn copy_id(i: usize, c: usize) -> usize {
    i.saturating_mul(4).saturating_add(c)
}

/// In-order delivery: every input once, a fetched snapshot begun right before it applies.
pub fn in_order(arrivals: &[Arrival]) -> Vec<Step> {
    let mut steps = Vec::with_capacity(arrivals.len());
    for (i, arrival) in arrivals.iter().enumerate() {
        if *arrival == Arrival::Fetched {
            let copy = Some(copy_id(i, 0));
            steps.push(Step {
                input: i,
                copy,
                begin: true,
            });
            steps.push(Step {
                input: i,
                copy,
                begin: false,
            });
        } else {
            steps.push(Step::one(i));
        }
    }
    steps
}

/// The pseudo-random numbers of a delivery: a 64-bit LCG (Knuth's MMIX constants), upper bits.
#[derive(Clone, Debug)]
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed | 1)
    }

    /// A number below `bound` (0 when `bound` is 0).
    pub fn below(&mut self, bound: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(self.0 >> 33)
            .unwrap_or(0)
            .checked_rem(bound.max(1))
            .unwrap_or(0)
    }
}

/// SplitMix64: the seed of the `n`-th order of a run seeded `seed`.
pub fn order_seed(seed: u64, n: u64) -> u64 {
    let mut z = seed.wrapping_add(n.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn opens(arrivals: &[Arrival], step: &Step) -> bool {
    step.begin || arrivals.get(step.input) == Some(&Arrival::PinnedBegin)
}

fn closes(arrivals: &[Arrival], step: &Step) -> bool {
    match arrivals.get(step.input) {
        Some(Arrival::Fetched) => !step.begin,
        Some(Arrival::PinnedApply) => true,
        _ => false,
    }
}

/// The earliest point a new fetch may begin at so that, with it, no more than [`FETCHES`] are
/// in flight anywhere up to the end of `steps`.
fn earliest_begin(arrivals: &[Arrival], steps: &[Step]) -> usize {
    // in_flight[k]: fetches open after the first k steps.
    let mut in_flight = Vec::with_capacity(steps.len().saturating_add(1));
    let mut open = 0usize;
    in_flight.push(open);
    for step in steps {
        if opens(arrivals, step) {
            open = open.saturating_add(1);
        }
        if closes(arrivals, step) {
            open = open.saturating_sub(1);
        }
        in_flight.push(open);
    }
    // Begun at `at`, it is in flight after steps at+1..=len: each must have room for one more.
    let mut at = steps.len();
    while at > 0 && in_flight.get(at).copied().unwrap_or(0) < FETCHES {
        at = at.saturating_sub(1);
    }
    at
}

/// A random delivery: every input `1 + dups[i] % 3` times (a pinned one once) in a shuffled
/// order, the pinned inputs then put back in their recorded relative order; each copy of a
/// fetched snapshot begun at a random earlier point (no earlier than keeps the fetches in flight
/// within what the store remembers).
pub fn shuffled(arrivals: &[Arrival], seed: u64, dups: &[u8]) -> Vec<Step> {
    let mut rng = Lcg::new(seed);
    let mut atoms: Vec<(usize, usize)> = Vec::new();
    for (i, arrival) in arrivals.iter().enumerate() {
        let copies = if arrival.pinned() {
            1
        } else {
            1 + usize::from(dups.get(i).copied().unwrap_or(0) % 3)
        };
        for c in 0..copies {
            atoms.push((i, copy_id(i, c)));
        }
    }
    for i in (1..atoms.len()).rev() {
        let j = rng.below(i.saturating_add(1));
        atoms.swap(i, j);
    }
    // The pinned inputs, in the slots the shuffle gave them, in recorded order.
    let slots: Vec<usize> = (0..atoms.len())
        .filter(|&k| {
            atoms
                .get(k)
                .and_then(|(i, _)| arrivals.get(*i))
                .is_some_and(|a| a.pinned())
        })
        .collect();
    let mut pinned: Vec<(usize, usize)> = slots
        .iter()
        .filter_map(|&k| atoms.get(k).copied())
        .collect();
    pinned.sort_unstable();
    for (&k, atom) in slots.iter().zip(pinned) {
        if let Some(slot) = atoms.get_mut(k) {
            *slot = atom;
        }
    }
    let mut steps: Vec<Step> = Vec::with_capacity(atoms.len().saturating_mul(2));
    for (input, copy) in atoms {
        if arrivals.get(input) == Some(&Arrival::Fetched) {
            let lo = earliest_begin(arrivals, &steps);
            let room = steps.len().saturating_add(1).saturating_sub(lo);
            let at = lo.saturating_add(rng.below(room)).min(steps.len());
            steps.insert(
                at,
                Step {
                    input,
                    copy: Some(copy),
                    begin: true,
                },
            );
            steps.push(Step {
                input,
                copy: Some(copy),
                begin: false,
            });
        } else {
            steps.push(Step::one(input));
        }
    }
    steps
}

/// `dups` for [`shuffled`] from a seed (one byte per input).
pub fn duplicates(seed: u64, inputs: usize) -> Vec<u8> {
    let mut rng = Lcg::new(seed.rotate_left(17) ^ 0x5bd1_e995);
    (0..inputs)
        .map(|_| u8::try_from(rng.below(256)).unwrap_or(0))
        .collect()
}

/// Shrinks a failing delivery. `fails(kept, steps)` tells whether delivering `steps` (which
/// only name kept inputs) still fails with the inputs not `kept` left out of the history too (the
/// in-order reference is then the kept inputs in order), and how. First whole inputs are left
/// out (halves, quarters, ... single inputs), then duplicate copies, then steps are moved back
/// toward recorded order (adjacent swaps of two steps out of order) while the failure persists.
/// `None` when the delivery does not fail.
pub fn shrink<F>(
    arrivals: &[Arrival],
    steps: &[Step],
    mut fails: impl FnMut(&[bool], &[Step]) -> Option<F>,
) -> Option<(Vec<bool>, Vec<Step>, F)> {
    let mut kept = vec![true; arrivals.len()];
    let mut steps = steps.to_vec();
    let mut found = fails(&kept, &steps)?;
    // 1. Whole inputs, by chunks of halving size.
    let mut size = (arrivals.len() / 2).max(1);
    loop {
        let mut start = 0usize;
        loop {
            let alive: Vec<usize> = (0..kept.len())
                .filter(|&i| kept.get(i) == Some(&true))
                .collect();
            let Some(chunk) = alive.get(start..start.saturating_add(size).min(alive.len())) else {
                break;
            };
            if chunk.is_empty() {
                break;
            }
            let mut fewer = kept.clone();
            for &i in chunk {
                if let Some(k) = fewer.get_mut(i) {
                    *k = false;
                }
            }
            let fewer_steps: Vec<Step> = steps
                .iter()
                .filter(|s| fewer.get(s.input) == Some(&true))
                .cloned()
                .collect();
            match fails(&fewer, &fewer_steps) {
                Some(f) => {
                    kept = fewer;
                    steps = fewer_steps;
                    found = f;
                }
                None => start = start.saturating_add(size),
            }
        }
        if size == 1 {
            break;
        }
        size /= 2;
    }
    // 2. Duplicates: a delivered copy of an input delivered more than once.
    let mut i = 0;
    while let Some(step) = steps.get(i).cloned() {
        let copies: BTreeSet<Option<usize>> = steps
            .iter()
            .filter(|s| s.input == step.input)
            .map(|s| s.copy)
            .collect();
        let several = if step.copy.is_none() {
            steps.iter().filter(|s| s.input == step.input).count() > 1
        } else {
            !step.begin && copies.len() > 1
        };
        if several {
            let mut fewer = steps.clone();
            if step.copy.is_none() {
                fewer.remove(i);
            } else {
                fewer.retain(|s| s.input != step.input || s.copy != step.copy);
            }
            if let Some(f) = fails(&kept, &fewer) {
                steps = fewer;
                found = f;
                i = 0;
                continue;
            }
        }
        i = i.saturating_add(1);
    }
    // 3. Toward recorded order: swap two adjacent steps out of order while it still fails.
    let mut moved = true;
    let mut rounds = 0usize;
    while moved && rounds < 64 {
        moved = false;
        rounds = rounds.saturating_add(1);
        for k in 1..steps.len() {
            let (Some(a), Some(b)) = (steps.get(k.saturating_sub(1)), steps.get(k)) else {
                continue;
            };
            if a.key() <= b.key() {
                continue;
            }
            let mut swapped = steps.clone();
            swapped.swap(k.saturating_sub(1), k);
            if let Some(f) = fails(&kept, &swapped) {
                steps = swapped;
                found = f;
                moved = true;
            }
        }
    }
    Some((kept, steps, found))
}

// ---- a trace as inputs ------------------------------------------------------------------------

/// One input of a trace, as the explorer delivers it.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// Its line in the trace.
    pub line: usize,
    pub us: u64,
    pub call: String,
    pub args: Vec<Value>,
    /// `beginSelection`'s recorded ticket (given again on delivery).
    pub ticket: Option<String>,
    /// `beginTaskFetch`'s recorded token (a pinned begin's apply is mapped to the token the
    /// delivery's begin got).
    pub token: Option<u64>,
    pub arrival: Arrival,
    /// Why it is pinned (docs/trace-format.md, "Explorer").
    pub pinned: Option<&'static str>,
}

/// A trace's inputs, each with how it may arrive.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub inputs: Vec<Input>,
}

/// Why an input is pinned.
pub mod why {
    /// `beginSelection`, `settleSelection`, `setActiveTask`: the user's actions, in the order the
    /// user made them.
    pub const CLIENT: &str = "a client action (selection, active task)";
    /// `server.hello`: the connection's handshake, in connection order.
    pub const HELLO: &str = "a connection's hello";
    /// A `beginTaskFetch` no snapshot answered.
    pub const UNANSWERED: &str = "a fetch no snapshot answered";
    /// Exceptions 1 and 3, and summaries that share a revision.
    pub const SUMMARY: &str = "a summary input of a task whose summary SPEC orders by arrival \
        (task.updated with status_summary, an invalidated snapshot, or one revision with two contents)";
    /// Exception 4.
    pub const LEGACY: &str = "the legacy task_pending_action (no clock) with two values";
    /// Exceptions 5 and 6 for message rows.
    pub const ROW: &str = "two versions of one message row with one updated_at (or none)";
    /// Exceptions 5 and 6 for a session's own fields.
    pub const STATE: &str = "two versions of one session's fields with one updated_at (or none)";
    /// Exceptions 5 and 6 for projections.
    pub const PROJECTION: &str =
        "a session's projections with one revision and two values, or without revision";
    /// One session named with two tasks (a backend never moves a session).
    pub const OWNER: &str = "a session named with two different tasks";
    /// A deleted id revived by a newer event (a backend never re-adds a deleted id).
    pub const REVIVAL: &str = "a deleted message revived by an event with a newer revision";
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn token_of(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn revision_of(v: Option<&Value>) -> Option<Revision> {
    let v = v?;
    let epoch = match v.get("epoch")? {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    Some(Revision {
        epoch,
        sequence: v.get("sequence")?.as_u64()?,
    })
}

/// Message rows an input carries: `(session, row)`.
fn rows(call: &str, args: &[Value]) -> Vec<(String, Value)> {
    let session = |row: &Value| text(row, "session_id").unwrap_or_default();
    match call {
        "applyMessageEvent" if args.first().and_then(Value::as_str) != Some("deleted") => args
            .get(1)
            .map(|r| vec![(session(r), r.clone())])
            .unwrap_or_default(),
        "applyMessageEvents" if args.first().and_then(Value::as_str) != Some("deleted") => args
            .get(1)
            .and_then(Value::as_array)
            .map(|rs| rs.iter().map(|r| (session(r), r.clone())).collect())
            .unwrap_or_default(),
        "applyMessagePage" => {
            let s = args
                .first()
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            args.get(1)
                .and_then(Value::as_array)
                .map(|rs| rs.iter().map(|r| (s.clone(), r.clone())).collect())
                .unwrap_or_default()
        }
        _ => Vec::new(),
    }
}

/// Message events an input carries: `(kind, event)`.
fn events(call: &str, args: &[Value]) -> Vec<(String, Value)> {
    let kind = args
        .first()
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    match call {
        "applyMessageEvent" => args
            .get(1)
            .map(|e| vec![(kind, e.clone())])
            .unwrap_or_default(),
        "applyMessageEvents" => args
            .get(1)
            .and_then(Value::as_array)
            .map(|es| es.iter().map(|e| (kind.clone(), e.clone())).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Session rows an input carries (their own fields and projection): `(session id, row)`.
fn sessions(call: &str, args: &[Value]) -> Vec<(String, Value)> {
    let listed = |list: Option<&Value>| -> Vec<(String, Value)> {
        list.and_then(Value::as_array)
            .map(|rs| {
                rs.iter()
                    .map(|r| (text(r, "id").unwrap_or_default(), r.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    match call {
        "applySessionList" => listed(args.get(1)),
        "settleSelection" => listed(args.get(1).and_then(|o| o.get("sessions"))),
        "applySessionEvent" => args
            .first()
            .map(|e| {
                let id = text(e, "id")
                    .or_else(|| text(e, "session_id"))
                    .unwrap_or_default();
                vec![(id, e.clone())]
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Projections an input carries: `(session id, revision, action)`.
fn projections(call: &str, args: &[Value]) -> Vec<(String, Option<Value>, Value)> {
    let mut out = Vec::new();
    let mut take = |session: String, v: &Value| {
        if let Some(action) = v.get("pending_action") {
            out.push((
                session,
                v.get("pending_action_revision").cloned(),
                action.clone(),
            ));
        }
    };
    for (s, row) in sessions(call, args) {
        take(s, &row);
    }
    for (_, event) in events(call, args) {
        take(text(&event, "session_id").unwrap_or_default(), &event);
    }
    out
}

/// Tasks an input carries with a summary key or the invalidated flag, with the legacy field:
/// `(task id, task object)`.
fn tasks(call: &str, args: &[Value]) -> Vec<(String, Value)> {
    match call {
        "applyTaskSnapshot" => args
            .get(1)
            .and_then(Value::as_array)
            .map(|ts| {
                ts.iter()
                    .map(|t| (text(t, "id").unwrap_or_default(), t.clone()))
                    .collect()
            })
            .unwrap_or_default(),
        "applyTaskUpdated" => args
            .first()
            .map(|t| vec![(text(t, "id").unwrap_or_default(), t.clone())])
            .unwrap_or_default(),
        "applyStatusSummaryEvent" => args
            .first()
            .map(|t| vec![(text(t, "task_id").unwrap_or_default(), t.clone())])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The sessions an input names with their task: `(session, task)`.
fn session_tasks(call: &str, args: &[Value]) -> Vec<(String, String)> {
    let tagged = |v: &Value, id: &str| -> Option<(String, String)> {
        Some((text(v, id)?, text(v, "task_id")?))
    };
    let mut out = Vec::new();
    match call {
        "applySessionList" => {
            let task = args.first().and_then(Value::as_str).unwrap_or_default();
            for row in args.get(1).and_then(Value::as_array).into_iter().flatten() {
                if let Some(id) = text(row, "id") {
                    out.push((id.clone(), task.to_owned()));
                }
                out.extend(tagged(row, "id"));
            }
        }
        "applyTurnEvent" => out.extend(args.first().and_then(|e| tagged(e, "session_id"))),
        _ => {
            for (session, row) in sessions(call, args) {
                if let Some(task) = text(&row, "task_id") {
                    out.push((session, task));
                }
            }
            for (_, event) in events(call, args) {
                out.extend(tagged(&event, "session_id"));
            }
        }
    }
    out
}

/// What of a row two versions must agree on when they share a clock.
fn row_content(row: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for key in ["type", "turn_id", "created_at", "metadata"] {
        if let Some(v) = row.get(key) {
            out.insert(key.to_owned(), v.clone());
        }
    }
    Value::Object(out)
}

/// Groups of inputs by a key, each with the distinct contents seen under it.
#[derive(Default)]
struct Groups(BTreeMap<String, (BTreeSet<usize>, BTreeSet<String>)>);

impl Groups {
    fn add(&mut self, key: String, input: usize, content: &Value) {
        let entry = self.0.entry(key).or_default();
        entry.0.insert(input);
        entry.1.insert(content.to_string());
    }

    /// The inputs of every group with two contents or more.
    fn conflicting(&self) -> impl Iterator<Item = usize> + '_ {
        self.0
            .values()
            .filter(|(_, contents)| contents.len() > 1)
            .flat_map(|(inputs, _)| inputs.iter().copied())
    }
}

/// A trace's inputs and how each may arrive: a snapshot with its begin is one fetched input;
/// the inputs whose order SPEC lets decide (docs/convergence.md's exceptions), the client's own
/// actions, hellos and unanswered fetches are pinned.
pub fn plan(trace: &Trace) -> Plan {
    let steps = &trace.steps;
    // Snapshots and the begins they answer.
    let begins: HashMap<u64, usize> = steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.call == "beginTaskFetch")
        .filter_map(|(i, s)| s.token.map(|t| (t, i)))
        .collect();
    let mut answered: HashMap<usize, usize> = HashMap::new(); // begin → snapshot
    for (i, s) in steps.iter().enumerate() {
        if s.call == "applyTaskSnapshot" {
            if let Some(&b) = token_of(s.args.first()).and_then(|t| begins.get(&t)) {
                answered.insert(b, i);
            }
        }
    }
    let mut pinned: Vec<Option<&'static str>> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| match s.call.as_str() {
            "beginSelection" | "settleSelection" | "setActiveTask" => Some(why::CLIENT),
            "applyFrame" => Some(why::HELLO),
            "beginTaskFetch" if !answered.contains_key(&i) => Some(why::UNANSWERED),
            _ => None,
        })
        .collect();
    fn pin(pinned: &mut [Option<&'static str>], i: usize, why: &'static str) {
        if let Some(p) = pinned.get_mut(i) {
            p.get_or_insert(why);
        }
    }

    // Summaries (exceptions 1, 3; one revision with two contents) and the legacy field (4).
    let mut summary_inputs: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    let mut by_arrival: BTreeSet<String> = BTreeSet::new();
    let mut summaries = Groups::default();
    let mut legacy = Groups::default();
    for (i, s) in steps.iter().enumerate() {
        for (task, t) in tasks(&s.call, &s.args) {
            let summary = t.get("status_summary");
            let invalidated = t.get("status_summary_invalidated") == Some(&Value::Bool(true));
            if summary.is_some() || invalidated {
                summary_inputs.entry(task.clone()).or_default().insert(i);
            }
            if (s.call == "applyTaskUpdated" && summary.is_some())
                || (s.call == "applyTaskSnapshot" && invalidated)
            {
                by_arrival.insert(task.clone());
            }
            if let Some(summary) = summary.filter(|v| v.is_object()) {
                let revision = summary.get("revision").cloned().unwrap_or(Value::Null);
                let content: Value = summary
                    .get("pending_action")
                    .cloned()
                    .unwrap_or(Value::Null);
                summaries.add(format!("{task}\u{0}{revision}"), i, &content);
            }
            if let Some(action) = t.get("task_pending_action") {
                legacy.add(task.clone(), i, action);
            }
        }
    }
    for (task, inputs) in &summary_inputs {
        if by_arrival.contains(task) {
            for &i in inputs {
                pin(&mut pinned, i, why::SUMMARY);
            }
        }
    }
    for i in summaries.conflicting().collect::<Vec<_>>() {
        let task_inputs = tasks(
            steps.get(i).map_or("", |s| s.call.as_str()),
            steps.get(i).map_or(&[][..], |s| &s.args),
        );
        for (task, _) in task_inputs {
            for &j in summary_inputs.get(&task).into_iter().flatten() {
                pin(&mut pinned, j, why::SUMMARY);
            }
        }
    }
    for i in legacy.conflicting().collect::<Vec<_>>() {
        pin(&mut pinned, i, why::LEGACY);
    }

    // Rows, session fields and projections with one clock and two contents (5), or no clock (6).
    let mut row_clocks = Groups::default();
    let mut state_clocks = Groups::default();
    let mut revisions = Groups::default();
    let mut unrevised: BTreeSet<String> = BTreeSet::new();
    let mut projection_inputs: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for (i, s) in steps.iter().enumerate() {
        for (session, row) in rows(&s.call, &s.args) {
            let id = text(&row, "message_id")
                .or_else(|| text(&row, "id"))
                .unwrap_or_default();
            let clock = row.get("updated_at").cloned().unwrap_or(Value::Null);
            row_clocks.add(
                format!("{session}\u{0}{id}\u{0}{clock}"),
                i,
                &row_content(&row),
            );
        }
        for (session, row) in sessions(&s.call, &s.args) {
            // Each field by its own clock: `state` (absent, null or "" carries none) and
            // `is_primary`.
            let clock = row.get("updated_at").cloned().unwrap_or(Value::Null);
            for field in ["state", "is_primary"] {
                let value = row
                    .get(field)
                    .filter(|v| !v.is_null() && v.as_str() != Some(""));
                if let Some(value) = value {
                    state_clocks.add(format!("{session}\u{0}{field}\u{0}{clock}"), i, value);
                }
            }
        }
        for (session, revision, action) in projections(&s.call, &s.args) {
            projection_inputs
                .entry(session.clone())
                .or_default()
                .insert(i);
            match revision {
                Some(r) if !r.is_null() => {
                    revisions.add(format!("{session}\u{0}{r}"), i, &action);
                }
                _ => {
                    unrevised.insert(session);
                }
            }
        }
    }
    for i in row_clocks.conflicting().collect::<Vec<_>>() {
        pin(&mut pinned, i, why::ROW);
    }
    for i in state_clocks.conflicting().collect::<Vec<_>>() {
        pin(&mut pinned, i, why::STATE);
    }
    for i in revisions.conflicting().collect::<Vec<_>>() {
        pin(&mut pinned, i, why::PROJECTION);
    }
    for session in &unrevised {
        for &i in projection_inputs.get(session).into_iter().flatten() {
            pin(&mut pinned, i, why::PROJECTION);
        }
    }

    // A delete and an add/update of the same id with a strictly newer revision: revival.
    let mut deletes: BTreeMap<String, Vec<(usize, Option<Revision>)>> = BTreeMap::new();
    let mut changes: BTreeMap<String, Vec<(usize, Option<Revision>)>> = BTreeMap::new();
    for (i, s) in steps.iter().enumerate() {
        for (kind, event) in events(&s.call, &s.args) {
            let key = format!(
                "{}\u{0}{}",
                text(&event, "session_id").unwrap_or_default(),
                text(&event, "message_id")
                    .or_else(|| text(&event, "id"))
                    .unwrap_or_default()
            );
            let revision = revision_of(event.get("pending_action_revision"));
            let list = if kind == "deleted" {
                &mut deletes
            } else {
                &mut changes
            };
            list.entry(key).or_default().push((i, revision));
        }
    }
    for (key, dels) in &deletes {
        for (c, revision) in changes.get(key).into_iter().flatten() {
            let newer = dels.iter().any(|(_, d)| match (d, revision) {
                (Some(d), Some(r)) => compare_revisions(d, r) == Ok(std::cmp::Ordering::Less),
                _ => false,
            });
            if newer {
                pin(&mut pinned, *c, why::REVIVAL);
                for (d, _) in dels {
                    pin(&mut pinned, *d, why::REVIVAL);
                }
            }
        }
    }

    // One session named with two tasks: every input that names the session with a task.
    let mut owners: BTreeMap<String, (BTreeSet<usize>, BTreeSet<String>)> = BTreeMap::new();
    for (i, s) in steps.iter().enumerate() {
        for (session, task) in session_tasks(&s.call, &s.args) {
            let entry = owners.entry(session).or_default();
            entry.0.insert(i);
            entry.1.insert(task);
        }
    }
    for (inputs, tasks) in owners.values() {
        if tasks.len() > 1 {
            for &i in inputs {
                pin(&mut pinned, i, why::OWNER);
            }
        }
    }

    // A pinned snapshot pins its begin, and the other way round.
    for (&b, &a) in &answered {
        let either = pinned
            .get(b)
            .copied()
            .flatten()
            .or(pinned.get(a).copied().flatten());
        if let Some(why) = either {
            pin(&mut pinned, b, why);
            pin(&mut pinned, a, why);
        }
    }

    let absorbed: BTreeSet<usize> = answered
        .iter()
        .filter(|(&b, _)| pinned.get(b).copied().flatten().is_none())
        .map(|(&b, _)| b)
        .collect();
    let inputs = steps
        .iter()
        .enumerate()
        .filter(|(i, _)| !absorbed.contains(i))
        .map(|(i, s)| {
            let why = pinned.get(i).copied().flatten();
            let arrival = match (s.call.as_str(), why) {
                ("beginTaskFetch", _) => Arrival::PinnedBegin,
                ("applyTaskSnapshot", Some(_)) => Arrival::PinnedApply,
                ("applyTaskSnapshot", None) => Arrival::Fetched,
                (_, Some(_)) => Arrival::Pinned,
                (_, None) => Arrival::Any,
            };
            Input {
                line: s.line,
                us: s.us,
                call: s.call.clone(),
                args: s.args.clone(),
                ticket: s.ticket.clone(),
                token: s.token,
                arrival,
                pinned: why,
            }
        })
        .collect();
    Plan { inputs }
}

impl Plan {
    pub fn arrivals(&self) -> Vec<Arrival> {
        self.inputs.iter().map(|i| i.arrival).collect()
    }

    /// Delivers `steps` to a fresh store through `engine`; `each` sees every input the engine
    /// accepted (the call, its arguments as delivered, what it gave back). The indices of the
    /// steps the engine refused, with the error.
    pub fn deliver<E: Engine + ?Sized>(
        &self,
        engine: &E,
        steps: &[Step],
        mut each: impl FnMut(&Store, &Input, &str, &[Value], &Applied),
    ) -> (Store, Vec<(usize, String)>) {
        let mut store = Store::new();
        let mut copies: HashMap<usize, u64> = HashMap::new();
        let mut tokens: HashMap<u64, u64> = HashMap::new();
        let mut refused = Vec::new();
        for (n, step) in steps.iter().enumerate() {
            let Some(input) = self.inputs.get(step.input) else {
                continue;
            };
            let mapped;
            let (call, args): (&str, &[Value]) = match input.arrival {
                Arrival::Fetched if step.begin => ("beginTaskFetch", &[]),
                Arrival::Fetched | Arrival::PinnedApply => {
                    let token = match input.arrival {
                        Arrival::Fetched => step.copy.and_then(|c| copies.remove(&c)),
                        _ => token_of(input.args.first()).and_then(|t| tokens.remove(&t)),
                    };
                    let mut args = input.args.clone();
                    if let (Some(token), Some(first)) = (token, args.first_mut()) {
                        *first = Value::from(token);
                    }
                    mapped = args;
                    (input.call.as_str(), mapped.as_slice())
                }
                _ => (input.call.as_str(), input.args.as_slice()),
            };
            match engine.apply(&mut store, call, args, input.ticket.as_deref()) {
                Ok(applied) => {
                    if let Some(token) = applied.token {
                        match (input.arrival, step.copy, input.token) {
                            (Arrival::Fetched, Some(c), _) => {
                                copies.insert(c, token);
                            }
                            (_, _, Some(recorded)) => {
                                tokens.insert(recorded, token);
                            }
                            _ => {}
                        }
                    }
                    each(&store, input, call, args, &applied);
                }
                Err(e) => refused.push((n, e.to_string())),
            }
        }
        (store, refused)
    }

    /// The plan of the kept inputs only (indices renumbered), and `steps` renumbered to it.
    pub fn restricted(&self, kept: &[bool], steps: &[Step]) -> (Plan, Vec<Step>) {
        let mut index = vec![None; self.inputs.len()];
        let mut inputs = Vec::new();
        for (i, input) in self.inputs.iter().enumerate() {
            if kept.get(i) == Some(&true) {
                if let Some(slot) = index.get_mut(i) {
                    *slot = Some(inputs.len());
                }
                inputs.push(input.clone());
            }
        }
        let steps = steps
            .iter()
            .filter_map(|s| {
                index.get(s.input).copied().flatten().map(|input| Step {
                    input,
                    copy: s.copy,
                    begin: s.begin,
                })
            })
            .collect();
        (Plan { inputs }, steps)
    }

    /// Records a delivery as a trace (the inputs as delivered, this engine's answers).
    pub fn record<E: Engine + ?Sized>(&self, engine: &E, steps: &[Step]) -> String {
        let mut recorder = Recorder::new(usize::MAX, &Store::new());
        let (_, _) = self.deliver(engine, steps, |store, input, call, args, applied| {
            #[allow(clippy::cast_precision_loss)]
            let ms = input.us as f64 / 1000.0;
            // Every delivered call is a recordable one (it came from a trace).
            let _ = note(&mut recorder, store, ms, call, args, applied);
        });
        recorder.text()
    }
}

// ---- answers --------------------------------------------------------------------------------

/// A session's or a task's answers (docs/trace-format.md, "answers").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Subject {
    Session,
    Task,
}

impl Subject {
    pub fn name(self) -> &'static str {
        match self {
            Subject::Session => "session",
            Subject::Task => "task",
        }
    }
}

/// The ids answered: `(subject, id)`.
pub type Ids = BTreeSet<(Subject, String)>;

fn held(store: &Store, ids: &mut Ids) {
    ids.extend(
        store
            .session_ids()
            .map(|s| (Subject::Session, s.to_owned())),
    );
    ids.extend(store.task_ids().map(|t| (Subject::Task, t.to_owned())));
}

/// The answers about `id` as a trace writes them (JSON text).
pub fn answers(store: &Store, subject: Subject, id: &str) -> String {
    match subject {
        Subject::Session => session_answers(store, id),
        Subject::Task => task_answers(store, id),
    }
}

/// A final answer that differs from the recorded order's.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub subject: Subject,
    pub id: String,
    /// In the recorded order.
    pub recorded: Value,
    /// In the reordered delivery.
    pub reordered: Value,
}

impl Difference {
    /// The answers (and reasons) that differ: `(name, recorded, reordered)`.
    pub fn fields(&self) -> Vec<(String, Value, Value)> {
        let keys: BTreeSet<&String> = [&self.recorded, &self.reordered]
            .iter()
            .filter_map(|v| v.as_object())
            .flat_map(|o| o.keys())
            .collect();
        keys.into_iter()
            .filter_map(|k| {
                let a = self.recorded.get(k).cloned().unwrap_or(Value::Null);
                let b = self.reordered.get(k).cloned().unwrap_or(Value::Null);
                (a != b).then(|| (k.clone(), a, b))
            })
            .collect()
    }
}

/// The recorded order's final state: the reference every delivery is compared with.
pub struct Reference {
    store: Store,
    /// Every id the recorded order's store held at some point.
    ids: Ids,
    /// Their final answers.
    answers: BTreeMap<(Subject, String), String>,
    /// Inputs the engine refused in recorded order.
    pub refused: Vec<(usize, String)>,
}

impl Reference {
    /// Replays `plan` in recorded order through `engine`.
    pub fn new<E: Engine + ?Sized>(plan: &Plan, engine: &E) -> Reference {
        let mut ids = Ids::new();
        let mut version = u64::MAX;
        let (store, refused) =
            plan.deliver(engine, &in_order(&plan.arrivals()), |store, _, _, _, _| {
                if store.version() != version {
                    version = store.version();
                    held(store, &mut ids);
                }
            });
        held(&store, &mut ids);
        let answers = ids
            .iter()
            .map(|(s, id)| ((*s, id.clone()), answers(&store, *s, id)))
            .collect();
        Reference {
            store,
            ids,
            answers,
            refused,
        }
    }

    /// The final answers of `store` that differ from the reference's, over every id either
    /// store held (and every id the recorded order held on the way).
    pub fn differences(&self, store: &Store) -> Vec<Difference> {
        let mut extra = Ids::new();
        held(store, &mut extra);
        let mut out = Vec::new();
        for key in self.ids.iter().chain(extra.difference(&self.ids)) {
            let (subject, id) = key;
            let now = answers(store, *subject, id);
            let before = match self.answers.get(key) {
                Some(a) => a.clone(),
                None => answers(&self.store, *subject, id),
            };
            if now != before {
                out.push(Difference {
                    subject: *subject,
                    id: id.clone(),
                    recorded: serde_json::from_str(&before).unwrap_or(Value::Null),
                    reordered: serde_json::from_str(&now).unwrap_or(Value::Null),
                });
            }
        }
        out
    }
}

// ---- the explorer -----------------------------------------------------------------------------

/// A final answer some order changed, with the smallest delivery found that changes it.
#[derive(Clone, Debug)]
pub struct Race {
    /// The first order (0-based) that changed it.
    pub order: u64,
    /// The difference the shrunk delivery gives (recorded order vs reordered).
    pub difference: Difference,
    /// The inputs of the shrunk delivery (their lines in the trace), in recorded order.
    pub lines: Vec<usize>,
    /// The shrunk delivery: steps over [`Race::plan`].
    pub steps: Vec<Step>,
    pub plan: Plan,
    /// The shrunk delivery as a trace (replays with `task-projection-replay`).
    pub trace: String,
    /// The same inputs in recorded order, as a trace.
    pub in_order: String,
}

/// What [`explore`] found.
#[derive(Clone, Debug)]
pub struct Report {
    pub seed: u64,
    pub orders: u64,
    pub inputs: usize,
    /// Inputs delivered once in recorded order relative to each other.
    pub pinned: usize,
    /// Steps delivered over all orders.
    pub steps: u64,
    /// Orders whose final answers differ from the recorded order's.
    pub differing_orders: u64,
    /// Inputs the engine refused over all orders (a refused input changes nothing; a delivery
    /// the network can produce should have none).
    pub refused: u64,
    /// One per differing final answer (subject, id), in the order found.
    pub races: Vec<Race>,
}

/// Delivers `trace`'s inputs in `orders` random orders (seeded by `seed`) through `engine`, and
/// reports the final answers that differ from the recorded order's, each with its shrunk
/// delivery.
pub fn explore<E: Engine + ?Sized>(trace: &Trace, orders: u64, seed: u64, engine: &E) -> Report {
    explore_plan(&plan(trace), orders, seed, engine)
}

/// [`explore`] over a [`Plan`] (a test can change how its inputs may arrive).
pub fn explore_plan<E: Engine + ?Sized>(plan: &Plan, orders: u64, seed: u64, engine: &E) -> Report {
    let arrivals = plan.arrivals();
    let reference = Reference::new(plan, engine);
    let mut report = Report {
        seed,
        orders,
        inputs: plan.inputs.len(),
        pinned: arrivals.iter().filter(|a| a.pinned()).count(),
        steps: 0,
        differing_orders: 0,
        refused: 0,
        races: Vec::new(),
    };
    let mut first: BTreeMap<(Subject, String), (u64, Vec<Step>)> = BTreeMap::new();
    let mut found: Vec<(Subject, String)> = Vec::new();
    for n in 0..orders {
        let s = order_seed(seed, n);
        let steps = shuffled(&arrivals, s, &duplicates(s, arrivals.len()));
        report.steps = report.steps.saturating_add(steps.len() as u64);
        let (store, refused) = plan.deliver(engine, &steps, |_, _, _, _, _| {});
        report.refused = report.refused.saturating_add(refused.len() as u64);
        let differences = reference.differences(&store);
        if !differences.is_empty() {
            report.differing_orders = report.differing_orders.saturating_add(1);
        }
        for d in differences {
            let key = (d.subject, d.id);
            if let std::collections::btree_map::Entry::Vacant(e) = first.entry(key) {
                found.push(e.key().clone());
                e.insert((n, steps.clone()));
            }
        }
    }
    for key in found {
        let Some((order, steps)) = first.remove(&key) else {
            continue;
        };
        if let Some(race) = shrink_race(plan, &arrivals, &steps, &key, engine) {
            report.races.push(Race { order, ..race });
        }
    }
    report
}

/// The smallest delivery found that still changes `key`'s final answers.
fn shrink_race<E: Engine + ?Sized>(
    plan: &Plan,
    arrivals: &[Arrival],
    steps: &[Step],
    key: &(Subject, String),
    engine: &E,
) -> Option<Race> {
    let fails = |kept: &[bool], steps: &[Step]| -> Option<Difference> {
        let (small, small_steps) = plan.restricted(kept, steps);
        let reference = Reference::new(&small, engine);
        if !reference.refused.is_empty() {
            return None;
        }
        let (store, refused) = small.deliver(engine, &small_steps, |_, _, _, _, _| {});
        if !refused.is_empty() {
            return None;
        }
        reference
            .differences(&store)
            .into_iter()
            .find(|d| d.subject == key.0 && d.id == key.1)
    };
    let (kept, steps, difference) = shrink(arrivals, steps, fails)?;
    let (small, small_steps) = plan.restricted(&kept, &steps);
    let lines = small.inputs.iter().map(|i| i.line).collect();
    Some(Race {
        order: 0,
        difference,
        lines,
        trace: small.record(engine, &small_steps),
        in_order: small.record(engine, &in_order(&small.arrivals())),
        steps: small_steps,
        plan: small,
    })
}

/// The final answers of a trace's lines applied in their order (a reproducer replayed): for each
/// id the store held, its answers as a trace writes them.
pub fn final_answers<E: Engine + ?Sized>(
    trace: &Trace,
    engine: &E,
) -> BTreeMap<(Subject, String), Value> {
    let plan = Plan {
        inputs: trace
            .steps
            .iter()
            .map(|s| Input {
                line: s.line,
                us: s.us,
                call: s.call.clone(),
                args: s.args.clone(),
                ticket: s.ticket.clone(),
                token: s.token,
                arrival: match s.call.as_str() {
                    "beginTaskFetch" => Arrival::PinnedBegin,
                    "applyTaskSnapshot" => Arrival::PinnedApply,
                    _ => Arrival::Pinned,
                },
                pinned: None,
            })
            .collect(),
    };
    let reference = Reference::new(&plan, engine);
    reference
        .answers
        .into_iter()
        .map(|(k, a)| (k, serde_json::from_str(&a).unwrap_or(Value::Null)))
        .collect()
}
