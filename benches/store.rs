//! Native benchmark of the `ProjectionStore` (criterion): `cargo bench --bench store`, or
//! `npm run bench`, which also runs the wasm benchmarks in Node and Chromium and prints one table.
//!
//! Inputs are the files `bench/gen.mjs` writes (target/bench-data/, generated on demand), so the
//! native, Node and Chromium runs measure the same sessions, events and snapshot bytes.
//!
//! - `event/store_wire/<n>`: one WebSocket message event on a session of `n` messages, decoded
//!   from `serde_json::Value` (`wire::store_api::apply_message_event`), plus the session's pending
//!   action and active bundle (`session_pending_action`, `pending_clarification`).
//! - `event/store_json_text/<n>`: the same from the payload's JSON text (`serde_json` parse
//!   first): the Rust side of a "pass a JSON string" input path.
//! - `event/store_typed/<n>`: the same with the event decoded beforehand (the store alone).
//! - `event/stateless/<n>`: the same answers by rescanning the transcript with the pure
//!   functions of `wire::api` (`current_turn_id`, `session_pending_action`,
//!   `pending_clarification_bundle`), as the JS app would without the store.
//! - `boot/json_parse`, `boot/parse_and_ingest`, `boot/ingest`: the ~30 MB boot snapshot
//!   (throughput in bytes of JSON text).
//! - `scale/visible_turn_history/<n>`: `wire::api::visible_turn_history` over `n` = 10⁶ turns in
//!   no particular order (decode + the rule); `scale/apply_session_list/<n>`: 10⁶ sessions into a
//!   fresh store (`wire::store_api::apply_session_list`); `scale/apply_session_list_merge/<n>`:
//!   an older list (the oldest half) onto a store holding all 10⁶ (the held list ends with it:
//!   `merge_distinct_session_list`'s shortcut, each session's fields still merged). The `_tape`
//!   variants decode the tape `js/read.js` writes (`wire::tape::Writer` here) instead of a
//!   `serde_json::Value`: the wasm's path. Ten one-shot samples each; the inputs are generated
//!   here by the formulas of `scaleTurns` / `scaleSessions` in bench/workload.mjs (the same
//!   objects the Node bench passes). `BENCH_ONLY=scale` runs only these (`SCALE_N` another size).
//!
//! A pass of events is replayed after deleting the messages it added (untimed), so the session
//! holds `n` messages at the start of every pass; revision sequences are renumbered per pass.

use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path as FsPath, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use serde_json::{json, Value};
use task_projection::store::{MessageEvent, MessageEventKind, ProjectionStore};
use task_projection::wire::tape::Writer;
use task_projection::wire::{api, events, store_api, Json, Path};

const SIZES: [usize; 4] = [100, 1000, 5000, 50000];

fn data_dir() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::var_os("BENCH_DATA")
        .map_or_else(|| root.join("target/bench-data"), PathBuf::from);
    if !dir.join("snapshot.json").exists() {
        let status = Command::new("node")
            .arg(root.join("bench/gen.mjs"))
            .arg(&dir)
            .status();
        assert!(
            status.is_ok_and(|s| s.success()),
            "node bench/gen.mjs failed: the bench needs Node to generate its inputs"
        );
    }
    dir
}

fn read_json(path: &FsPath) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

/// One size: the preloaded history and one pass of events.
struct Workload {
    task_id: String,
    session_id: String,
    session: Value,
    turns: Value,
    messages: Value,
    /// `(kind, payload)` as wire values.
    events: Vec<(Value, Value)>,
    added: Vec<String>,
    revisioned: Vec<usize>,
    stateless_events: usize,
}

