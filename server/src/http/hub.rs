//! The WebSocket hub. Each event is serialized once into a frame
//! `{"type": <event name>, "payload": {...}, "offset": n}` and broadcast to every socket; a
//! socket receives `server.hello` first, then every frame after the hello's `offset`, in offset
//! order. A socket that falls more than the buffer behind is closed (code 1013): its client
//! reconnects, it never silently misses an event.
//!
//! Offsets number the events of one **stream**. With SQLite (one instance) the hub is the
//! services' [`EventSink`]: it numbers the events itself and keeps the recent ones
//! ([`HISTORY_FRAMES`], [`HISTORY_BYTES`]) in memory; the stream is this process. With PostgreSQL
//! the events go through the outbox ([`crate::outbox`]) and its follower hands every
//! instance's events to [`Hub::deliver`] with their outbox offsets; the stream is the database.
//! A client that reconnects with `?since=<offset>&stream=<stream>` of that stream gets a hello
//! with `"resumed": true` and every event after its offset (from the history, or read back from
//! the outbox), so it need not refetch; otherwise `"resumed": false` (refetch).
//!
//! Memory is bounded per socket and in total. The buffer is one ring shared by every socket, so
//! no socket holds more than `ws_buffer` frames; a frame stays counted against the hub's byte
//! budget (`ws_buffer_bytes`) until every socket has written it. When a publication takes the
//! total over the budget, every socket that still has frames to write is closed (a socket stuck
//! writing to a client that stopped reading is dropped without a close frame), which releases
//! what it held.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Instant;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures_util::SinkExt;
use serde_json::{json, Value};
use tokio::sync::{broadcast, watch};

use crate::events::{Event, EventSink, PublishError, SERVER_HELLO};
use crate::outbox;
use crate::Db;
use task_projection::rules::connection::{next_offset, NextOffset};

/// Events the in-memory history keeps for resuming (SQLite), at most …
pub const HISTORY_FRAMES: usize = 4096;
/// … and at most this many bytes of them.
pub const HISTORY_BYTES: usize = 16 << 20;

/// One pre-serialized text frame (cheap to clone: reference counted).
pub type Frame = Utf8Bytes;

/// The text of a frame.
pub fn frame_text(name: &str, payload: &Value) -> String {
    json!({ "type": name, "payload": payload }).to_string()
}

/// The text of an event's frame: its name, its payload (JSON text, as is) and its offset.
pub fn event_frame_text(name: &str, payload: &str, offset: u64) -> String {
    let name = Value::from(name).to_string();
    format!("{{\"type\":{name},\"payload\":{payload},\"offset\":{offset}}}")
}

/// Where a reconnecting client says it was: the last offset it processed, of which stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resume {
    pub since: u64,
    pub stream: String,
}

/// Where resumed events come from.
enum Backlog {
    /// The recent frames in memory (SQLite).
    History,
    /// The outbox (PostgreSQL).
    Outbox(Db),
}

/// The offset of the last event delivered and the retained history; one lock, so the
/// broadcast order is the offset order.
#[derive(Default)]
struct Delivered {
    latest: u64,
    history: VecDeque<(u64, Frame)>,
    history_bytes: usize,
}

/// The bytes of the frames some socket has not written yet, and their bound.
#[derive(Debug)]
struct Budget {
    bytes: AtomicUsize,
    limit: usize,
    /// Bumped when a publication takes `bytes` over `limit`.
    shed: watch::Sender<u64>,
}

/// A frame in the ring, counted against the budget until its last holder drops it.
#[derive(Debug)]
pub struct Buffered {
    text: Frame,
    /// The event's offset (`None`: a hello, a replayed frame).
    offset: Option<u64>,
    budget: Arc<Budget>,
}

impl Buffered {
    pub fn text(&self) -> Frame {
        self.text.clone()
    }
}

