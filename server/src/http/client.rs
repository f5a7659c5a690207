//! A loopback client of the reference server (integration tests, the load benchmark): HTTP/1
//! requests, a WebSocket reader, and [`Mirror`], a native [`ProjectionStore`] fed exactly as the
//! browser feeds the wasm one (REST boot, then every WebSocket frame), with its answers as JSON
//! so they can be compared with the server's REST answers.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use serde_json::{json, Map, Value};
use tokio::net::TcpStream;
use tokio::sync::Mutex;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use crate::events::{
    SERVER_HELLO, SESSION_CREATED, SESSION_MESSAGE_ADDED, SESSION_MESSAGE_DELETED,
    SESSION_MESSAGE_UPDATED, SESSION_STATE_CHANGED, TASK_DELETED, TASK_STALLED,
    TASK_STATUS_SUMMARY_UPDATED, TASK_UPDATED, TURN_COMPLETED, TURN_STARTED,
};
use task_projection::rules::connection::Hello;
use task_projection::rules::model::{PendingAction, SessionState};
use task_projection::rules::turn::CurrentTurn;
use task_projection::store::{ProjectionStore, Reason};
use task_projection::wire::{store_api, Json};

/// A client failure (transport, protocol, or an unexpected answer).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ClientError(pub String);

impl ClientError {
    fn of(context: &str, error: impl std::fmt::Display) -> ClientError {
        ClientError(format!("{context}: {error}"))
    }
}

pub type ClientResult<T> = Result<T, ClientError>;

/// An HTTP/1 client over one kept-alive loopback connection (reconnects when it drops).
pub struct HttpClient {
    addr: SocketAddr,
    token: Option<String>,
    conn: Mutex<Option<SendRequest<Full<Bytes>>>>,
}

impl HttpClient {
    pub fn new(addr: SocketAddr) -> HttpClient {
        HttpClient {
            addr,
            token: None,
            conn: Mutex::new(None),
        }
    }

    /// Presents `token` (`Authorization: Bearer`) with every request.
    pub fn with_token(mut self, token: Option<&str>) -> HttpClient {
        self.token = token.map(str::to_owned);
        self
    }

    async fn connect(&self) -> ClientResult<SendRequest<Full<Bytes>>> {
        let stream = TcpStream::connect(self.addr)
            .await
            .map_err(|e| ClientError::of("connect", e))?;
        let _ = stream.set_nodelay(true);
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| ClientError::of("handshake", e))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(sender)
    }

    /// One request: `(status, body bytes, content type)`.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> ClientResult<(u16, Bytes, String)> {
        let mut conn = self.conn.lock().await;
        for attempt in 0..2 {
            let mut sender = match conn.take() {
                Some(sender) if !sender.is_closed() => sender,
                _ => self.connect().await?,
            };
            if sender.ready().await.is_err() {
                continue;
            }
            let mut builder = Request::builder()
                .method(method.clone())
                .uri(path)
                .header("host", self.addr.to_string());
            if let Some(token) = &self.token {
                builder = builder.header("authorization", format!("Bearer {token}"));
            }
            // Writes are JSON (the server's guard refuses any other content type).
            if body.is_some() || method != Method::GET {
                builder = builder.header("content-type", "application/json");
            }
            let request = builder
                .body(Full::new(Bytes::from(body.clone().unwrap_or_default())))
                .map_err(|e| ClientError::of("request", e))?;
            let response = match sender.send_request(request).await {
                Ok(response) => response,
                Err(error) if attempt == 0 => {
                    tracing::debug!(%error, "request failed; reconnecting");
                    continue;
                }
                Err(error) => return Err(ClientError::of("send", error)),
            };
            let status = response.status().as_u16();
            let content_type = response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            let bytes = response
                .into_body()
                .collect()
                .await
                .map_err(|e| ClientError::of("body", e))?
                .to_bytes();
            *conn = Some(sender);
            return Ok((status, bytes, content_type));
        }
        Err(ClientError(format!("{method} {path}: connection failed")))
    }

    fn json(path: &str, status: u16, bytes: &Bytes) -> ClientResult<(u16, Value)> {
        let value = serde_json::from_slice(bytes).map_err(|e| {
            ClientError(format!(
                "{path}: HTTP {status}, body is not JSON ({e}): {}",
                String::from_utf8_lossy(bytes)
            ))
        })?;
        Ok((status, value))
    }

    /// `GET path` → `(status, JSON body)`.
    pub async fn get(&self, path: &str) -> ClientResult<(u16, Value)> {
        let (status, bytes, _) = self.request(Method::GET, path, None).await?;
        Self::json(path, status, &bytes)
    }

    /// `POST path` with a JSON body → `(status, JSON body)`.
    pub async fn post(&self, path: &str, body: &Value) -> ClientResult<(u16, Value)> {
        let (status, bytes, _) = self
            .request(Method::POST, path, Some(body.to_string().into_bytes()))
            .await?;
        Self::json(path, status, &bytes)
    }

    /// `GET path` expecting 200.
    pub async fn get_ok(&self, path: &str) -> ClientResult<Value> {
        match self.get(path).await? {
            (200, value) => Ok(value),
            (status, value) => Err(ClientError(format!("GET {path}: HTTP {status}: {value}"))),
        }
    }

    /// `POST path` expecting 200.
    pub async fn post_ok(&self, path: &str, body: &Value) -> ClientResult<Value> {
        match self.post(path, body).await? {
            (200, value) => Ok(value),
            (status, value) => Err(ClientError(format!("POST {path}: HTTP {status}: {value}"))),
        }
    }
}

