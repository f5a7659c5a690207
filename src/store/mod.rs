//! `ProjectionStore`: the stateful engine. The app feeds it every REST snapshot and WebSocket
//! event as it arrives and reads small, ready answers back. Every decision is made by the rule
//! functions of [`crate::rules`]; the store only keeps the data they read, indexed so one event
//! costs O(log n) and one query reads only the rows the rules can look at (see
//! [`messages`]).
//!
//! `P` is the caller's status-summary object, kept untouched and handed back as is (`JsValue` in
//! the wasm binding, `serde_json::Value` natively).
//!
//! Bad input never reaches the store: callers decode with [`crate::wire`] first, and every
//! `apply_*` that can still reject input (a session of another task, an unknown fetch token)
//! validates before it mutates, so a rejected call leaves the state unchanged.

mod action;
mod apply;
mod arena;
pub mod explain;
mod inbox;
/// The id hash, at the crate root since the rules use it too (`crate::store::hash` stays its
/// path for the store and its binding).
pub(crate) use crate::hash;
mod inputs;
mod introspect;
pub(crate) mod messages;
mod packed;
mod queries;
mod reason;
pub mod rejections;
mod remembered;
mod selection;
mod session;
pub mod snapshot;
mod tasks;

use std::collections::VecDeque;
use std::sync::Arc;

use crate::rules::connection;

use hash::{HashMap, IdMap};

pub use action::{AttemptState, Replied, Settled, Started};
pub use inbox::{AnswerRow, InboxAnswer, InboxPage, InboxRow, InboxSeed};
pub use inputs::{
    Bundle, Changes, MessageEvent, MessageEventKind, Navigation, SelectionLoad, SelectionTicket,
    TaskInput, TurnEvent,
};
pub use messages::MessageParts;
pub use queries::BlockedPermission;
pub use reason::Reason;
use rejections::Rejections;
use remembered::Remembered;
use selection::ActiveSelection;
use session::{SessionChanges, SessionEntry};
use tasks::{Captured, TaskEntry};

/// How many fetch tokens are remembered; older ones are forgotten (their snapshot is rejected).
const MAX_FETCHES: usize = 32;

/// How many removed tasks, and sessions of removed tasks, are remembered (docs/convergence.md:
/// what forgetting one costs).
const REMOVED_TASKS: usize = 1024;
const REMOVED_SESSIONS: usize = 4096;

/// A session id as the store holds it: one allocation, shared by the sessions table, the task's
/// session list and the change set.
type SessionId = Arc<str>;

/// The stateful engine. See the module docs.
#[derive(Clone, Debug)]
pub struct ProjectionStore<P> {
    tasks: IdMap<Box<str>, TaskEntry<P>>,
    /// Boxed: the table moves only pointers when it grows, and a task list of many sessions does
    /// not grow it by a whole entry per bucket. A session id is allocated once: the task's
    /// session list and the change set share the key.
    sessions: IdMap<SessionId, Box<SessionEntry>>,
    fetches: VecDeque<(u64, Captured)>,
    next_fetch: u64,
    selection: Option<ActiveSelection>,
    /// The newest tickets a newer selection replaced (so their settle says why it is inert).
    superseded: VecDeque<Box<str>>,
    /// Removed tasks, and the sessions known to be theirs: removal is final
    /// ([`crate::rules::order::applies_after_removal`]).
    removed_tasks: Remembered,
    removed_sessions: Remembered,
    /// The version of the last removal: the version of every removed task and session, whose
    /// entries are gone (their answers are known: removed, SPEC §11).
    removals: u64,
    /// A set (the values are unused, 0): the map type of the message index's names
    /// (`messages::slots`), so the wasm holds one instantiation of the table's code for both.
    changed_tasks: HashMap<Box<str>, u32>,
    changed_sessions: SessionChanges,
    /// Counts session list calls (`SessionEntry::listed_in`).
    list_calls: u64,
    /// Whether changes are recorded for [`Self::take_changes`] (off while nobody listens, so
    /// an event costs no allocation for a change set that would be dropped).
    track_changes: bool,
    version: u64,
    /// The server epoch of the last `server.hello` applied (`None` before the first).
    server_epoch: Option<Box<str>>,
    /// Recent rejected inputs, for [`Self::explain`] (not part of the decision state).
    rejected: Rejections,
    /// Where the state held stands in the server's event stream ([`rules::connection::Position`]).
    position: Option<(Box<str>, u64)>,
    /// The state was restored from storage and nothing has confirmed it yet (SPEC §12).
    restored: bool,
    /// The user's responds, oldest first (SPEC §13; not part of a snapshot: a request in flight
    /// belongs to the page that sent it).
    attempts: Vec<action::Attempt>,
    next_attempt: u64,
    /// The workspace's inbox (SPEC §14; not part of a snapshot).
    inbox: Option<Box<inbox::Inbox>>,
    /// The inbox changed since the last [`Self::take_changes`].
    changed_inbox: bool,
    /// How many frames were taken (a boot seed holds until the next).
    frames: u64,
    /// The offset of the frame being applied (0: none): the sessions it changes take it.
    frame_at: u64,
}