impl Workload {
    fn load(dir: &FsPath, n: usize) -> Workload {
        let data = read_json(&dir.join(format!("events-{n}.json")));
        let history = &data["history"];
        let pass = &data["pass"];
        let events = pass["events"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| (e["kind"].clone(), e["payload"].clone()))
                    .collect()
            })
            .unwrap_or_default();
        let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
        Workload {
            task_id: text(&history["taskId"]),
            session_id: text(&history["session"]["id"]),
            session: history["session"].clone(),
            turns: history["turns"].clone(),
            messages: history["messages"].clone(),
            events,
            added: list(&pass["added"]).iter().map(text).collect(),
            revisioned: list(&pass["revisioned"])
                .iter()
                .filter_map(|v| v.as_u64().and_then(|i| usize::try_from(i).ok()))
                .collect(),
            stateless_events: data["statelessEvents"]
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .unwrap_or(1),
        }
    }

    fn preloaded(&self) -> ProjectionStore<Value> {
        let mut store = ProjectionStore::new();
        let task = json!(self.task_id);
        let session = json!(self.session_id);
        let sessions = json!([self.session]);
        store_api::apply_session_list(&mut store, &Json::new(&task), &Json::new(&sessions))
            .expect("session list");
        store_api::apply_turn_list(&mut store, &Json::new(&session), &Json::new(&self.turns))
            .expect("turn list");
        store_api::apply_message_page(&mut store, &Json::new(&session), &Json::new(&self.messages))
            .expect("messages");
        store
    }

    /// The deletes of the pass's added rows as replay `replay` named them ([`replay_id`]).
    fn deletes(&self, replay: u32) -> Vec<MessageEvent> {
        self.added
            .iter()
            .map(|id| {
                let payload =
                    json!({ "message_id": replay_id(replay, id), "session_id": self.session_id });
                events::message_event(&Json::new(&payload), &Path::Root("payload"))
                    .expect("delete event")
            })
            .collect()
    }
}

/// Renumbers the revision sequences of a pass from `next` on; returns the next free sequence.
/// A message id as replay `replay` of a pass names it: a replay-numbered first id segment. Each
/// replay needs fresh ids: the previous replay's rows were deleted (untimed), and the store keeps
/// a deleted id deleted for every input not newer than the delete (docs/convergence.md), so
/// re-adding the same ids would measure ignored adds instead of inserts.
fn replay_id(replay: u32, id: &str) -> String {
    format!(
        "{:08x}{}",
        0xa000_0000_u32.wrapping_add(replay),
        id.get(8..).unwrap_or(id)
    )
}

/// Names the pass's rows for replay `replay` (`originals`: the pass as generated).
fn rename(events: &mut [(Value, Value)], originals: &[(Value, Value)], replay: u32) {
    for ((_, payload), (_, original)) in events.iter_mut().zip(originals) {
        if let Some(id) = original["message_id"].as_str() {
            payload["message_id"] = json!(replay_id(replay, id));
        }
    }
}

fn renumber(events: &mut [(Value, Value)], revisioned: &[usize], mut next: u64) -> u64 {
    for &i in revisioned {
        if let Some((_, payload)) = events.get_mut(i) {
            payload["pending_action_revision"] = json!({ "epoch": "1", "sequence": next });
            next += 1;
        }
    }
    next
}