/// A WebSocket connection to `/api/v1/ws`.
pub struct WsClient {
    stream: WebSocketStream<TcpStream>,
}

impl WsClient {
    pub async fn connect(addr: SocketAddr) -> ClientResult<WsClient> {
        WsClient::connect_with(addr, "", None).await
    }

    /// [`WsClient::connect`] presenting an access token (`Authorization: Bearer`).
    pub async fn connect_with_token(
        addr: SocketAddr,
        token: Option<&str>,
    ) -> ClientResult<WsClient> {
        WsClient::connect_with(addr, "", token).await
    }

    /// [`WsClient::connect`] resuming after `mirror`'s last offset, when it has one.
    pub async fn resume(addr: SocketAddr, mirror: &Mirror) -> ClientResult<WsClient> {
        let query = match (&mirror.stream, mirror.offset) {
            (Some(stream), Some(offset)) => format!("?since={offset}&stream={stream}"),
            _ => String::new(),
        };
        WsClient::connect_with(addr, &query, None).await
    }

    /// `/api/v1/ws` with `query` (`""` or `?…`) and an optional access token.
    pub async fn connect_with(
        addr: SocketAddr,
        query: &str,
        token: Option<&str>,
    ) -> ClientResult<WsClient> {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let tcp = TcpStream::connect(addr)
            .await
            .map_err(|e| ClientError::of("ws connect", e))?;
        let _ = tcp.set_nodelay(true);
        let mut request = format!("ws://{addr}/api/v1/ws{query}")
            .into_client_request()
            .map_err(|e| ClientError::of("ws request", e))?;
        if let Some(token) = token {
            let value = format!("Bearer {token}")
                .parse()
                .map_err(|e| ClientError::of("ws token", e))?;
            request.headers_mut().insert("authorization", value);
        }
        // A browser-sized read buffer: tungstenite zeroes the free part (128 KiB by default)
        // before every read, which would dominate a frame's cost here.
        let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .read_buffer_size(16 << 10);
        let (stream, _) = tokio_tungstenite::client_async_with_config(request, tcp, Some(config))
            .await
            .map_err(|e| ClientError::of("ws handshake", e))?;
        Ok(WsClient { stream })
    }

