//! What an input carries: the wire-JSON readers [`plan`](super::plan()) groups inputs by (message
//! rows and events, session rows, projections, tasks, the sessions named with their task) and
//! the token and revision fields the delivery maps.

use serde_json::Value;

use crate::rules::model::Revision;

pub(super) fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

pub(super) fn token_of(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

pub(super) fn revision_of(v: Option<&Value>) -> Option<Revision> {
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
pub(super) fn rows(call: &str, args: &[Value]) -> Vec<(String, Value)> {
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
pub(super) fn events(call: &str, args: &[Value]) -> Vec<(String, Value)> {
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
pub(super) fn sessions(call: &str, args: &[Value]) -> Vec<(String, Value)> {
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
pub(super) fn projections(call: &str, args: &[Value]) -> Vec<(String, Option<Value>, Value)> {
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
pub(super) fn tasks(call: &str, args: &[Value]) -> Vec<(String, Value)> {
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
pub(super) fn session_tasks(call: &str, args: &[Value]) -> Vec<(String, String)> {
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
pub(super) fn row_content(row: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for key in ["type", "turn_id", "created_at", "metadata"] {
        if let Some(v) = row.get(key) {
            out.insert(key.to_owned(), v.clone());
        }
    }
    Value::Object(out)
}
