//! The WebSocket hub: the [`EventSink`] of every service. Each event is serialized once into a
//! frame `{"type": <event name>, "payload": {...}}` and broadcast to every socket; a socket
//! receives `server.hello` first, then every frame published after it connected, in publication
//! order. A socket that falls more than the buffer behind is closed (code 1013): its client
//! reconnects and refetches, it never silently misses an event.
//!
//! Memory is bounded per socket and in total. The buffer is one ring shared by every socket, so
//! no socket holds more than `ws_buffer` frames; a frame stays counted against the hub's byte
//! budget (`ws_buffer_bytes`) until every socket has written it. When a publication takes the
//! total over the budget, every socket that still has frames to write is closed (a socket stuck
//! writing to a client that stopped reading is dropped without a close frame), which releases
//! what it held.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Instant;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use serde_json::{json, Value};
use tokio::sync::{broadcast, watch};

use crate::server::events::{Event, EventSink, PublishError};

/// `server.hello`: `{"epoch", "started_at"}`, the first frame of every connection.
pub const SERVER_HELLO: &str = "server.hello";

/// One pre-serialized text frame (cheap to clone: reference counted).
pub type Frame = Utf8Bytes;

/// The text of a frame.
pub fn frame_text(name: &str, payload: &Value) -> String {
    json!({ "type": name, "payload": payload }).to_string()
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
}

impl Hub {
    /// A hub whose sockets may fall `buffer` frames behind, holding at most about `bytes` of
    /// frames not yet written to every socket.
    pub fn new(buffer: usize, bytes: usize, epoch: &str, started_at: &str) -> Hub {
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

    /// The current `server.hello` frame.
    pub fn hello_frame(&self) -> Frame {
        let hello = self.hello.read().unwrap_or_else(PoisonError::into_inner);
        Frame::from(frame_text(
            SERVER_HELLO,
            &json!({ "epoch": hello.0, "started_at": hello.1 }),
        ))
    }

    /// Announces a new epoch to every open socket.
    pub fn hello(&self, epoch: &str, started_at: &str) {
        *self.hello.write().unwrap_or_else(PoisonError::into_inner) =
            (epoch.to_owned(), started_at.to_owned());
        self.send(self.hello_frame());
    }

    /// Broadcasts a frame as is (also the simulator's replay).
    pub fn send(&self, frame: Frame) {
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

    /// Closes every socket (shutdown).
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Serves one WebSocket until it closes, the server shuts down or the socket lags.
    pub async fn serve_socket(&self, mut socket: WebSocket) {
        let mut frames = self.subscribe();
        let mut closing = self.closing.subscribe();
        let mut shed = self.budget.shed.subscribe();
        if *closing.borrow_and_update() {
            return;
        }
        if socket
            .send(Message::Text(self.hello_frame()))
            .await
            .is_err()
        {
            return;
        }
        loop {
            tokio::select! {
                frame = frames.recv() => match frame {
                    Ok(frame) => {
                        let text = frame.text();
                        drop(frame);
                        let send = socket.send(Message::Text(text));
                        tokio::pin!(send);
                        let sent = loop {
                            tokio::select! {
                                sent = &mut send => break Some(sent.is_ok()),
                                Ok(()) = shed.changed() => {
                                    if !frames.is_empty() {
                                        break None;
                                    }
                                }
                            }
                        };
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

async fn close(socket: &mut WebSocket, code: u16, reason: &'static str) {
    let frame = CloseFrame {
        code,
        reason: Utf8Bytes::from_static(reason),
    };
    let _ = socket.send(Message::Close(Some(frame))).await;
}

impl EventSink for Hub {
    fn publish(&self, event: Event) -> Result<(), PublishError> {
        self.send(Frame::from(frame_text(event.name, &event.payload)));
        Ok(())
    }
}