    /// The next text frame, parsed; `None` when the socket closed.
    pub async fn next(&mut self) -> ClientResult<Option<Value>> {
        loop {
            match self.stream.next().await {
                None => return Ok(None),
                Some(Err(error)) => return Err(ClientError::of("ws read", error)),
                Some(Ok(Message::Text(text))) => {
                    return serde_json::from_str(text.as_str())
                        .map(Some)
                        .map_err(|e| ClientError::of("ws frame is not JSON", e));
                }
                Some(Ok(Message::Close(_))) => return Ok(None),
                Some(Ok(_)) => {}
            }
        }
    }

    /// The next frame within `wait`; `Ok(None)` on timeout or close.
    pub async fn next_within(&mut self, wait: Duration) -> ClientResult<Option<Value>> {
        match tokio::time::timeout(wait, self.next()).await {
            Ok(result) => result,
            Err(_) => Ok(None),
        }
    }

    /// Every frame that arrives until `quiet` passes without one.
    pub async fn drain(&mut self, quiet: Duration) -> ClientResult<Vec<Value>> {
        let mut frames = Vec::new();
        while let Some(frame) = self.next_within(quiet).await? {
            frames.push(frame);
        }
        Ok(frames)
    }

    /// Reads until the server closes the socket: the number of text frames read on the way and
    /// the close frame's code (`None` when the stream ended without a close frame or with one
    /// carrying no code).
    pub async fn read_until_close(&mut self) -> ClientResult<(usize, Option<u16>)> {
        let mut texts = 0usize;
        loop {
            match self.stream.next().await {
                None => return Ok((texts, None)),
                Some(Err(error)) => return Err(ClientError::of("ws read", error)),
                Some(Ok(Message::Text(_))) => texts = texts.saturating_add(1),
                Some(Ok(Message::Close(frame))) => {
                    return Ok((texts, frame.map(|f| u16::from(f.code))));
                }
                Some(Ok(_)) => {}
            }
        }
    }

    pub async fn close(mut self) {
        let _ = self.stream.send(Message::Close(None)).await;
    }
}

/// `value[key]`, `null` when absent.
fn field<'v>(value: &'v Value, key: &str) -> &'v Value {
    static NULL: Value = Value::Null;
    value.get(key).unwrap_or(&NULL)
}

/// A pending-action answer as JSON: `"unknown"` while the store does not know it (SPEC §11),
/// never equal to a REST value.
fn action_value(action: Option<Option<PendingAction>>) -> Value {
    match action {
        None => Value::from("unknown"),
        Some(action) => action.map_or(Value::Null, |a| Value::from(a.as_str())),
    }
}

fn wire_err(error: task_projection::WireError) -> ClientError {
    ClientError::of("store rejected the input", error)
}

/// A native `ProjectionStore` fed like the browser's: REST boot, then WebSocket frames.
#[derive(Default)]
pub struct Mirror {
    pub store: ProjectionStore<Value>,
    /// task id → listed session ids (newest first) and whether each is primary.
    lists: BTreeMap<String, Vec<(String, bool)>>,
    /// The epoch of the last `server.hello`.
    pub epoch: Option<String>,
    /// A `server.hello` announced another epoch: the client must refetch REST.
    pub needs_refetch: bool,
    /// Frames applied (hello excluded).
    pub applied: usize,
    /// The stream of the last `server.hello` and the offset of the last frame (or hello) seen:
    /// where a reconnection resumes (`?since=&stream=`).
    pub stream: Option<String>,
    pub offset: Option<u64>,
    /// Whether the last `server.hello` resumed the stream.
    pub resumed: bool,
}

impl Mirror {
    pub fn new() -> Mirror {
        Mirror::default()
    }