fn bench_events(c: &mut Criterion, dir: &FsPath) {
    let mut group = c.benchmark_group("event");
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(1));
    group.sample_size(30);
    for n in SIZES {
        let w = Workload::load(dir, n);
        let sid = w.session_id.clone();
        let mut replay = 0u32;
        group.throughput(Throughput::Elements(1));

        // Decoded from serde_json::Value, as a native caller of the wire API would.
        {
            let mut store = w.preloaded();
            let mut events = w.events.clone();
            let mut sequence = 2000;
            let pass_len = events.len();
            group.bench_function(BenchmarkId::new("store_wire", n), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut left = iters;
                    while left > 0 {
                        let take = usize::try_from(left).unwrap_or(usize::MAX).min(pass_len);
                        sequence = renumber(&mut events, &w.revisioned, sequence);
                        replay += 1;
                        rename(&mut events, &w.events, replay);
                        let deletes = w.deletes(replay);
                        let start = Instant::now();
                        for (kind, payload) in events.iter().take(take) {
                            let reason = store_api::apply_message_event(
                                &mut store,
                                &Json::new(kind),
                                &Json::new(payload),
                            );
                            black_box(reason.is_ok());
                            black_box(store.session_pending_action(&sid));
                            black_box(store.pending_clarification(&sid));
                        }
                        total += start.elapsed();
                        for d in &deletes {
                            store.apply_message_event(MessageEventKind::Deleted, d);
                        }
                        left -= take as u64;
                    }
                    total
                });
            });
        }

        // From JSON text: what a "pass a JSON string" input path costs on the Rust side
        // (serde_json parse of the payload text + decode + apply + queries).
        {
            let mut store = w.preloaded();
            let mut events = w.events.clone();
            let mut sequence = 2000;
            let pass_len = events.len();
            group.bench_function(BenchmarkId::new("store_json_text", n), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut left = iters;
                    while left > 0 {
                        let take = usize::try_from(left).unwrap_or(usize::MAX).min(pass_len);
                        sequence = renumber(&mut events, &w.revisioned, sequence);
                        replay += 1;
                        rename(&mut events, &w.events, replay);
                        let deletes = w.deletes(replay);
                        let texts: Vec<(Value, String)> = events
                            .iter()
                            .map(|(kind, payload)| (kind.clone(), payload.to_string()))
                            .collect();
                        let start = Instant::now();
                        for (kind, text) in texts.iter().take(take) {
                            if let Ok(payload) = serde_json::from_str::<Value>(text) {
                                let reason = store_api::apply_message_event(
                                    &mut store,
                                    &Json::new(kind),
                                    &Json::new(&payload),
                                );
                                black_box(reason.is_ok());
                            }
                            black_box(store.session_pending_action(&sid));
                            black_box(store.pending_clarification(&sid));
                        }
                        total += start.elapsed();
                        for d in &deletes {
                            store.apply_message_event(MessageEventKind::Deleted, d);
                        }
                        left -= take as u64;
                    }
                    total
                });
            });
        }

        // Decoded beforehand: the store's own cost.
        {
            let mut store = w.preloaded();
            let mut typed: Vec<(MessageEventKind, MessageEvent)> = w
                .events
                .iter()
                .map(|(kind, payload)| {
                    (
                        events::message_event_kind(&Json::new(kind), &Path::Root("kind"))
                            .expect("kind"),
                        events::message_event(&Json::new(payload), &Path::Root("payload"))
                            .expect("event"),
                    )
                })
                .collect();
            let pass_len = typed.len();
            let mut sequence = 2000u64;
            let revisioned = w.revisioned.clone();
            group.bench_function(BenchmarkId::new("store_typed", n), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut left = iters;
                    while left > 0 {
                        let take = usize::try_from(left).unwrap_or(usize::MAX).min(pass_len);
                        for &i in &revisioned {
                            if let Some(revision) = typed
                                .get_mut(i)
                                .and_then(|(_, e)| e.projection.as_mut())
                                .and_then(|p| p.revision.as_mut())
                            {
                                revision.sequence = sequence;
                                sequence += 1;
                            }
                        }
                        replay += 1;
                        for ((_, event), (_, original)) in typed.iter_mut().zip(&w.events) {
                            if let Some(id) = original["message_id"].as_str() {
                                event.message.id = replay_id(replay, id);
                            }
                        }
                        let deletes = w.deletes(replay);
                        let start = Instant::now();
                        for (kind, event) in typed.iter().take(take) {
                            black_box(store.apply_message_event(*kind, event));
                            black_box(store.session_pending_action(&sid));
                            black_box(store.pending_clarification(&sid));
                        }
                        total += start.elapsed();
                        for d in &deletes {
                            store.apply_message_event(MessageEventKind::Deleted, d);
                        }
                        left -= take as u64;
                    }
                    total
                });
            });
        }

        // Stateless: the transcript held as wire values, every answer recomputed per event.
        {
            let mut state =
                json!({ "session": w.session, "turns": w.turns, "messages": w.messages });
            let mut events = w.events.clone();
            events.truncate(w.stateless_events);
            let revisioned: Vec<usize> = w
                .revisioned
                .iter()
                .copied()
                .filter(|&i| i < events.len())
                .collect();
            let mut sequence = 2000;
            let mut index: HashMap<String, usize> = w
                .messages
                .as_array()
                .map(|a| {
                    a.iter()
                        .enumerate()
                        .map(|(i, m)| (text(&m["id"]), i))
                        .collect()
                })
                .unwrap_or_default();
            let pass_len = events.len();
            group.sampling_mode(if n >= 5000 {
                SamplingMode::Flat
            } else {
                SamplingMode::Auto
            });
            if n >= 5000 {
                group.sample_size(10);
            }
            group.bench_function(BenchmarkId::new("stateless", n), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut left = iters;
                    while left > 0 {
                        let take = usize::try_from(left).unwrap_or(usize::MAX).min(pass_len);
                        sequence = renumber(&mut events, &revisioned, sequence);
                        let start = Instant::now();
                        for (_, payload) in events.iter().take(take) {
                            let id = text(&payload["message_id"]);
                            if let Some(messages) = state["messages"].as_array_mut() {
                                match index.get(&id) {
                                    Some(&at) => messages[at] = payload.clone(),
                                    None => {
                                        index.insert(id, messages.len());
                                        messages.push(payload.clone());
                                    }
                                }
                            }
                            if payload.get("pending_action").is_some() || payload.get("pending_action_revision").is_some() {
                                let merged = api::merge_pending_projection(&Json::new(&state["session"]), &Json::new(payload));
                                if let Ok(merged) = merged {
                                    if let Some(action) = merged.action {
                                        state["session"]["pending_action"] = json!(action.map(|a| a.as_str()));
                                    }
                                    if let Some(revision) = merged.revision {
                                        state["session"]["pending_action_revision"] =
                                            json!({ "epoch": revision.epoch, "sequence": revision.sequence });
                                    }
                                }
                            }
                            let current = api::current_turn_id(&Json::new(&state["turns"]), &Json::new(&state["session"]["state"]));
                            let current = current.ok().and_then(|c| c.turn());
                            let scope = json!({ "currentTurnId": current, "pendingAction": state["session"]["pending_action"] });
                            black_box(api::session_pending_action(&Json::new(&state)).ok());
                            black_box(api::pending_clarification_bundle(&Json::new(&state["messages"]), &Json::new(&scope)).ok());
                        }
                        total += start.elapsed();
                        if let Some(messages) = state["messages"].as_array_mut() {
                            for m in messages.drain(n..) {
                                index.remove(&text(&m["message_id"]));
                            }
                        }
                        left -= take as u64;
                    }
                    total
                });
            });
            group.sampling_mode(SamplingMode::Auto);
            group.sample_size(30);
        }
    }
    group.finish();
}

