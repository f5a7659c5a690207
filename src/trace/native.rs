//! Traces over `serde_json` values: one input applied by name ([`apply`]), recorded ([`record`]),
//! and a trace's text parsed ([`parse`]) and replayed ([`replay`]).

use serde_json::{json, Value};

use super::{Recorder, Step, FORMAT, VERSION};
use crate::store::{Navigation, ProjectionStore, Reason};
use crate::wire::store_api::{self as api, Outcome};
use crate::wire::Json;

/// What an applied input gave back besides the state change.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    /// The input's reason (`lastApplyReason()`), when it has one.
    pub reason: Option<Reason>,
    /// `beginTaskFetch`'s token.
    pub token: Option<u64>,
    /// `beginSelection`'s `{ ticket, reload }`.
    pub ticket: Option<(String, bool)>,
    /// `settleSelection`'s navigation.
    pub navigation: Option<Navigation>,
}

impl Applied {
    fn none() -> Applied {
        Applied {
            reason: None,
            token: None,
            ticket: None,
            navigation: None,
        }
    }

    /// The result as `settleSelection` / `beginSelection` / `beginTaskFetch` return it (`null`
    /// for the others).
    pub fn result(&self) -> Value {
        if let Some(token) = self.token {
            return json!(token);
        }
        if let Some((ticket, reload)) = &self.ticket {
            return json!({"ticket": ticket, "reload": reload});
        }
        match &self.navigation {
            Some(Navigation::Session(id)) => json!({"kind": "session", "sessionId": id}),
            Some(Navigation::TaskOnly) => json!({"kind": "task_only"}),
            Some(Navigation::Inert) => json!({"kind": "inert"}),
            None => Value::Null,
        }
    }
}

/// Why an input could not be applied: the dispatcher's error (`wire::store_api::CallError`,
/// the same variants `Wire` and `UnknownCall`).
pub use crate::wire::store_api::CallError as ApplyError;

fn summary_payload(json: Json<'_>) -> Value {
    json.0.cloned().unwrap_or(Value::Null)
}

/// Applies one input, `call(...args)` of the public API (a trace line's `call` and `args`),
/// through the one dispatcher from names to store calls ([`api::dispatch`]). Only the
/// recordable calls (the trace's [`schema`](super::schema)s); any other is
/// [`ApplyError::UnknownCall`]. `ticket` is the ticket a `beginSelection` gets (a fresh one when
/// `None`).
pub fn apply(
    store: &mut ProjectionStore<Value>,
    call: &str,
    args: &[Value],
    ticket: Option<&str>,
) -> Result<Applied, ApplyError> {
    if super::schema(call).is_none() {
        return Err(ApplyError::UnknownCall(call.to_owned()));
    }
    let ticket = || ticket.map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
    let outcome = api::dispatch(store, call, |i| Json(args.get(i)), summary_payload, ticket)?;
    let mut applied = Applied::none();
    applied.reason = outcome.reason();
    match outcome {
        Outcome::Token(token) => applied.token = Some(token),
        Outcome::Selection(begun) => applied.ticket = Some((begun.ticket, begun.reload)),
        Outcome::Settled(navigation, _) => applied.navigation = Some(navigation),
        // Not recordable yet (no schema): `schema(call)` refused them above.
        Outcome::Applied(_)
        | Outcome::Done
        | Outcome::Answer(..)
        | Outcome::Started(_)
        | Outcome::Replied(_) => {}
    }
    Ok(applied)
}

/// The line of an applied input (its results written as `js/trace.js` writes them).
fn step_of(
    recorder: &mut Recorder,
    time_ms: f64,
    call: &str,
    args: &[Value],
    applied: &Applied,
) -> Result<Step, ApplyError> {
    let args: Vec<Json<'_>> = args.iter().map(Json::new).collect();
    let mut step = recorder
        .begin(time_ms, call)
        .ok_or_else(|| ApplyError::UnknownCall(call.to_owned()))?
        .args(&args);
    if let Some(token) = applied.token {
        step = step.number("token", token);
    }
    if let Some((ticket, reload)) = &applied.ticket {
        step = step.text("ticket", ticket).flag("reload", *reload);
    }
    if let Some(navigation) = &applied.navigation {
        step = step.navigation(navigation);
    }
    Ok(step)
}

/// [`apply`], then the input recorded at `time_ms` when the store accepted it (a refused input is
/// not recorded: it changed nothing). Its arguments are written by the call's [`schema`](super::schema): what
/// the decoders read.
pub fn record(
    recorder: &mut Recorder,
    store: &mut ProjectionStore<Value>,
    time_ms: f64,
    call: &str,
    args: &[Value],
) -> Result<Applied, ApplyError> {
    let applied = apply(store, call, args, None)?;
    note(recorder, store, time_ms, call, args, &applied)?;
    Ok(applied)
}

/// Records an input `call(...args)` already applied to `store` (what [`apply`] returned): several
/// recorders can record one store.
pub fn note(
    recorder: &mut Recorder,
    store: &ProjectionStore<Value>,
    time_ms: f64,
    call: &str,
    args: &[Value],
    applied: &Applied,
) -> Result<(), ApplyError> {
    let step = step_of(recorder, time_ms, call, args, applied)?;
    recorder.finish(step, store, applied.reason);
    Ok(())
}

// ---- parse ------------------------------------------------------------------------------------

/// A trace that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct TraceError {
    /// 1-based line number in the trace text.
    pub line: usize,
    pub problem: String,
}

/// A parsed trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// The header line.
    pub header: Value,
    /// Whether the recording started on an empty store.
    pub fresh: bool,
    /// Lines the ring dropped (the oldest).
    pub dropped: u64,
    pub steps: Vec<TraceStep>,
}

