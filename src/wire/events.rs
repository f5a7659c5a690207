//! Decoders for the store's inputs: WebSocket payloads and REST snapshots (SPEC §1). Payload
//! objects the store hands back untouched (status summaries) are returned as the wire value.

use crate::error::{WireError, WireErrorKind};
use crate::rules::model::{Session, StatusSummary};
use crate::rules::revision::PendingProjection;
use crate::store::{MessageEvent, MessageEventKind, TaskInput, TurnEvent};

use super::decode;
use super::{Kind, Path, Wire};

/// `"added" | "updated" | "deleted"`.
pub fn message_event_kind<W: Wire>(
    value: &W,
    path: &Path<'_>,
) -> Result<MessageEventKind, WireError> {
    let text = decode::string(value, path)?;
    MessageEventKind::parse(&text).ok_or_else(|| {
        WireError::from(WireErrorKind::InvalidValue {
            field: path.text(),
            problem: [
                "expected \"added\", \"updated\" or \"deleted\", got \"",
                &crate::error::quoted(&text),
                "\"",
            ]
            .concat(),
        })
    })
}

/// The projection keys of an event; `None` when both are omitted.
fn projection<W: Wire>(value: &W, path: &Path<'_>) -> Result<Option<PendingProjection>, WireError> {
    let action_value = value.get("pending_action");
    let revision_value = value.get("pending_action_revision");
    if action_value.is_undefined() && revision_value.is_undefined() {
        return Ok(None);
    }
    Ok(Some(PendingProjection {
        action: decode::pending_action(&action_value, &path.key("pending_action"))?,
        revision: decode::revision(&revision_value, &path.key("pending_action_revision"))?,
    }))
}

/// `session.message.*`: the message fields (`message_id` for the id), `session_id`, `task_id`
/// and the session's projection.
pub fn message_event<W: Wire>(value: &W, path: &Path<'_>) -> Result<MessageEvent, WireError> {
    let message = decode::message(value, path)?;
    Ok(MessageEvent {
        session_id: decode::string(&value.get("session_id"), &path.key("session_id"))?,
        task_id: decode::optional_string(&value.get("task_id"), &path.key("task_id"))?,
        message,
        projection: projection(value, path)?,
    })
}

/// A turn started/completed event: the turn object with its `session_id`.
pub fn turn_event<W: Wire>(value: &W, path: &Path<'_>) -> Result<TurnEvent, WireError> {
    let turn = decode::turn(value, path)?;
    Ok(TurnEvent {
        session_id: decode::string(&value.get("session_id"), &path.key("session_id"))?,
        task_id: decode::optional_string(&value.get("task_id"), &path.key("task_id"))?,
        turn,
    })
}

/// A session event: a session object (`id`, or `session_id`), its `state` and, when present, its
/// projection keys.
pub fn session_event<W: Wire>(value: &W, path: &Path<'_>) -> Result<Session, WireError> {
    decode::object(value, path)?;
    let mut id = value.get("id");
    if id.is_undefined() {
        id = value.get("session_id");
    }
    let projection = projection(value, path)?;
    Ok(Session {
        id: decode::string(&id, &path.key("id"))?,
        task_id: decode::optional_string(&value.get("task_id"), &path.key("task_id"))?,
        state: decode::session_state(&value.get("state"), &path.key("state"))?,
        is_primary: decode::flag(&value.get("is_primary")),
        pending_action: projection.as_ref().and_then(|p| p.action),
        pending_action_revision: projection.and_then(|p| p.revision),
        updated_at: decode::optional_timestamp(&value.get("updated_at"), &path.key("updated_at"))?,
    })
}

/// A summary object with its wire value (the payload handed back as is).
fn summary_with_payload<W: Wire + Clone>(
    value: W,
    path: &Path<'_>,
) -> Result<Option<(StatusSummary, W)>, WireError> {
    value.check_held(path)?;
    Ok(decode::summary(&value, path)?.map(|summary| (summary, value)))
}