/// Feeds a parsed snapshot to a store through the wire API.
fn ingest(store: &mut ProjectionStore<Value>, snapshot: &Value) {
    let token = json!(store.begin_task_fetch());
    let tasks = &snapshot["tasks"];
    store_api::apply_task_snapshot(
        store,
        &Json::new(&token),
        &Json::new(tasks),
        |j: Json<'_>| j.0.cloned().unwrap_or(Value::Null),
    )
    .expect("task snapshot");
    for task in tasks.as_array().into_iter().flatten() {
        let task_id = &task["id"];
        let sessions = &snapshot["sessions"][text(task_id)];
        store_api::apply_session_list(store, &Json::new(task_id), &Json::new(sessions))
            .expect("session list");
        for session in sessions.as_array().into_iter().flatten() {
            let id = &session["id"];
            let key = text(id);
            store_api::apply_turn_list(store, &Json::new(id), &Json::new(&snapshot["turns"][&key]))
                .expect("turns");
            store_api::apply_message_page(
                store,
                &Json::new(id),
                &Json::new(&snapshot["messages"][&key]),
            )
            .expect("messages");
        }
    }
}

fn bench_boot(c: &mut Criterion, dir: &FsPath) {
    let path = dir.join("snapshot.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut group = c.benchmark_group("boot");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("json_parse", |b| {
        b.iter_with_large_drop(|| {
            serde_json::from_str::<Value>(black_box(&text)).expect("snapshot")
        });
    });
    group.bench_function("parse_and_ingest", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut store = ProjectionStore::new();
                let start = Instant::now();
                let snapshot: Value = serde_json::from_str(black_box(&text)).expect("snapshot");
                ingest(&mut store, &snapshot);
                total += start.elapsed();
                drop((store, snapshot));
            }
            total
        });
    });
    group.bench_function("ingest", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let snapshot: Value = serde_json::from_str(&text).expect("snapshot");
                let mut store = ProjectionStore::new();
                let start = Instant::now();
                ingest(&mut store, black_box(&snapshot));
                total += start.elapsed();
                drop((store, snapshot));
            }
            total
        });
    });
    group.finish();
}

/// The timestamp of element `i` of the scale inputs: `i` milliseconds after
/// 2026-11-01T00:00:00Z, with microseconds (`scaleTimestamp` in bench/workload.mjs; one day
/// holds 86.4 million elements).
fn scale_timestamp(i: usize) -> String {
    let seconds = i / 1000;
    format!(
        "2026-11-01T{:02}:{:02}:{:02}.{:06}Z",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60,
        i % 1000 * 1000
    )
}

/// A multiplier coprime with `n`: position `k` of the scale turns holds turn `k * step mod n`.
fn scale_step(n: usize) -> usize {
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let mut step = 7919;
    while n > 1 && gcd(step, n) != 1 {
        step += 2;
    }
    step
}

