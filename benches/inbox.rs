//! The workspace inbox's cost per event (SPEC §14): a store holding a page of `n` open bundles
//! (`n` listed sessions asking, their rows not held; a page holds at most 200 of them) takes a frame about another session, with and
//! without reading `inbox()` after it (what a badge does on every change), beside the same frame in
//! a store that holds no inbox. `cargo bench --bench inbox`; docs/benchmarks.md quotes the ratios.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use serde_json::{json, Value};
use task_projection::rules::model::{PendingAction, Revision, Session, SessionState};
use task_projection::store::ProjectionStore;
use task_projection::wire::{store_api as api, Json};

fn at(second: u64) -> String {
    format!(
        "2026-11-29T{:02}:{:02}:{:02}Z",
        12 + second / 3600 % 12,
        second / 60 % 60,
        second % 60
    )
}

fn session(id: &str, task: &str, asking: bool, sequence: u64) -> Session {
    Session {
        id: id.into(),
        task_id: Some(task.into()),
        state: Some(SessionState::WaitingForInput),
        is_primary: true,
        pending_action: Some(asking.then_some(PendingAction::Clarification)),
        pending_action_revision: Some(Revision {
            epoch: "1".into(),
            sequence,
        }),
        updated_at: Some(task_projection::rules::time::Timestamp::parse(&at(
            sequence % 40_000,
        ))),
    }
}

/// `n` sessions asking (one task each) and one quiet session, `quiet`; with the inbox page of
/// the `n` bundles when `inbox`.
fn store(n: usize, inbox: bool) -> ProjectionStore<Value> {
    let mut store = ProjectionStore::new();
    store.apply_stream_position("st", 0);
    let mut rows = Vec::new();
    for i in 0..n {
        let (s, t) = (format!("s{i}"), format!("t{i}"));
        store
            .apply_session_list(&t, vec![session(&s, &t, true, 1)])
            .expect("a list");
        if i < 200 {
            rows.push(json!({"pending_id": format!("p{i}"), "session_id": s, "task_id": t,
                         "created_at": at(i as u64), "task_title": "Task", "context": "", "messages": []}));
        }
    }
    store
        .apply_session_list("tq", vec![session("quiet", "tq", false, 1)])
        .expect("a list");
    if inbox {
        // A page holds at most 200 rows: beyond, truncated.
        let mut page = json!({"bundles": rows, "count": n.min(200), "hidden_count": 0,
                              "stream": "st", "offset": 0});
        if n > 200 {
            page["next_cursor"] = json!("c");
        }
        let args = [json!("ws"), page];
        let arg = |i: usize| args.get(i).map_or(Json::ABSENT, Json::new);
        api::dispatch(
            &mut store,
            "applyInboxPage",
            arg,
            |j: Json<'_>| j.0.cloned().unwrap_or(Value::Null),
            String::new,
        )
        .expect("a page");
    }
    store
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("inbox");
    for n in [10usize, 1_000] {
        for (name, inbox, read) in [
            ("frame_no_inbox", false, false),
            ("frame", true, false),
            ("frame_then_inbox", true, true),
        ] {
            let mut s = store(n, inbox);
            let mut offset = 1u64;
            group.bench_function(BenchmarkId::new(name, n), |b| {
                b.iter(|| {
                    offset += 1;
                    s.begin_frame(Some(offset));
                    s.apply_session_event(&session("quiet", "tq", false, offset));
                    s.apply_frame_offset(offset);
                    if read {
                        black_box(s.inbox("ws", None).rows.len());
                    }
                });
            });
        }
    }
    group.finish();
}

criterion_group!(inbox, bench);
criterion_main!(inbox);