    /// Loads the task list, every task's session list, every session's turns and messages.
    pub async fn boot(&mut self, http: &HttpClient) -> ClientResult<()> {
        let token = self.store.begin_task_fetch();
        let tasks = http.get_ok("/api/v1/tasks").await?;
        let tasks = tasks.get("tasks").cloned().unwrap_or(Value::Null);
        store_api::apply_task_snapshot(
            &mut self.store,
            &Json::new(&Value::from(token)),
            &Json::new(&tasks),
            |w: Json<'_>| w.0.cloned().unwrap_or(Value::Null),
        )
        .map_err(wire_err)?;
        for task in tasks.as_array().into_iter().flatten() {
            let task_id = task.get("id").and_then(Value::as_str).unwrap_or_default();
            let body = http
                .get_ok(&format!("/api/v1/tasks/{task_id}/task-sessions"))
                .await?;
            let sessions = body.get("sessions").cloned().unwrap_or(Value::Null);
            store_api::apply_session_list(
                &mut self.store,
                &Json::new(&Value::from(task_id)),
                &Json::new(&sessions),
            )
            .map_err(wire_err)?;
            let mut list = Vec::new();
            for session in sessions.as_array().into_iter().flatten() {
                let id = session
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let primary = session.get("is_primary") == Some(&Value::Bool(true));
                list.push((id.to_owned(), primary));
                let turns = http
                    .get_ok(&format!("/api/v1/task-sessions/{id}/turns"))
                    .await?;
                store_api::apply_turn_list(
                    &mut self.store,
                    &Json::new(&Value::from(id)),
                    &Json::new(turns.get("turns").unwrap_or(&Value::Null)),
                )
                .map_err(wire_err)?;
                let messages = http
                    .get_ok(&format!("/api/v1/task-sessions/{id}/messages"))
                    .await?;
                store_api::apply_message_page(
                    &mut self.store,
                    &Json::new(&Value::from(id)),
                    &Json::new(messages.get("messages").unwrap_or(&Value::Null)),
                )
                .map_err(wire_err)?;
            }
            self.lists.insert(task_id.to_owned(), list);
        }
        self.needs_refetch = false;
        Ok(())
    }

    /// The session list of a task as the store holds it (so re-applying it changes nothing).
    fn held_list(&self, task_id: &str) -> Vec<Value> {
        let list = self.lists.get(task_id).cloned().unwrap_or_default();
        list.iter()
            .map(|(id, primary)| {
                let mut object = Map::new();
                object.insert("id".into(), Value::from(id.as_str()));
                object.insert("task_id".into(), Value::from(task_id));
                object.insert("is_primary".into(), Value::Bool(*primary));
                if let Some(state) = self.store.session_state(id).and_then(SessionState::as_wire) {
                    object.insert("state".into(), Value::from(state));
                }
                if let Some((Some(action), revision)) = self.store.session_projection(id) {
                    object.insert("pending_action".into(), action_value(Some(action)));
                    if let Some(r) = revision {
                        object.insert(
                            "pending_action_revision".into(),
                            json!({ "epoch": r.epoch, "sequence": r.sequence }),
                        );
                    }
                }
                Value::Object(object)
            })
            .collect()
    }