/// `task.status_summary.updated`: `{task_id, status_summary}`.
pub fn summary_event<W: Wire + Clone>(
    value: &W,
    path: &Path<'_>,
) -> Result<(String, Option<(StatusSummary, W)>), WireError> {
    decode::object(value, path)?;
    let task_id = decode::string(&value.get("task_id"), &path.key("task_id"))?;
    let summary = summary_with_payload(value.get("status_summary"), &path.key("status_summary"))?;
    Ok((task_id, summary))
}

/// A task from `task.updated` or a REST snapshot. The `status_summary` key's presence matters.
pub fn task_input<W: Wire + Clone>(value: &W, path: &Path<'_>) -> Result<TaskInput<W>, WireError> {
    decode::object(value, path)?;
    let summary_value = value.get("status_summary");
    let status_summary = if summary_value.is_undefined() {
        None
    } else {
        Some(summary_with_payload(
            summary_value,
            &path.key("status_summary"),
        )?)
    };
    let action_value = value.get("task_pending_action");
    Ok(TaskInput {
        id: decode::string(&value.get("id"), &path.key("id"))?,
        status_summary,
        invalidated: decode::flag(&value.get("status_summary_invalidated")),
        task_pending_action: decode::pending_action(
            &action_value,
            &path.key("task_pending_action"),
        )?,
    })
}

/// A required array of tasks.
pub fn task_inputs<W: Wire + Clone>(
    value: &W,
    path: &Path<'_>,
) -> Result<Vec<TaskInput<W>>, WireError> {
    let len = decode::array(value, path)?;
    // A loop: a `Result`-collecting iterator is an adapter instance of its own in the wasm.
    let mut out = Vec::new();
    for i in 0..len {
        out.push(task_input(&value.at(i), &path.index(i))?);
    }
    Ok(out)
}

/// A `server.hello` payload (docs/server-api.md): `epoch`, and the stream resume fields, each
/// optional (an old server sends only `epoch` and `started_at`, which is a hello that did not
/// resume).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HelloInput<T> {
    pub epoch: T,
    /// The event stream the offsets belong to.
    pub stream: Option<T>,
    /// The offset of the last event published before this connection.
    pub offset: Option<u64>,
    /// Whether the server honoured the client's `since` (absent or `null`: it did not).
    pub resumed: bool,
}

/// `server.hello`: `epoch` a string, `stream` a string, `offset` a stream offset, `resumed` a
/// boolean; each but `epoch` may be absent or `null`.
pub fn hello<W: Wire>(value: &W, path: &Path<'_>) -> Result<HelloInput<W::Text>, WireError> {
    decode::object(value, path)?;
    Ok(HelloInput {
        epoch: decode::text(&value.get("epoch"), &path.key("epoch"))?,
        stream: decode::optional_text(&value.get("stream"), &path.key("stream"))?,
        offset: offset(&value.get("offset"), &path.key("offset"))?,
        resumed: decode::boolean(&value.get("resumed"), &path.key("resumed"))?,
    })
}

/// `Number.MAX_SAFE_INTEGER`: the largest offset a JS Number holds exactly.
const MAX_OFFSET: u64 = (1 << 53) - 1;

