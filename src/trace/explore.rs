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
//! [`Arrival::Pinned`]: delivered once, in their recorded order relative to each other
//! ([`plan`](plan()) says which and why), so what the explorer reports is a break of the
//! contract, not one of its exceptions.
//!
//! The engine is a parameter ([`Engine`]: one input applied to a store), so a test can run the
//! explorer against a deliberately broken one and see it find the race (`tests/trace_explore.rs`).
//! Native only, deciding nothing: every answer is the store's, through the public API.
//!
//! Submodules, one concern each:
//! - `delivery`: the delivery model ([`Arrival`], [`Step`], [`in_order`], [`shuffled`], ...).
//! - `carried`: what an input's arguments carry (rows, events, sessions, tasks), from wire JSON.
//! - `plan`: a trace's inputs and how each may arrive ([`plan`](plan()), [`Plan`], [`why`]).
//! - this file: the [`Engine`], the answers compared with the recorded order's ([`Reference`]),
//!   and [`explore`] with the shrunk [`Race`]s.

mod carried;
mod delivery;
mod plan;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::native::{apply, Applied, ApplyError, Trace};
use super::{session_answers, task_answers};
use crate::store::ProjectionStore;

pub use delivery::{duplicates, in_order, order_seed, shrink, shuffled, Arrival, Lcg, Step};
pub use plan::{plan, why, Input, Plan};

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
        let steps = plan.after_last_respond(shuffled(&arrivals, s, &duplicates(s, arrivals.len())));
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