impl<P> Default for ProjectionStore<P> {
    fn default() -> Self {
        ProjectionStore {
            tasks: IdMap::default(),
            sessions: IdMap::default(),
            fetches: VecDeque::new(),
            next_fetch: 1,
            selection: None,
            superseded: VecDeque::new(),
            removed_tasks: Remembered::new(REMOVED_TASKS),
            removed_sessions: Remembered::new(REMOVED_SESSIONS),
            removals: 0,
            changed_tasks: HashMap::default(),
            changed_sessions: SessionChanges::default(),
            list_calls: 0,
            track_changes: true,
            version: 0,
            server_epoch: None,
            rejected: Rejections::default(),
            position: None,
            restored: false,
            attempts: Vec::new(),
            next_attempt: 0,
            inbox: None,
            changed_inbox: false,
            frames: 0,
            frame_at: 0,
        }
    }
}

impl<P: Clone> ProjectionStore<P> {
    pub fn new() -> Self {
        Self::default()
    }

    /// A store that records no changes until [`Self::set_change_tracking`] turns it on.
    pub fn without_change_tracking() -> Self {
        ProjectionStore {
            track_changes: false,
            ..Self::default()
        }
    }

    /// A connection's `server.hello` with the server's `epoch`, and whether the server
    /// `resumed` the client's stream: what it means for the state held
    /// ([`crate::rules::connection::hello`]); the epoch is remembered (a resumed hello's too). No
    /// answer changes.
    pub fn apply_hello(&mut self, epoch: &str, resumed: bool) -> crate::rules::connection::Hello {
        self.apply_hello_at(epoch, resumed, None, None)
    }

    /// [`Self::apply_hello`] with the hello's `stream` and `offset`, which place the state held
    /// in the stream ([`connection::position_after_hello`]). A hello confirms restored state: what
    /// the connection misses is refetched, or the stream resumed.
    pub fn apply_hello_at(
        &mut self,
        epoch: &str,
        resumed: bool,
        stream: Option<&str>,
        offset: Option<u64>,
    ) -> crate::rules::connection::Hello {
        let hello = crate::rules::connection::hello(self.server_epoch.as_deref(), epoch, resumed);
        // Kept as is when it is the same text (no allocation per reconnection).
        if self.server_epoch.as_deref() != Some(epoch) {
            self.server_epoch = Some(epoch.into());
        }
        let held = self.held_position();
        let position =
            connection::position_after_hello(held, stream.map(Box::from), offset, resumed);
        self.set_position(position);
        self.confirm_restored();
        hello
    }

    /// What was restored is confirmed (a hello, or a task snapshot replaced it): `restored()`
    /// turns false, the version moves and every task counts as changed, so a page's "restored"
    /// hint updates.
    fn confirm_restored(&mut self) {
        if !std::mem::replace(&mut self.restored, false) {
            return;
        }
        self.bump();
        let ids: Vec<Box<str>> = self.tasks.keys().cloned().collect();
        if ids.is_empty() {
            // A snapshot of sessions only: they are what changed.
            let sessions: Vec<SessionId> = self.sessions.keys().cloned().collect();
            for id in sessions {
                self.touch_session(&id);
            }
        }
        for id in ids {
            self.touch_task(&id);
        }
    }

    /// The held position, owned (hellos and REST reads are rare; frames move it in place).
    fn held_position(&self) -> Option<connection::Position<Box<str>>> {
        self.position
            .clone()
            .map(|(stream, offset)| connection::Position { stream, offset })
    }

    /// The stream position moves; offsets of another stream than the new one mean nothing in
    /// it, so the sessions' are forgotten (each counts as changed by no frame).
    fn set_position(&mut self, position: Option<connection::Position<Box<str>>>) {
        let position = position.map(|p| (p.stream, p.offset));
        #[cfg(feature = "inbox")]
        if position.as_ref().map(|p| &p.0) != self.position.as_ref().map(|p| &p.0) {
            for entry in self.sessions.values_mut() {
                entry.offset = 0;
            }
        }
        self.position = position;
    }

    /// The frame at `offset` of the stream begins (`None`: an input that is no frame): every
    /// session it changes remembers the offset (the inbox places its page by it, SPEC §14).
    pub fn begin_frame(&mut self, offset: Option<u64>) {
        self.frame_at = offset.unwrap_or(0);
    }

    /// A frame at `offset` of the stream was taken ([`connection::position_after_frame`]).
    pub fn apply_frame_offset(&mut self, offset: u64) {
        self.frame_at = 0;
        self.frames = self.frames.wrapping_add(1);
        if let Some((_, held)) = &mut self.position {
            let at = connection::Position {
                stream: (),
                offset: *held,
            };
            if let Some(moved) = connection::position_after_frame(Some(at), offset) {
                *held = moved.offset;
            }
        }
    }