impl Drop for Buffered {
    fn drop(&mut self) {
        self.budget
            .bytes
            .fetch_sub(self.text.len(), Ordering::Relaxed);
    }
}

/// The hub. See the module docs.
pub struct Hub {
    sender: broadcast::Sender<Arc<Buffered>>,
    budget: Arc<Budget>,
    hello: RwLock<(String, String)>,
    closing: watch::Sender<bool>,
    /// Publication instants of every broadcast frame, when recording (the load benchmark).
    log: Mutex<Option<Vec<Instant>>>,
    /// Batches of broadcast frames written to sockets (one write and flush each; the load
    /// benchmark reports it).
    socket_writes: AtomicU64,
    stream: String,
    backlog: Backlog,
    delivered: Mutex<Delivered>,
}

impl Hub {
    /// A hub whose sockets may fall `buffer` frames behind, holding at most about `bytes` of
    /// frames not yet written to every socket; it numbers its events itself (SQLite), in a
    /// stream of its own.
    pub fn new(buffer: usize, bytes: usize, epoch: &str, started_at: &str) -> Hub {
        let stream = uuid::Uuid::new_v4().simple().to_string();
        Hub::with_backlog(
            buffer,
            bytes,
            epoch,
            started_at,
            stream,
            Backlog::History,
            0,
        )
    }

    /// A hub fed by the outbox of `db` ([`Hub::deliver`]), whose stream is the database's and
    /// whose last delivered offset is `latest`.
    pub fn following(
        buffer: usize,
        bytes: usize,
        epoch: &str,
        started_at: &str,
        db: Db,
        stream: String,
        latest: u64,
    ) -> Hub {
        Hub::with_backlog(
            buffer,
            bytes,
            epoch,
            started_at,
            stream,
            Backlog::Outbox(db),
            latest,
        )
    }

    fn with_backlog(
        buffer: usize,
        bytes: usize,
        epoch: &str,
        started_at: &str,
        stream: String,
        backlog: Backlog,
        latest: u64,
    ) -> Hub {
        let (sender, _) = broadcast::channel(buffer.max(16));
        let (closing, _) = watch::channel(false);
        let (shed, _) = watch::channel(0);
        Hub {
            sender,
            budget: Arc::new(Budget {
                bytes: AtomicUsize::new(0),
                limit: bytes,
                shed,
            }),
            hello: RwLock::new((epoch.to_owned(), started_at.to_owned())),
            closing,
            log: Mutex::new(None),
            socket_writes: AtomicU64::new(0),
            stream,
            backlog,
            delivered: Mutex::new(Delivered {
                latest,
                ..Delivered::default()
            }),
        }
    }

    /// The stream this hub's offsets belong to.
    pub fn stream(&self) -> &str {
        &self.stream
    }

    /// The offset of the last event delivered.
    pub fn latest(&self) -> u64 {
        self.delivered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .latest
    }

