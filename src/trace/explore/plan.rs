//! A trace's inputs as the explorer delivers them ([`Plan`]): which may arrive anywhere, which
//! are fetched snapshots and which are pinned and why ([`plan`], [`why`]); a plan delivered to a
//! fresh store through an engine, restricted to some inputs, or recorded as a trace.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::carried::{
    events, projections, revision_of, row_content, rows, session_tasks, sessions, tasks, text,
    token_of,
};
use super::delivery::{Arrival, Step};
use super::{Engine, Store};
use crate::rules::model::Revision;
use crate::rules::revision::compare_revisions;
use crate::trace::native::{note, Applied, Trace};
use crate::trace::Recorder;

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
    /// `beginSelection`, `settleSelection`, `setActiveTask`, `respondStart`, `respondReply`,
    /// `removeSession`: the user's actions (and their replies), in the order the user made them.
    pub const CLIENT: &str = "a client action (selection, active task, a respond, a delete)";
    /// An input recorded before the user's respond: what the user saw when answering.
    pub const SAW: &str = "an input the user saw before answering (recorded before a respond)";
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
            "beginSelection" | "settleSelection" | "setActiveTask" | "respondStart"
            | "respondReply" | "removeSession" => Some(why::CLIENT),
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

    // The user answered what the page showed: every input recorded before the last respond's
    // start keeps its recorded order (an answer to a question not yet delivered is not one the
    // user could give).
    if let Some(last) = steps.iter().rposition(|s| s.call == "respondStart") {
        for i in 0..last {
            pin(&mut pinned, i, why::SAW);
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
    /// `steps` with every step of an input recorded after the last `respondStart` that the
    /// shuffle put before that start moved to right after it, in the order it had: the user
    /// clicked on what the page showed then, so nothing recorded later reached the store before
    /// the click (else the start would be refused: the question already gone).
    pub fn after_last_respond(&self, steps: Vec<Step>) -> Vec<Step> {
        let Some(last) = self.inputs.iter().rposition(|s| s.call == "respondStart") else {
            return steps;
        };
        let Some(at) = steps.iter().position(|s| s.input == last) else {
            return steps;
        };
        let (mut early, mut kept): (Vec<Step>, Vec<Step>) = (Vec::new(), Vec::new());
        for (k, step) in steps.into_iter().enumerate() {
            if k < at && step.input > last {
                early.push(step);
            } else {
                kept.push(step);
            }
        }
        let start = at.saturating_sub(early.len());
        let tail = kept.split_off(start.saturating_add(1).min(kept.len()));
        kept.extend(early);
        kept.extend(tail);
        kept
    }

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

#[cfg(test)]
mod respond_order_tests {
    use super::*;

    fn input(call: &str) -> Input {
        Input {
            line: 0,
            us: 0,
            call: call.into(),
            args: Vec::new(),
            ticket: None,
            token: None,
            arrival: Arrival::Any,
            pinned: None,
        }
    }

    fn one(input: usize) -> Step {
        Step {
            input,
            copy: None,
            begin: false,
        }
    }

    #[test]
    fn nothing_recorded_after_the_last_start_is_delivered_before_it() {
        // 0: data, 1: respondStart, 2: data, 3: respondReply, 4: data.
        let plan = Plan {
            inputs: [
                "applyMessageEvent",
                "respondStart",
                "applySessionEvent",
                "respondReply",
                "applyFrame",
            ]
            .into_iter()
            .map(input)
            .collect(),
        };
        let order = |v: &[usize]| v.iter().map(|&i| one(i)).collect::<Vec<_>>();
        let inputs = |s: Vec<Step>| s.into_iter().map(|s| s.input).collect::<Vec<_>>();
        assert_eq!(
            inputs(plan.after_last_respond(order(&[4, 0, 2, 1, 3]))),
            [0, 1, 4, 2, 3]
        );
        // Already after it: unchanged; no start: unchanged.
        assert_eq!(
            inputs(plan.after_last_respond(order(&[0, 1, 3, 2, 4]))),
            [0, 1, 3, 2, 4]
        );
        let none = Plan {
            inputs: plan
                .inputs
                .iter()
                .filter(|i| i.call != "respondStart")
                .cloned()
                .collect(),
        };
        assert_eq!(
            inputs(none.after_last_respond(order(&[3, 0, 1, 2]))),
            [3, 0, 1, 2]
        );
    }
}