impl Trace {
    /// Whether a replay from an empty store must give the recorded answers: the recording
    /// started on an empty store and no line was dropped.
    pub fn complete(&self) -> bool {
        self.fresh && self.dropped == 0
    }
}

/// One input line.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceStep {
    /// 1-based line number in the trace text.
    pub line: usize,
    pub step: u64,
    /// Monotonic microseconds.
    pub us: u64,
    pub call: String,
    pub args: Vec<Value>,
    /// `beginSelection`'s recorded ticket (a replay gives its selection the same one).
    pub ticket: Option<String>,
    /// `beginTaskFetch`'s recorded token (the explorer maps a snapshot's recorded token to the
    /// one its delivered begin got).
    pub token: Option<u64>,
    /// The reason recorded.
    pub reason: Option<String>,
    /// The answers the input changed, as recorded.
    pub answers: Value,
}

fn problem(line: usize, problem: impl Into<String>) -> TraceError {
    TraceError {
        line,
        problem: problem.into(),
    }
}

/// Parses a trace's text (docs/trace-format.md). Blank lines are skipped.
pub fn parse(text: &str) -> Result<Trace, TraceError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i.saturating_add(1), l))
        .filter(|(_, l)| !l.trim().is_empty());
    let (n, first) = lines
        .next()
        .ok_or_else(|| problem(1, "empty trace: no header line"))?;
    let header: Value =
        serde_json::from_str(first).map_err(|e| problem(n, format!("header is not JSON: {e}")))?;
    if header.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(problem(n, format!("header: format is not \"{FORMAT}\"")));
    }
    match header.get("version").and_then(Value::as_u64) {
        Some(VERSION) => {}
        other => {
            return Err(problem(
                n,
                format!("header: version {other:?} is not supported (this engine reads {VERSION})"),
            ))
        }
    }
    let fresh = header
        .get("fresh")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let dropped = header.get("dropped").and_then(Value::as_u64).unwrap_or(0);
    let mut steps = Vec::new();
    for (n, text) in lines {
        let line: Value =
            serde_json::from_str(text).map_err(|e| problem(n, format!("not JSON: {e}")))?;
        let field = |key: &str| line.get(key);
        let call = field("call")
            .and_then(Value::as_str)
            .ok_or_else(|| problem(n, "no \"call\" (a string)"))?;
        let args = match field("args") {
            None => Vec::new(),
            Some(Value::Array(args)) => args.clone(),
            Some(_) => return Err(problem(n, "\"args\" is not an array")),
        };
        steps.push(TraceStep {
            line: n,
            step: field("step").and_then(Value::as_u64).unwrap_or(0),
            us: field("us").and_then(Value::as_u64).unwrap_or(0),
            call: call.to_owned(),
            args,
            ticket: field("ticket").and_then(Value::as_str).map(str::to_owned),
            token: field("token").and_then(|t| match t {
                Value::String(s) => s.parse().ok(),
                other => other.as_u64(),
            }),
            reason: field("reason").and_then(Value::as_str).map(str::to_owned),
            answers: field("answers")
                .cloned()
                .ok_or_else(|| problem(n, "no \"answers\""))?,
        });
    }
    Ok(Trace {
        header,
        fresh,
        dropped,
        steps,
    })
}

// ---- replay -----------------------------------------------------------------------------------

/// One replayed input: what this engine answers, and what the trace recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct Replayed {
    pub line: usize,
    pub step: u64,
    pub us: u64,
    pub call: String,
    pub args: Vec<Value>,
    /// The reason this engine gives (`None` for calls without one, or when refused).
    pub reason: Option<String>,
    /// The result this engine returns (`Applied::result`).
    pub result: Value,
    /// The answers the input changed, replayed.
    pub answers: Value,
    /// The answers the input changed, recorded.
    pub recorded: Value,
    pub recorded_reason: Option<String>,
    /// The typed error when this engine refuses the input.
    pub error: Option<String>,
}

impl Replayed {
    /// Whether the replay agrees with the recording: same answers, same reason.
    pub fn same(&self) -> bool {
        self.error.is_none() && self.answers == self.recorded && self.reason == self.recorded_reason
    }
}

/// Replays `trace` on an empty store, each line through the public API ([`apply`]), with the
/// answers computed as the recorder computes them. A line the store refuses is reported in its
/// step (`error`) and the replay goes on.
pub fn replay(trace: &Trace) -> Vec<Replayed> {
    let mut store = ProjectionStore::<Value>::new();
    let mut recorder = Recorder::new(usize::MAX, &store);
    trace
        .steps
        .iter()
        .map(|step| {
            let mut replayed = Replayed {
                line: step.line,
                step: step.step,
                us: step.us,
                call: step.call.clone(),
                args: step.args.clone(),
                reason: None,
                result: Value::Null,
                answers: json!({}),
                recorded: step.answers.clone(),
                recorded_reason: step.reason.clone(),
                error: None,
            };
            match apply(&mut store, &step.call, &step.args, step.ticket.as_deref()) {
                Ok(applied) => {
                    #[allow(clippy::cast_precision_loss)]
                    let ms = step.us as f64 / 1000.0;
                    match step_of(&mut recorder, ms, &step.call, &step.args, &applied) {
                        Ok(s) => {
                            let line = recorder.line(s, &store, applied.reason);
                            let line: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                            replayed.answers = line.get("answers").cloned().unwrap_or(Value::Null);
                            replayed.reason = applied.reason.map(|r| r.code().to_owned());
                            replayed.result = applied.result();
                        }
                        Err(error) => replayed.error = Some(error.to_string()),
                    }
                }
                Err(error) => replayed.error = Some(error.to_string()),
            }
            replayed
        })
        .collect()
}