    /// Broadcasts the event at `offset` (the outbox follower; offsets only increase).
    pub fn deliver(&self, offset: u64, name: &str, payload: &str) {
        let mut delivered = self
            .delivered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Each offset once (the follower's order; a skipped gap is fine).
        if next_offset(delivered.latest, offset) == NextOffset::Past {
            return;
        }
        self.deliver_locked(&mut delivered, offset, name, payload);
    }

    /// Delivers the event at `offset` under the delivery lock (so the broadcast order is the
    /// offset order): the latest offset, the history, the broadcast.
    fn deliver_locked(&self, delivered: &mut Delivered, offset: u64, name: &str, payload: &str) {
        delivered.latest = offset;
        let frame = Frame::from(event_frame_text(name, payload, offset));
        self.retain(delivered, offset, &frame);
        self.broadcast(frame, Some(offset));
    }

    /// Keeps a delivered frame for resuming, when the history is the backlog.
    fn retain(&self, delivered: &mut Delivered, offset: u64, frame: &Frame) {
        if !matches!(self.backlog, Backlog::History) {
            return;
        }
        delivered.history.push_back((offset, frame.clone()));
        delivered.history_bytes = delivered.history_bytes.saturating_add(frame.len());
        while delivered.history.len() > HISTORY_FRAMES || delivered.history_bytes > HISTORY_BYTES {
            match delivered.history.pop_front() {
                Some((_, old)) => {
                    delivered.history_bytes = delivered.history_bytes.saturating_sub(old.len());
                }
                None => break,
            }
        }
    }

    /// Whether a client at `resume` can be brought up to `latest` without a refetch, and the
    /// frames to send it first (from the history; the outbox is read while sending).
    async fn resumable(&self, resume: Option<&Resume>, latest: u64) -> Option<Vec<Frame>> {
        let resume = resume?;
        if resume.stream != self.stream || resume.since > latest {
            return None;
        }
        if resume.since == latest {
            return Some(Vec::new());
        }
        // The event right after `since` must still be held.
        let held = |oldest: u64| oldest <= resume.since.saturating_add(1);
        match &self.backlog {
            Backlog::History => {
                let delivered = self
                    .delivered
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let oldest = delivered.history.front().map(|(offset, _)| *offset)?;
                held(oldest).then(|| {
                    delivered
                        .history
                        .iter()
                        .filter(|(offset, _)| *offset > resume.since && *offset <= latest)
                        .map(|(_, frame)| frame.clone())
                        .collect()
                })
            }
            Backlog::Outbox(db) => match outbox::oldest(db).await {
                Ok(oldest) => held(oldest?).then(Vec::new),
                Err(error) => {
                    tracing::warn!(%error, "outbox unreadable; the client refetches");
                    None
                }
            },
        }
    }

    /// The epoch `server.hello` announces.
    pub fn epoch(&self) -> String {
        self.hello
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .clone()
    }

    /// A `server.hello` frame: the events after `offset` follow; `resumed`: the client's own
    /// offset was honoured (nothing was lost).
    pub fn hello_frame(&self, offset: u64, resumed: bool) -> Frame {
        let hello = self.hello.read().unwrap_or_else(PoisonError::into_inner);
        Frame::from(frame_text(
            SERVER_HELLO,
            &json!({
                "epoch": hello.0,
                "started_at": hello.1,
                "stream": self.stream,
                "offset": offset,
                "resumed": resumed,
            }),
        ))
    }

    /// Announces a new epoch to every open socket (not resumed: a restart, clients refetch).
    pub fn hello(&self, epoch: &str, started_at: &str) {
        *self.hello.write().unwrap_or_else(PoisonError::into_inner) =
            (epoch.to_owned(), started_at.to_owned());
        let delivered = self
            .delivered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.broadcast(self.hello_frame(delivered.latest, false), None);
    }

    /// Broadcasts a frame as is, without an offset (the simulator's replay).
    pub fn send(&self, frame: Frame) {
        self.broadcast(frame, None);
    }

    fn broadcast(&self, frame: Frame, offset: Option<u64>) {
        let mut log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(log) = log.as_mut() {
            log.push(Instant::now());
        }
        let len = frame.len();
        let total = self
            .budget
            .bytes
            .fetch_add(len, Ordering::Relaxed)
            .saturating_add(len);
        let buffered = Arc::new(Buffered {
            text: frame,
            offset,
            budget: self.budget.clone(),
        });
        // No subscriber is not a failure: nobody is listening (the frame is dropped at once).
        let _ = self.sender.send(buffered);
        if total > self.budget.limit {
            tracing::warn!(
                bytes = total,
                limit = self.budget.limit,
                "WebSocket buffers over budget; closing the sockets that are behind"
            );
            self.budget.shed.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Buffered>> {
        self.sender.subscribe()
    }

    /// The bytes of the frames some socket has not written yet.
    pub fn buffered_bytes(&self) -> usize {
        self.budget.bytes.load(Ordering::Relaxed)
    }

    /// Starts recording publication instants (the load benchmark).
    pub fn record(&self) {
        *self.log.lock().unwrap_or_else(PoisonError::into_inner) = Some(Vec::new());
    }

    /// The publication instants recorded so far, in publication order.
    pub fn recorded(&self) -> Vec<Instant> {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .unwrap_or_default()
    }

    /// How many frames were broadcast since recording started.
    pub fn recorded_count(&self) -> usize {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map_or(0, Vec::len)
    }

    /// How many batches of broadcast frames this hub's sockets wrote (each one write and one
    /// flush; a socket's hello and resumed backlog are not counted).
    pub fn socket_writes(&self) -> u64 {
        self.socket_writes.load(Ordering::Relaxed)
    }

    /// Closes every socket (shutdown).
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Serves one WebSocket until it closes, the server shuts down or the socket lags;
    /// `resume`: where the client says it was (see the module docs).
    pub async fn serve_socket(&self, mut socket: WebSocket, resume: Option<Resume>) {
        let mut frames = self.subscribe();
        let mut closing = self.closing.subscribe();
        let mut shed = self.budget.shed.subscribe();
        if *closing.borrow_and_update() {
            return;
        }
        // Subscribed first: every event after `latest` is in `frames`, the ones up to it are
        // skipped there (sent from the backlog, or before the hello's offset).
        let latest = self.latest();
        let backlog = self.resumable(resume.as_ref(), latest).await;
        let resumed = backlog.is_some();
        let from = match (&resume, resumed) {
            (Some(resume), true) => resume.since,
            _ => latest,
        };
        if socket
            .send(Message::Text(self.hello_frame(from, resumed)))
            .await
            .is_err()
        {
            return;
        }
        for frame in backlog.unwrap_or_default() {
            if socket.send(Message::Text(frame)).await.is_err() {
                return;
            }
        }
        if let (Backlog::Outbox(db), true) = (&self.backlog, resumed) {
            let mut cursor = from;
            while cursor < latest {
                let rows = match outbox::read_after(db, cursor, Some(latest), 512).await {
                    Ok(rows) if !rows.is_empty() => rows,
                    Ok(_) => break,
                    Err(error) => {
                        tracing::warn!(%error, "outbox unreadable while resuming; closing");
                        close(&mut socket, 1011, "resume failed: reconnect").await;
                        return;
                    }
                };
                for row in rows {
                    cursor = row.offset;
                    let text = event_frame_text(&row.name, &row.payload, row.offset);
                    if socket.send(Message::Text(Frame::from(text))).await.is_err() {
                        return;
                    }
                }
            }
        }
        loop {
            tokio::select! {
                frame = frames.recv() => match frame {
                    Ok(frame) => {
                        // The frames already queued for this socket go out in one write.
                        let (batch, ended) = drain(&mut frames, frame, latest);
                        if !batch.is_empty() {
                            self.socket_writes.fetch_add(1, Ordering::Relaxed);
                        }
                        let sent = write_batch(&mut socket, &batch, &frames, &mut shed).await;
                        // Counted against the budget until written (see the module docs).
                        drop(batch);
                        match sent {
                            Some(true) => {}
                            Some(false) => break,
                            None => {
                                // Stuck mid-write behind a client that stopped reading: drop
                                // the connection (a close frame cannot follow a partial one).
                                tracing::warn!(behind = frames.len(), "WebSocket client stuck while over budget; dropping it");
                                return;
                            }
                        }
                        match ended {
                            None => {}
                            Some(Ended::Lagged(missed)) => {
                                tracing::warn!(missed, "WebSocket client lagged; closing it (it must refetch)");
                                close(&mut socket, 1013, "lagged: reconnect and refetch").await;
                                break;
                            }
                            Some(Ended::Closed) => break,
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "WebSocket client lagged; closing it (it must refetch)");
                        close(&mut socket, 1013, "lagged: reconnect and refetch").await;
                        break;
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                incoming = socket.recv() => match incoming {
                    // Pings are answered by the protocol layer; other client frames are ignored.
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                    Some(Ok(_)) => {}
                },
                _ = closing.changed() => {
                    close(&mut socket, 1001, "server shutting down").await;
                    break;
                }
                Ok(()) = shed.changed() => {
                    if !frames.is_empty() {
                        tracing::warn!(behind = frames.len(), "WebSocket client behind while over budget; closing it");
                        close(&mut socket, 1013, "lagged: reconnect and refetch").await;
                        break;
                    }
                }
            }
        }
    }
}

/// At most this many queued frames go out in one write.
const BATCH_FRAMES: usize = 64;

/// Why draining a socket's queue stopped short of empty.
enum Ended {
    Lagged(u64),
    Closed,
}

/// `first` and the frames queued behind it (up to [`BATCH_FRAMES`]), without the ones at or
/// before `latest` (sent from the backlog). A lag or a closed hub found while draining is
/// returned to act on once the batch is written: `try_recv` has already moved past the lag, so
/// it would not be reported again.
fn drain(
    frames: &mut broadcast::Receiver<Arc<Buffered>>,
    first: Arc<Buffered>,
    latest: u64,
) -> (Vec<Arc<Buffered>>, Option<Ended>) {
    let fresh = |frame: &Buffered| {
        frame
            .offset
            .is_none_or(|offset| next_offset(latest, offset) != NextOffset::Past)
    };
    let mut batch = Vec::new();
    if fresh(&first) {
        batch.push(first);
    }
    while batch.len() < BATCH_FRAMES {
        match frames.try_recv() {
            Ok(frame) => {
                if fresh(&frame) {
                    batch.push(frame);
                }
            }
            Err(broadcast::error::TryRecvError::Empty) => break,
            Err(broadcast::error::TryRecvError::Lagged(missed)) => {
                return (batch, Some(Ended::Lagged(missed)))
            }
            Err(broadcast::error::TryRecvError::Closed) => return (batch, Some(Ended::Closed)),
        }
    }
    (batch, None)
}

/// Writes `batch` and flushes once: `Some(true)` written, `Some(false)` the socket failed,
/// `None` the hub went over budget while this socket, with more frames queued, was still
/// writing (the caller drops it).
async fn write_batch(
    socket: &mut WebSocket,
    batch: &[Arc<Buffered>],
    frames: &broadcast::Receiver<Arc<Buffered>>,
    shed: &mut watch::Receiver<u64>,
) -> Option<bool> {
    if batch.is_empty() {
        return Some(true);
    }
    let send = async {
        for frame in batch {
            socket.feed(Message::Text(frame.text())).await?;
        }
        socket.flush().await
    };
    tokio::pin!(send);
    loop {
        tokio::select! {
            sent = &mut send => return Some(sent.is_ok()),
            Ok(()) = shed.changed() => {
                if !frames.is_empty() {
                    return None;
                }
            }
        }
    }
}

async fn close(socket: &mut WebSocket, code: u16, reason: &'static str) {
    let frame = CloseFrame {
        code,
        reason: Utf8Bytes::from_static(reason),
    };
    let _ = socket.send(Message::Close(Some(frame))).await;
}

/// The hub numbers the events itself (SQLite, one instance).
impl EventSink for Hub {
    fn publish(&self, event: Event) -> Result<(), PublishError> {
        if matches!(self.backlog, Backlog::Outbox(_)) {
            return Err(PublishError(
                "this hub follows the outbox: publish through it".into(),
            ));
        }
        let mut delivered = self
            .delivered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let offset = delivered.latest.saturating_add(1);
        self.deliver_locked(
            &mut delivered,
            offset,
            event.name,
            &event.payload.to_string(),
        );
        Ok(())
    }
}