    /// The REST state applied was read at `offset` of `stream`
    /// ([`connection::position_after_rest`]).
    pub fn apply_stream_position(&mut self, stream: &str, offset: u64) {
        let position =
            connection::position_after_rest(self.held_position(), Box::from(stream), offset);
        self.set_position(position);
    }

    /// Where the state held stands in the server's event stream: its stream and offset.
    pub fn stream_position(&self) -> (Option<&str>, Option<u64>) {
        match &self.position {
            Some((stream, offset)) => (Some(stream), Some(*offset)),
            None => (None, None),
        }
    }

    /// Whether the state was restored from storage (hydrated as restored) and not yet confirmed
    /// by a `server.hello` or a task snapshot.
    pub fn restored(&self) -> bool {
        self.restored
    }

    /// Increases on every change of the state.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The tasks and sessions changed since the last call (in no particular order).
    pub fn take_changes(&mut self) -> Changes {
        Changes {
            tasks: self
                .changed_tasks
                .drain()
                .map(|(id, _)| String::from(id))
                .collect(),
            sessions: self.changed_sessions.take(),
            inbox: std::mem::take(&mut self.changed_inbox),
        }
    }

    /// Turns change recording on or off (off: nothing is recorded, and what was is dropped).
    pub fn set_change_tracking(&mut self, on: bool) {
        self.track_changes = on;
        if !on {
            self.clear_changes();
        }
    }

    /// Whether changes are recorded ([`Self::set_change_tracking`]).
    pub fn tracks_changes(&self) -> bool {
        self.track_changes
    }

    /// Forgets the recorded changes (nobody is listening).
    pub fn clear_changes(&mut self) {
        self.changed_inbox = false;
        self.changed_tasks.clear();
        self.changed_sessions.clear();
    }

    /// Whether changes are waiting for [`Self::take_changes`].
    pub fn has_changes(&self) -> bool {
        self.changed_inbox || !self.changed_tasks.is_empty() || !self.changed_sessions.is_empty()
    }

    fn bump(&mut self) -> u64 {
        self.version = self.version.wrapping_add(1);
        self.version
    }

    /// Records a change of a session, and of its task (whose answers read its sessions).
    fn touch_session(&mut self, session_id: &str) {
        self.touch_session_with(session_id, true);
    }

    /// [`Self::touch_session`]; `discovery`: whether the change can move the current turn or the
    /// clarification bundle (see `SessionEntry::discovery`; when unsure, it can).
    fn touch_session_with(&mut self, session_id: &str, discovery: bool) {
        let version = self.bump();
        let track = self.track_changes;
        let Some((id, entry)) = self.sessions.get_key_value_mut(session_id) else {
            if track {
                self.changed_sessions.record_absent(session_id);
            }
            return;
        };
        if track {
            self.changed_sessions.record(id, entry);
        }
        #[cfg(feature = "inbox")]
        {
            entry.offset = entry.offset.max(self.frame_at);
        }
        entry.version = version;
        if discovery {
            entry.discovery = version;
        }
        // Disjoint fields: no copy of the task id unless it joins the change set.
        if let Some(task_id) = entry.task_id.as_deref() {
            if let Some(task) = self.tasks.get_mut(task_id) {
                task.version = version;
            }
            if track && !self.changed_tasks.contains_key(task_id) {
                self.changed_tasks.insert(Box::from(task_id), 0);
            }
        }
    }

    fn touch_task(&mut self, task_id: &str) {
        let version = self.bump();
        if let Some(entry) = self.tasks.get_mut(task_id) {
            entry.version = version;
        }
        if self.track_changes && !self.changed_tasks.contains_key(task_id) {
            self.changed_tasks.insert(Box::from(task_id), 0);
        }
    }

    /// The version of a session's state (changes whenever any answer about it may change).
    pub fn session_version(&self, session_id: &str) -> u64 {
        match self.sessions.get(session_id) {
            Some(s) => s.version,
            None => self.absent_version(self.is_removed_session(session_id)),
        }
    }

    /// The version of the inputs of a session's current turn and clarification bundle: while it
    /// is unchanged, `current_turn_id`, `pending_clarification` and `hidden_message_ids` answer
    /// the same (`tests/store_properties.rs` checks it).
    pub fn discovery_version(&self, session_id: &str) -> u64 {
        match self.sessions.get(session_id) {
            Some(s) => s.discovery,
            None => self.absent_version(self.is_removed_session(session_id)),
        }
    }

    /// The version of a task's state: its own fields and every change of its sessions.
    pub fn task_version(&self, task_id: &str) -> u64 {
        match self.tasks.get(task_id) {
            Some(t) => t.version,
            None => self.absent_version(self.is_removed_task(task_id)),
        }
    }

    /// The version of an id the store holds no entry for: 0 while not heard of, the last
    /// removal's once removed.
    fn absent_version(&self, removed: bool) -> u64 {
        if removed {
            self.removals
        } else {
            0
        }
    }

    fn session_mut(&mut self, session_id: &str) -> &mut SessionEntry {
        // No key copy when the session is known (the common case: every event).
        self.sessions.entry_ref(session_id).or_default()
    }
}