/// A stream offset, or `None` for `undefined`/`null`: a Number that is an integer from 0 to
/// 2^53 - 1 (a client keeps it as a Number and sends it back as `since`; a BigInt is refused, as
/// `js/read.js` refuses it in a frame's `offset`).
pub fn offset<W: Wire>(value: &W, path: &Path<'_>) -> Result<Option<u64>, WireError> {
    if value.is_absent() {
        return Ok(None);
    }
    match value.unsigned() {
        Some(n) if n <= MAX_OFFSET && value.kind() == Kind::Number => Ok(Some(n)),
        _ => Err(WireError::from(WireErrorKind::InvalidType {
            field: path.text(),
            expected: "a non-negative integer up to 2^53 - 1",
            got: value.kind().name(),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::rules::connection::Hello;
    use crate::store::ProjectionStore;
    use crate::wire::{store_api, Json};
    use serde_json::{json, Value};

    fn decoded(payload: &Value) -> Result<HelloInput<String>, WireError> {
        let h = hello(&Json::new(payload), &Path::Root("payload"))?;
        Ok(HelloInput {
            epoch: h.epoch.to_owned(),
            stream: h.stream.map(str::to_owned),
            offset: h.offset,
            resumed: h.resumed,
        })
    }

    fn refused(payload: &Value) -> (ErrorCode, String) {
        let error = decoded(payload).expect_err("refused");
        let field = match error.kind() {
            WireErrorKind::InvalidType { field, .. } => field.clone(),
            other => panic!("{other:?}"),
        };
        (error.code(), field)
    }

    #[test]
    fn a_hello_of_an_old_server_did_not_resume() {
        let h = decoded(&json!({"epoch": "7", "started_at": "2026-12-01T00:00:00Z"})).expect("ok");
        assert_eq!(
            h,
            HelloInput {
                epoch: "7".to_owned(),
                stream: None,
                offset: None,
                resumed: false
            }
        );
        let h = decoded(&json!({"epoch": "7", "stream": null, "offset": null, "resumed": null}))
            .expect("null is absent");
        assert_eq!((h.stream, h.offset, h.resumed), (None, None, false));
    }

    #[test]
    fn a_hello_with_its_stream_fields() {
        let h = decoded(&json!({"epoch": "7", "stream": "s-1", "offset": 42, "resumed": true}))
            .expect("ok");
        assert_eq!(
            (h.stream.as_deref(), h.offset, h.resumed),
            (Some("s-1"), Some(42), true)
        );
        let h = decoded(&json!({"epoch": "7", "offset": 0, "resumed": false})).expect("ok");
        assert_eq!((h.offset, h.resumed), (Some(0), false));
        let max = 9_007_199_254_740_991u64;
        let h = decoded(&json!({"epoch": "7", "offset": max})).expect("2^53 - 1");
        assert_eq!(h.offset, Some(max));
    }

    #[test]
    fn malformed_stream_fields_are_typed_errors() {
        let bad = [
            (json!({"epoch": "7", "resumed": "true"}), "payload.resumed"),
            (json!({"epoch": "7", "resumed": 1}), "payload.resumed"),
            (json!({"epoch": "7", "stream": 5}), "payload.stream"),
            (json!({"epoch": "7", "stream": {}}), "payload.stream"),
            (json!({"epoch": "7", "offset": -1}), "payload.offset"),
            (json!({"epoch": "7", "offset": 1.5}), "payload.offset"),
            (json!({"epoch": "7", "offset": "3"}), "payload.offset"),
            (
                json!({"epoch": "7", "offset": 9_007_199_254_740_992u64}),
                "payload.offset",
            ),
            (json!({"epoch": "7", "offset": u64::MAX}), "payload.offset"),
            (
                json!({"stream": "s", "offset": 1, "resumed": true}),
                "payload.epoch",
            ),
        ];
        for (payload, field) in bad {
            assert_eq!(
                refused(&payload),
                (ErrorCode::InvalidType, field.into()),
                "{payload}"
            );
        }
    }

    #[test]
    fn a_resumed_hello_asks_for_no_refetch_and_still_updates_the_epoch() {
        let mut store = ProjectionStore::<Value>::new();
        let apply = |store: &mut ProjectionStore<Value>, payload: Value| {
            store_api::apply_hello(store, &Json::new(&payload)).expect("a hello")
        };
        assert_eq!(apply(&mut store, json!({"epoch": "1"})), Hello::First);
        let resumed = apply(
            &mut store,
            json!({"epoch": "2", "stream": "s", "offset": 5, "resumed": true}),
        );
        assert_eq!(resumed, Hello::Resumed);
        assert!(!resumed.refetch());
        // The resumed hello's epoch is the one held now.
        assert_eq!(apply(&mut store, json!({"epoch": "2"})), Hello::SameEpoch);
        assert_eq!(
            apply(&mut store, json!({"epoch": "1", "resumed": false})),
            Hello::NewEpoch
        );
        // A malformed hello changes nothing, not even the epoch held.
        let bad = json!({"epoch": "3", "resumed": "yes"});
        assert!(store_api::apply_hello(&mut store, &Json::new(&bad)).is_err());
        assert_eq!(apply(&mut store, json!({"epoch": "1"})), Hello::SameEpoch);
    }
}