/// `n` turns in no particular order (`scaleTurns`): every 10th lifecycle-only, every 100th an
/// unpublished reservation (left out of the visible history), the last one open.
fn scale_turns(n: usize) -> Value {
    let step = scale_step(n);
    (0..n)
        .map(|k| {
            let i = k * step % n.max(1);
            let metadata = if i % 100 == 99 {
                json!({ "prompt_dispatch_pending": true })
            } else if i % 10 == 9 {
                json!({ "lifecycle_only": true })
            } else {
                json!({})
            };
            json!({
                "id": format!("turn-{i:07}"),
                "session_id": "sess-scale",
                "started_at": scale_timestamp(i),
                "created_at": scale_timestamp(i),
                "completed_at": if i + 1 < n { json!(scale_timestamp(i + 1)) } else { Value::Null },
                "updated_at": scale_timestamp(i + 1),
                "metadata": metadata,
            })
        })
        .collect::<Vec<_>>()
        .into()
}

/// Sessions `from..to` of task `task-scale`, newest first (`scaleSessions`): every 5th waiting
/// on a clarification, session 0 primary, revisions and clocks increasing with the index.
fn scale_sessions(from: usize, to: usize) -> Value {
    (from..to)
        .rev()
        .map(|i| {
            let waiting = i % 5 == 0;
            json!({
                "id": format!("sess-{i:07}"),
                "task_id": "task-scale",
                "state": if waiting { "WAITING_FOR_INPUT" } else { "IDLE" },
                "is_primary": i == 0,
                "pending_action": if waiting { json!("clarification") } else { Value::Null },
                "pending_action_revision": { "epoch": "1", "sequence": i + 1 },
                "updated_at": scale_timestamp(i),
            })
        })
        .collect::<Vec<_>>()
        .into()
}

fn bench_scale(c: &mut Criterion) {
    let n = std::env::var("SCALE_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let mut group = c.benchmark_group("scale");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(1));
    group.measurement_time(Duration::from_secs(1));
    group.throughput(Throughput::Elements(n as u64));

    let turns = scale_turns(n);
    group.bench_function(BenchmarkId::new("visible_turn_history", n), |b| {
        b.iter_with_large_drop(|| {
            api::visible_turn_history(&Json::new(black_box(&turns))).expect("turns")
        });
    });
    // The same call over the tape the JS side writes (what the wasm decodes).
    let written = Writer::tape(&[&turns]);
    drop(turns);
    group.bench_function(BenchmarkId::new("visible_turn_history_tape", n), |b| {
        b.iter_with_large_drop(|| {
            let tape = written.read().expect("tape");
            api::visible_turn_history(&black_box(tape).arg(0)).expect("turns")
        });
    });
    drop(written);

    let task = json!("task-scale");
    let all = scale_sessions(0, n);
    let older = scale_sessions(0, n / 2);
    let fill = |sessions: &Value| {
        let mut store: ProjectionStore<Value> = ProjectionStore::new();
        store_api::apply_session_list(&mut store, &Json::new(&task), &Json::new(sessions))
            .expect("sessions");
        store
    };
    let written = Writer::tape(&[&task, &all]);
    group.bench_function(BenchmarkId::new("apply_session_list_tape", n), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut store: ProjectionStore<Value> = ProjectionStore::new();
                let tape = written.read().expect("tape");
                let start = Instant::now();
                let reason = store_api::apply_session_list(&mut store, &tape.arg(0), &tape.arg(1));
                total += start.elapsed();
                black_box(reason.is_ok());
                drop(store);
            }
            total
        });
    });
    drop(written);
    for (name, held, list) in [
        ("apply_session_list", None, &all),
        ("apply_session_list_merge", Some(&all), &older),
    ] {
        group.bench_function(BenchmarkId::new(name, n), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let mut store = held.map_or_else(ProjectionStore::new, fill);
                    let start = Instant::now();
                    let reason = store_api::apply_session_list(
                        &mut store,
                        &Json::new(&task),
                        &Json::new(black_box(list)),
                    );
                    total += start.elapsed();
                    black_box(reason.is_ok());
                    drop(store);
                }
                total
            });
        });
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    if only.is_empty() || only == "event" {
        bench_events(c, &data_dir());
    }
    if only.is_empty() || only == "boot" {
        bench_boot(c, &data_dir());
    }
    let skip = std::env::var("BENCH_SKIP").unwrap_or_default();
    if (only.is_empty() || only == "scale") && skip != "scale" {
        bench_scale(c);
    }
}

criterion_group!(store, benches);
criterion_main!(store);
