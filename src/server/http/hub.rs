//! The WebSocket hub: the [`EventSink`] of every service. Each event is serialized once into a
//! frame `{"type": <event name>, "payload": {...}}` and broadcast to every socket; a socket
//! receives `server.hello` first, then every frame published after it connected, in publication
//! order. A socket that falls more than the buffer behind is closed (code 1013): its client
//! reconnects and refetches, it never silently misses an event.

use std::sync::{Mutex, PoisonError, RwLock};
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

/// The hub. See the module docs.
pub struct Hub {
    sender: broadcast::Sender<Frame>,
    hello: RwLock<(String, String)>,
    closing: watch::Sender<bool>,
    /// Publication instants of every broadcast frame, when recording (the load benchmark).
    log: Mutex<Option<Vec<Instant>>>,
}

impl Hub {
    pub fn new(buffer: usize, epoch: &str, started_at: &str) -> Hub {
        let (sender, _) = broadcast::channel(buffer.max(16));
        let (closing, _) = watch::channel(false);
        Hub {
            sender,
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
        // No subscriber is not a failure: nobody is listening.
        let _ = self.sender.send(frame);
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Frame> {
        self.sender.subscribe()
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
                        if socket.send(Message::Text(frame)).await.is_err() {
                            break;
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
