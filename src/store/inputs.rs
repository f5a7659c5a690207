//! The store's input and output types: decoded events and snapshots (`MessageEvent`,
//! `TurnEvent`, `TaskInput`), the selection's load, ticket and outcome, the clarification
//! `Bundle`, and the `Changes` set.

use crate::rules::model::{Message, PendingAction, Session, StatusSummary, Turn};
use crate::rules::revision::PendingProjection;

#[cfg(doc)]
use super::ProjectionStore;

/// `session.message.added | updated | deleted`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageEventKind {
    Added,
    Updated,
    Deleted,
}

impl MessageEventKind {
    pub fn parse(text: &str) -> Option<MessageEventKind> {
        match text {
            "added" => Some(MessageEventKind::Added),
            "updated" => Some(MessageEventKind::Updated),
            "deleted" => Some(MessageEventKind::Deleted),
            _ => None,
        }
    }
}

/// A decoded `session.message.*` event.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageEvent {
    pub session_id: String,
    pub task_id: Option<String>,
    pub message: Message,
    /// `None` when both projection keys were omitted (the backend could not project).
    pub projection: Option<PendingProjection>,
}

/// A decoded turn started/completed event.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnEvent {
    pub session_id: String,
    pub task_id: Option<String>,
    pub turn: Turn,
}

/// A task from `task.updated` or a REST snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskInput<P> {
    pub id: String,
    /// `None`: the `status_summary` key is absent; `Some(None)`: it is `null`.
    pub status_summary: Option<Option<(StatusSummary, P)>>,
    pub invalidated: bool,
    /// `None` when the key is absent.
    pub task_pending_action: Option<Option<PendingAction>>,
}

impl<P> TaskInput<P> {
    /// The same input with its summary payload converted.
    pub fn map_payload<Q>(self, f: impl FnOnce(P) -> Q) -> TaskInput<Q> {
        TaskInput {
            id: self.id,
            status_summary: self
                .status_summary
                .map(|s| s.map(|(summary, payload)| (summary, f(payload)))),
            invalidated: self.invalidated,
            task_pending_action: self.task_pending_action,
        }
    }
}

/// How the session load of a selection ended (`S`: the sessions' ids, as in [`Session`]).
#[derive(Clone, Debug, PartialEq)]
pub enum SelectionLoad<S = String> {
    Loaded(Vec<Session<S>>),
    Failed,
    Aborted,
}

/// What `begin_selection` returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectionTicket {
    pub ticket: String,
    /// The session list must be (re)loaded before settling: always for a pending task.
    pub reload: bool,
}

/// The settled outcome of a selection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Navigation {
    Session(String),
    TaskOnly,
    Inert,
}

/// The active clarification bundle of a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bundle<'a> {
    pub pending_id: Option<&'a str>,
    pub message_ids: Vec<&'a str>,
}

/// Which tasks and sessions changed since the last [`ProjectionStore::take_changes`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    pub tasks: Vec<String>,
    pub sessions: Vec<String>,
    /// The inbox took a page, a seed or a failed read (SPEC §14).
    pub inbox: bool,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty() && self.sessions.is_empty() && !self.inbox
    }
}