    /// Applies one frame `{"type", "payload"}` as the browser does; returns the store's reason
    /// (`None` for frames that only inform: `server.hello`, `task.stalled`).
    pub fn apply(&mut self, frame: &Value) -> ClientResult<Option<Reason>> {
        let kind = frame
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let payload = frame.get("payload").cloned().unwrap_or(Value::Null);
        if let Some(offset) = frame.get("offset").and_then(Value::as_u64) {
            self.offset = Some(offset);
        }
        let p = Json::new(&payload);
        let store = &mut self.store;
        let summary = |w: Json<'_>| w.0.cloned().unwrap_or(Value::Null);
        let reason = match kind {
            SERVER_HELLO => {
                let epoch = payload
                    .get("epoch")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let resumed = payload.get("resumed") == Some(&Value::Bool(true));
                // What the hello means is the store's rule, as in the browser (a first hello
                // comes before the boot, which is the fetch).
                let hello = store.apply_hello(epoch.as_deref().unwrap_or_default(), resumed);
                if hello != Hello::First && hello.refetch() {
                    self.needs_refetch = true;
                }
                self.epoch = epoch;
                self.resumed = resumed;
                self.stream = payload
                    .get("stream")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                self.offset = payload.get("offset").and_then(Value::as_u64);
                return Ok(None);
            }
            TASK_STALLED => None,
            SESSION_MESSAGE_ADDED | SESSION_MESSAGE_UPDATED | SESSION_MESSAGE_DELETED => {
                let which = kind.trim_start_matches("session.message.");
                Some(
                    store_api::apply_message_event(store, &Json::new(&Value::from(which)), &p)
                        .map_err(wire_err)?,
                )
            }
            TURN_STARTED | TURN_COMPLETED => {
                Some(store_api::apply_turn_event(store, &p).map_err(wire_err)?)
            }
            SESSION_STATE_CHANGED => {
                Some(store_api::apply_session_event(store, &p).map_err(wire_err)?)
            }
            SESSION_CREATED => {
                let id = payload
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let task_id = payload
                    .get("task_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let primary = payload.get("is_primary") == Some(&Value::Bool(true));
                let entry = self.lists.entry(task_id.clone()).or_default();
                entry.retain(|(held, _)| held != id);
                if primary {
                    // The server keeps one primary session per task.
                    for other in entry.iter_mut() {
                        other.1 = false;
                    }
                }
                let mut list = self.held_list(&task_id);
                list.insert(0, payload.clone());
                store_api::apply_session_list(
                    &mut self.store,
                    &Json::new(&Value::from(task_id.as_str())),
                    &Json::new(&Value::Array(list)),
                )
                .map_err(wire_err)?;
                // A new session has no turns and no messages yet: what a first load would read
                // (its rows are known from here on, SPEC §11).
                store_api::apply_turn_list(
                    &mut self.store,
                    &Json::new(&Value::from(id)),
                    &Json::new(&json!([])),
                )
                .map_err(wire_err)?;
                store_api::apply_message_page(
                    &mut self.store,
                    &Json::new(&Value::from(id)),
                    &Json::new(&json!([])),
                )
                .map_err(wire_err)?;
                self.lists
                    .entry(task_id)
                    .or_default()
                    .insert(0, (id.to_owned(), primary));
                Some(store_api::apply_session_event(&mut self.store, &p).map_err(wire_err)?)
            }
            TASK_STATUS_SUMMARY_UPDATED => {
                Some(store_api::apply_status_summary_event(store, &p, summary).map_err(wire_err)?)
            }
            TASK_UPDATED => {
                let reason = store_api::apply_task_updated(store, &p, summary).map_err(wire_err)?;
                let id = payload
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !self.lists.contains_key(id) {
                    // A task the client has not seen is new: it has no sessions yet.
                    store_api::apply_session_list(
                        &mut self.store,
                        &Json::new(&Value::from(id)),
                        &Json::new(&json!([])),
                    )
                    .map_err(wire_err)?;
                    self.lists.insert(id.to_owned(), Vec::new());
                }
                Some(reason)
            }
            TASK_DELETED => {
                let id = payload.get("task_id").cloned().unwrap_or(Value::Null);
                self.lists.remove(id.as_str().unwrap_or_default());
                Some(store_api::remove_task(store, &Json::new(&id)).map_err(wire_err)?)
            }
            other => return Err(ClientError(format!("unknown frame type {other:?}"))),
        };
        self.applied = self.applied.saturating_add(1);
        Ok(reason)
    }

    /// Every answer the UI reads, per task and session, as JSON (sorted, comparable).
    pub fn answers(&self) -> Value {
        let mut tasks = Map::new();
        for (task_id, list) in &self.lists {
            let (action, _) = self.store.task_pending_action(task_id);
            let (summary, _) = self.store.task_status_summary(task_id);
            let (owner, _) = self.store.pending_owner(task_id, None);
            let mut sessions = Map::new();
            for (id, _) in list {
                let (action, _) = self.store.session_pending_action(id);
                let (turn, _) = self.store.current_turn_id(id);
                let turn = match turn {
                    CurrentTurn::Turn(t) => Value::from(t),
                    CurrentTurn::None => Value::from("none"),
                    CurrentTurn::Unknown => Value::from("unknown"),
                };
                let (bundle, _) = self.store.pending_clarification(id);
                let bundle = bundle.map_or(Value::from("unknown"), |b| {
                    b.map_or(
                        Value::Null,
                        |b| json!({ "pending_id": b.pending_id, "message_ids": b.message_ids }),
                    )
                });
                let (permission, _) = self.store.has_pending_permission(id);
                let permission = permission.map_or(Value::from("unknown"), Value::from);
                sessions.insert(
                    id.clone(),
                    json!({
                        "state": self.store.session_state(id).and_then(SessionState::as_wire),
                        "pending_action": action_value(action),
                        "current_turn": turn,
                        "pending_clarification": bundle,
                        "pending_permission": permission,
                    }),
                );
            }
            tasks.insert(
                task_id.clone(),
                json!({
                    "pending_action": action_value(action),
                    "summary_revision": summary.flatten().and_then(|s| s.get("revision")).cloned(),
                    "pending_owner": owner.map_or(Value::from("unknown"), |o| json!(o)),
                    "sessions": sessions,
                }),
            );
        }
        Value::Object(tasks)
    }
}

/// Checks a mirror against the server: its answers equal those of a mirror freshly booted from
/// REST, and its projections equal the REST values (task action from the status summary or the
/// legacy field, each session's `pending_action` and `state`). `Err` describes the first
/// difference.
pub async fn check_converged(mirror: &Mirror, http: &HttpClient) -> ClientResult<()> {
    let mut fresh = Mirror::new();
    fresh.boot(http).await?;
    let (live, rest) = (mirror.answers(), fresh.answers());
    if live != rest {
        return Err(ClientError(format!(
            "the WebSocket-fed store differs from a REST-booted one:\n live: {live}\n rest: {rest}"
        )));
    }
    let tasks = http.get_ok("/api/v1/tasks").await?;
    for task in field(&tasks, "tasks").as_array().into_iter().flatten() {
        let task_id = field(task, "id").as_str().unwrap_or_default();
        let expected = match task.get("status_summary") {
            Some(summary) if summary.is_object() => summary
                .get("pending_action")
                .cloned()
                .unwrap_or(Value::Null),
            _ => field(task, "task_pending_action").clone(),
        };
        let (held, _) = mirror.store.task_pending_action(task_id);
        if action_value(held) != expected {
            return Err(ClientError(format!(
                "task {task_id}: store says {held:?}, REST says {expected}"
            )));
        }
        let sessions = http
            .get_ok(&format!("/api/v1/tasks/{task_id}/task-sessions"))
            .await?;
        for session in field(&sessions, "sessions")
            .as_array()
            .into_iter()
            .flatten()
        {
            let id = field(session, "id").as_str().unwrap_or_default();
            let (held, _) = mirror.store.session_pending_action(id);
            if action_value(held) != *field(session, "pending_action") {
                return Err(ClientError(format!(
                    "session {id}: store says {held:?}, REST says {}",
                    field(session, "pending_action")
                )));
            }
            let state = mirror
                .store
                .session_state(id)
                .and_then(SessionState::as_wire);
            if state != field(session, "state").as_str() {
                return Err(ClientError(format!(
                    "session {id}: store state {state:?}, REST state {}",
                    field(session, "state")
                )));
            }
        }
    }
    Ok(())
}
