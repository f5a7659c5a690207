//! Every WebSocket event name the server sends, and the sink events go to. The services publish
//! `session.message.*`, `task.status_summary.updated`, `task.stalled` and
//! `session.state_changed`; the simulated agent (`http::sim`) also `session.created`, `turn.*`,
//! `task.updated` and `task.deleted`; the user's session delete (`http::actions`)
//! `session.deleted` and `task_session.error_changed`; the hub (`http::hub`) opens every connection with
//! `server.hello`.

use serde_json::Value;
use tokio::sync::broadcast;

/// `task.status_summary.updated`: `{task_id, workspace_id, status_summary}`.
pub const TASK_STATUS_SUMMARY_UPDATED: &str = "task.status_summary.updated";
/// `task.stalled`: `{task_id, workspace_id, sessions: [{session_id, silence_seconds}]}`.
pub const TASK_STALLED: &str = "task.stalled";
/// A session's state changed: `{session_id, task_id, state, previous_state, reason, updated_at}`.
pub const SESSION_STATE_CHANGED: &str = "session.state_changed";
pub const SESSION_MESSAGE_ADDED: &str = "session.message.added";
pub const SESSION_MESSAGE_UPDATED: &str = "session.message.updated";
pub const SESSION_MESSAGE_DELETED: &str = "session.message.deleted";
/// `session.created`: the Session (projection keys included).
pub const SESSION_CREATED: &str = "session.created";
/// `turn.started`: the Turn.
pub const TURN_STARTED: &str = "turn.started";
/// `turn.completed`: the Turn.
pub const TURN_COMPLETED: &str = "turn.completed";
/// `task.updated`: the Task as the task list returns it.
pub const TASK_UPDATED: &str = "task.updated";
/// `task.deleted`: `{task_id}`.
pub const TASK_DELETED: &str = "task.deleted";
/// `session.deleted`: `{session_id, task_id, workspace_id}`, the session and its rows are gone.
pub const SESSION_DELETED: &str = "session.deleted";
/// `task_session.error_changed`: `{task_id, session_id, active}` (the reference client's
/// backend publishes it with `active: false` when a session is deleted).
pub const TASK_SESSION_ERROR_CHANGED: &str = "task_session.error_changed";
/// `server.hello`: `{"epoch", "started_at", "stream", "offset", "resumed"}`, the first frame of
/// every connection (sent by the hub, never published).
pub const SERVER_HELLO: &str = "server.hello";

/// One published event: its name and its JSON payload (wire shape, snake_case).
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub name: &'static str,
    pub payload: Value,
}

/// Publication failed (the write it reports is already durable; clients converge on their next
/// event or read).
#[derive(Debug, thiserror::Error)]
#[error("event publication failed: {0}")]
pub struct PublishError(pub String);

/// Where events go (a WebSocket hub, a message bus, a test recorder).
pub trait EventSink: Send + Sync {
    fn publish(&self, event: Event) -> Result<(), PublishError>;
}

/// An in-memory broadcast sink (tests and the reference server): every subscriber sees every
/// event published after it subscribed.
#[derive(Clone, Debug)]
pub struct BroadcastSink {
    sender: broadcast::Sender<Event>,
}

impl BroadcastSink {
    pub fn new(capacity: usize) -> BroadcastSink {
        let (sender, _) = broadcast::channel(capacity.max(1));
        BroadcastSink { sender }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.sender.subscribe()
    }
}

impl Default for BroadcastSink {
    fn default() -> Self {
        BroadcastSink::new(1024)
    }
}

impl EventSink for BroadcastSink {
    fn publish(&self, event: Event) -> Result<(), PublishError> {
        // No subscriber is not a failure: nobody is listening.
        let _ = self.sender.send(event);
        Ok(())
    }
}

/// Drains what a receiver has buffered (tests).
pub fn drain(receiver: &mut broadcast::Receiver<Event>) -> Vec<Event> {
    let mut events = Vec::new();
    while let Ok(event) = receiver.try_recv() {
        events.push(event);
    }
    events
}
