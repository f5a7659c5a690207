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

mod arena;
pub(crate) mod hash;
pub(crate) mod messages;
mod packed;
mod reason;

use std::cell::Cell;
use std::collections::VecDeque;
use std::hash::{BuildHasher, Hash, Hasher};

use hash::{HashMap, HashSet};

use crate::error::WireError;
use crate::rules::clarification::{considered, pending_bundle, pending_request, Considered, Scope};
use crate::rules::model::{
    Message, PendingAction, Revision, Session, SessionRecord, SessionState, StatusSummary, Turn,
};
use crate::rules::owner::{
    resolve_owner, settle_selection, Load, Owner, SelectionOutcome, Settle, TaskMark,
};
use crate::rules::pending::{
    effective_task_pending_action, session_pending_action_with, task_pending_action,
};
use crate::rules::revision::{can_replace, merge_projection, PendingProjection, ReplaceReason};
use crate::rules::summary::{
    is_newer_summary, merge_fetched_summary, FetchStart, FetchedSummary, FetchedTask,
};
use crate::rules::turn::{current_turn, CurrentTurn, TurnReason};
use crate::rules::{clarification, model};

pub use messages::MessageParts;
use messages::{MessageIndex, Upsert};
pub use reason::Reason;

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

/// How the session load of a selection ended.
#[derive(Clone, Debug, PartialEq)]
pub enum SelectionLoad {
    Loaded(Vec<Session>),
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
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty() && self.sessions.is_empty()
    }
}

#[derive(Clone, Debug)]
struct HeldSummary<P> {
    summary: StatusSummary,
    payload: P,
}

impl<P> HeldSummary<P> {
    /// A decoded summary with the caller's object.
    fn held((summary, payload): (StatusSummary, P)) -> HeldSummary<P> {
        HeldSummary { summary, payload }
    }

    fn revision(&self) -> Option<u64> {
        self.summary.revision
    }
}

#[derive(Clone, Debug)]
struct TaskEntry<P> {
    /// The task itself was described (task.updated, a snapshot or a summary event), not only
    /// referenced by a session list.
    known: bool,
    summary: Option<HeldSummary<P>>,
    task_pending_action: Option<PendingAction>,
    /// The task's session list (newest first), once loaded.
    sessions: Option<Vec<Box<str>>>,
    version: u64,
}

impl<P> Default for TaskEntry<P> {
    fn default() -> Self {
        TaskEntry {
            known: false,
            summary: None,
            task_pending_action: None,
            sessions: None,
            version: 0,
        }
    }
}

impl<P> TaskEntry<P> {
    /// The task as the §4 rule reads it.
    fn as_task(&self) -> model::Task {
        model::Task {
            status_summary: self.summary.as_ref().map(|s| s.summary),
            task_pending_action: self.task_pending_action,
            ..model::Task::default()
        }
    }
}

#[derive(Clone, Debug, Default)]
struct SessionEntry {
    task_id: Option<Box<str>>,
    /// Present in its task's loaded session list.
    listed: bool,
    state: Option<SessionState>,
    is_primary: bool,
    projection: PendingProjection,
    turns: Option<Vec<Turn>>,
    /// Turn events received before the turn list.
    early_turns: Vec<Turn>,
    messages: MessageIndex,
    version: u64,
    /// The version at the last change that can move the session's current turn or clarification
    /// bundle (turns, state, projected action, request rows, and any row while a reservation
    /// exists or the current turn is unknown). Other changes (ordinary messages of a known
    /// turn, a new revision of the same action) leave it: the cached answers stay valid.
    discovery: u64,
    /// The current turn, computed once per change of turns, state or (with a reservation among
    /// the turns) messages.
    current: Cell<Option<(CurrentTurn<usize>, TurnReason)>>,
    /// Some turn is an unpublished reservation (messages can then change the current turn).
    has_reservation: bool,
}

impl SessionEntry {
    /// The session is known to belong to another task than `task_id`.
    fn belongs_elsewhere(&self, task_id: Option<&str>) -> bool {
        matches!((self.task_id.as_deref(), task_id), (Some(held), Some(t)) if held != t)
    }

    /// Merges a projection under the revision rule (SPEC §5); also says whether it changed.
    fn merge_projection(&mut self, incoming: &PendingProjection) -> (Reason, bool) {
        let (replace, why) = can_replace(
            self.projection.revision.as_ref(),
            incoming.revision.as_ref(),
        );
        let merged = merge_projection(&self.projection, incoming);
        if merged == self.projection {
            let why = if replace || incoming.revision.is_none() {
                Reason::Unchanged
            } else {
                Reason::from_replace(why)
            };
            return (why, false);
        }
        self.projection = merged;
        let why = if self.listed {
            Reason::Applied
        } else {
            Reason::BufferedUntilSessionList
        };
        (why, true)
    }

    /// Tags a session whose task is not known yet.
    fn adopt_task(&mut self, task_id: Option<&str>) {
        if self.task_id.is_none() {
            self.task_id = task_id.map(Box::from);
        }
    }

    fn set_turns(&mut self, turns: Vec<Turn>) {
        self.has_reservation = turns
            .iter()
            .any(|t| t.flags.prompt_dispatch_pending && !t.flags.prompt_dispatch_attempted);
        self.turns = Some(turns);
        self.current.set(None);
    }

    fn set_state(&mut self, state: Option<SessionState>) {
        if self.state != state {
            self.state = state;
            self.current.set(None);
        }
    }

    /// Messages changed: the current turn can only move when a reservation exists.
    fn messages_changed(&self) {
        if self.has_reservation {
            self.current.set(None);
        }
    }
}

/// A session entry with its id, seen through [`SessionRecord`].
#[derive(Clone, Copy)]
struct SessionRef<'a> {
    id: &'a str,
    entry: &'a SessionEntry,
}

impl SessionRecord for SessionRef<'_> {
    fn id(&self) -> &str {
        self.id
    }
    fn task_id(&self) -> Option<&str> {
        self.entry.task_id.as_deref()
    }
    fn state(&self) -> Option<SessionState> {
        self.entry.state
    }
    fn is_primary(&self) -> bool {
        self.entry.is_primary
    }
    fn action(&self) -> Option<PendingAction> {
        self.entry.projection.action.flatten()
    }
}

#[derive(Clone, Debug)]
struct ActiveSelection {
    ticket: String,
    task_id: Box<str>,
    at_start: Option<TaskMark>,
    preferred: Option<Box<str>>,
    active_task_changed: bool,
}

/// What a fetch token captured: each task present then, with its summary revision.
type Captured = HashMap<Box<str>, Option<u64>>;

/// FNV-1a: a deliberately small hasher for [`ProjectionStore::digest`] (tests only; keeps the
/// wasm small, where an inlined fast hasher per field cost ~10 KB).
#[derive(Clone, Copy, Default)]
struct Fnv;

struct FnvState(u64);

impl Hasher for FnvState {
    #[inline(never)]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl BuildHasher for Fnv {
    type Hasher = FnvState;
    fn build_hasher(&self) -> FnvState {
        FnvState(0xcbf2_9ce4_8422_2325)
    }
}

/// How many superseded selection tickets are remembered.
const MAX_SUPERSEDED: usize = 16;

/// How many fetch tokens are remembered; older ones are forgotten (their snapshot is rejected).
const MAX_FETCHES: usize = 32;

/// The stateful engine. See the module docs.
#[derive(Clone, Debug)]
pub struct ProjectionStore<P> {
    tasks: HashMap<Box<str>, TaskEntry<P>>,
    sessions: HashMap<Box<str>, SessionEntry>,
    fetches: VecDeque<(u64, Captured)>,
    next_fetch: u64,
    selection: Option<ActiveSelection>,
    /// The newest tickets a newer selection replaced (so their settle says why it is inert).
    superseded: VecDeque<Box<str>>,
    changed_tasks: HashSet<Box<str>>,
    changed_sessions: HashSet<Box<str>>,
    /// Whether changes are recorded for [`Self::take_changes`] (off while nobody listens, so
    /// an event costs no allocation for a change set that would be dropped).
    track_changes: bool,
    version: u64,
}

impl<P> Default for ProjectionStore<P> {
    fn default() -> Self {
        ProjectionStore {
            tasks: HashMap::default(),
            sessions: HashMap::default(),
            fetches: VecDeque::new(),
            next_fetch: 1,
            selection: None,
            superseded: VecDeque::new(),
            changed_tasks: HashSet::default(),
            changed_sessions: HashSet::default(),
            track_changes: true,
            version: 0,
        }
    }
}

fn turn_is_stale(incoming: &Turn, stored: &Turn) -> bool {
    match (&stored.updated_at, &incoming.updated_at) {
        (Some(stored), Some(incoming)) => incoming < stored,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

fn upsert_turn(list: &mut Vec<Turn>, turn: Turn) -> bool {
    match list.iter_mut().find(|t| t.id == turn.id) {
        Some(stored) if turn_is_stale(&turn, stored) || *stored == turn => false,
        Some(stored) => {
            *stored = turn;
            true
        }
        None => {
            list.push(turn);
            true
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

    /// Increases on every change of the state.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The tasks and sessions changed since the last call (in no particular order).
    pub fn take_changes(&mut self) -> Changes {
        Changes {
            tasks: self.changed_tasks.drain().map(String::from).collect(),
            sessions: self.changed_sessions.drain().map(String::from).collect(),
        }
    }

    /// Turns change recording on or off (off: nothing is recorded, and what was is dropped).
    pub fn set_change_tracking(&mut self, on: bool) {
        self.track_changes = on;
        if !on {
            self.clear_changes();
        }
    }

    /// Forgets the recorded changes (nobody is listening).
    pub fn clear_changes(&mut self) {
        self.changed_tasks.clear();
        self.changed_sessions.clear();
    }

    /// Whether changes are waiting for [`Self::take_changes`].
    pub fn has_changes(&self) -> bool {
        !self.changed_tasks.is_empty() || !self.changed_sessions.is_empty()
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
        if track && !self.changed_sessions.contains(session_id) {
            self.changed_sessions.insert(Box::from(session_id));
        }
        let Some(entry) = self.sessions.get_mut(session_id) else {
            return;
        };
        entry.version = version;
        if discovery {
            entry.discovery = version;
        }
        // Disjoint fields: no copy of the task id unless it joins the change set.
        if let Some(task_id) = entry.task_id.as_deref() {
            if let Some(task) = self.tasks.get_mut(task_id) {
                task.version = version;
            }
            if track && !self.changed_tasks.contains(task_id) {
                self.changed_tasks.insert(Box::from(task_id));
            }
        }
    }

    fn touch_task(&mut self, task_id: &str) {
        let version = self.bump();
        if let Some(entry) = self.tasks.get_mut(task_id) {
            entry.version = version;
        }
        if self.track_changes && !self.changed_tasks.contains(task_id) {
            self.changed_tasks.insert(Box::from(task_id));
        }
    }

    /// The version of a session's state (changes whenever any answer about it may change).
    pub fn session_version(&self, session_id: &str) -> u64 {
        self.sessions.get(session_id).map_or(0, |s| s.version)
    }

    /// The version of the inputs of a session's current turn and clarification bundle: while it
    /// is unchanged, `current_turn_id`, `pending_clarification` and `hidden_message_ids` answer
    /// the same (`tests/store_properties.rs` checks it).
    pub fn discovery_version(&self, session_id: &str) -> u64 {
        self.sessions.get(session_id).map_or(0, |s| s.discovery)
    }

    /// The version of a task's state: its own fields and every change of its sessions.
    pub fn task_version(&self, task_id: &str) -> u64 {
        self.tasks.get(task_id).map_or(0, |t| t.version)
    }

    fn session_mut(&mut self, session_id: &str) -> &mut SessionEntry {
        // No key copy when the session is known (the common case: every event).
        self.sessions.entry_ref(session_id).or_default()
    }

    /// Merges a projection into a session (SPEC §5), buffering it on an unlisted session tagged
    /// with its task. A projection for another task than the session's is rejected.
    fn merge_session_projection(
        &mut self,
        session_id: &str,
        task_id: Option<&str>,
        incoming: &PendingProjection,
    ) -> Reason {
        let entry = self.session_mut(session_id);
        if entry.belongs_elsewhere(task_id) {
            return Reason::TaskMismatchRejected;
        }
        entry.adopt_task(task_id);
        let (why, changed) = entry.merge_projection(incoming);
        if changed {
            self.touch_session(session_id);
        }
        why
    }

    /// A session list may not hold a session of another task (`root` names the argument).
    fn check_sessions(task_id: &str, sessions: &[Session], root: &str) -> Result<(), WireError> {
        match sessions
            .iter()
            .position(|s| s.task_id.as_deref().is_some_and(|t| t != task_id))
        {
            Some(index) => Err(WireError::InvalidValue {
                field: format!("{root}[{index}].task_id"),
                problem: format!("the session belongs to another task than \"{task_id}\""),
            }),
            None => Ok(()),
        }
    }

    /// REST: a task's session list (newest first). Each session's state updates; its pending
    /// fields merge under the revision rule; projections buffered for these sessions merge too,
    /// unless they were tagged with another task.
    pub fn apply_session_list(
        &mut self,
        task_id: &str,
        sessions: &[Session],
    ) -> Result<Reason, WireError> {
        Self::check_sessions(task_id, sessions, "sessions")?;
        let new_list: Vec<Box<str>> = sessions.iter().map(|s| Box::from(s.id.as_str())).collect();
        let old_list = self
            .tasks
            .get(task_id)
            .and_then(|t| t.sessions.clone())
            .unwrap_or_default();
        for old in old_list.iter().filter(|id| !new_list.contains(id)) {
            if let Some(entry) = self.sessions.get_mut(old) {
                entry.listed = false;
                self.touch_session(old);
            }
        }
        for session in sessions {
            let entry = self.session_mut(&session.id);
            let mut changed = false;
            if entry.belongs_elsewhere(Some(task_id)) {
                // A buffered projection of another task is rejected (SPEC §5).
                entry.projection = PendingProjection::default();
                changed = true;
            }
            if entry.task_id.as_deref() != Some(task_id) {
                entry.task_id = Some(Box::from(task_id));
            }
            let incoming = PendingProjection {
                action: session.pending_action,
                revision: session.pending_action_revision.clone(),
            };
            let merged = merge_projection(&entry.projection, &incoming);
            changed |= merged != entry.projection
                || !entry.listed
                || entry.state != session.state
                || entry.is_primary != session.is_primary;
            entry.projection = merged;
            entry.listed = true;
            entry.set_state(session.state);
            entry.is_primary = session.is_primary;
            if changed {
                self.touch_session(&session.id);
            }
        }
        let task = self.tasks.entry(Box::from(task_id)).or_default();
        if task.sessions.as_ref() != Some(&new_list) {
            task.sessions = Some(new_list);
        }
        self.touch_task(task_id);
        Ok(Reason::Applied)
    }

    /// REST: a session's turn list. Turn events that arrived before it are merged (the newer
    /// `updated_at` wins).
    pub fn apply_turn_list(&mut self, session_id: &str, turns: Vec<Turn>) -> Reason {
        let entry = self.session_mut(session_id);
        let mut list = turns;
        for early in std::mem::take(&mut entry.early_turns) {
            upsert_turn(&mut list, early);
        }
        // A list read before a turn event that already arrived (a concurrent or late load) must
        // not drop that turn or roll it back: a held turn the list lacks is kept, and a held
        // turn replaces the list's only when its `updated_at` is strictly newer.
        if let Some(held) = &entry.turns {
            for turn in held {
                match list.iter_mut().find(|t| t.id == turn.id) {
                    None => list.push(turn.clone()),
                    Some(listed) => {
                        if let (Some(h), Some(l)) = (&turn.updated_at, &listed.updated_at) {
                            if h > l {
                                *listed = turn.clone();
                            }
                        }
                    }
                }
            }
        }
        if entry.turns.as_ref() == Some(&list) {
            return Reason::Unchanged;
        }
        entry.set_turns(list);
        self.touch_session(session_id);
        Reason::Applied
    }

    /// WebSocket: a turn started or completed.
    pub fn apply_turn_event(&mut self, event: TurnEvent) -> Reason {
        let session_id = event.session_id.as_str();
        let entry = self.session_mut(session_id);
        entry.adopt_task(event.task_id.as_deref());
        let Some(mut list) = entry.turns.take() else {
            // History unknown until the list arrives: keep the event to merge then.
            upsert_turn(&mut entry.early_turns, event.turn);
            return Reason::BufferedUntilTurnList;
        };
        let changed = upsert_turn(&mut list, event.turn);
        entry.set_turns(list);
        if changed {
            self.touch_session(session_id);
            Reason::Applied
        } else {
            Reason::Unchanged
        }
    }

    /// REST: a page of a session's messages (no projection).
    pub fn apply_message_page(&mut self, session_id: &str, page: &[Message]) -> Reason {
        self.apply_message_rows(session_id, page.iter().map(MessageParts::from))
    }

    /// [`Self::apply_message_page`] over borrowed rows.
    pub fn apply_message_rows<'a>(
        &mut self,
        session_id: &str,
        rows: impl IntoIterator<Item = MessageParts<'a>>,
    ) -> Reason {
        let entry = self.session_mut(session_id);
        let mut changed = false;
        for message in rows {
            // A page read before a WebSocket delete must not bring the message back.
            if entry.messages.is_buried(message.id) {
                continue;
            }
            changed |= matches!(
                entry.messages.upsert(&message),
                Upsert::Inserted | Upsert::Updated
            );
        }
        if changed {
            entry.messages_changed();
            self.touch_session(session_id);
            Reason::Applied
        } else {
            Reason::Unchanged
        }
    }

    /// WebSocket: `session.message.added | updated | deleted`. The row applies in event order
    /// unless it is older than the stored one; the projection merges under the revision rule,
    /// and an older update carries none (SPEC §5). An event naming another task than the
    /// session's is rejected whole.
    pub fn apply_message_event(&mut self, kind: MessageEventKind, event: &MessageEvent) -> Reason {
        self.apply_message(
            kind,
            &event.session_id,
            event.task_id.as_deref(),
            &MessageParts::from(&event.message),
            event.projection.as_ref(),
        )
    }

    /// [`Self::apply_message_event`] over borrowed parts (the wasm fast path holds its ids
    /// interned and builds no [`MessageEvent`]).
    pub fn apply_message(
        &mut self,
        kind: MessageEventKind,
        session_id: &str,
        task_id: Option<&str>,
        message: &MessageParts<'_>,
        projection: Option<&PendingProjection>,
    ) -> Reason {
        // One session lookup and one task lookup per event (the hot path).
        let entry = self.sessions.entry_ref(session_id).or_default();
        // A message of another task's session is misrouted: neither row nor projection apply.
        if entry.belongs_elsewhere(task_id) {
            return Reason::TaskMismatchRejected;
        }
        entry.adopt_task(task_id);
        // Whether this row can move the current turn or the bundle: a request row (before or
        // after), any row while a reservation exists or the current turn is unknown.
        let is_request = MessageIndex::is_request;
        let row_matters = entry.has_reservation
            || is_request(message.kind)
            || matches!(Self::current_turn_of(entry).0, CurrentTurn::Unknown)
            || entry.messages.kind_of(message.id).is_some_and(is_request);
        let row = match kind {
            MessageEventKind::Deleted => {
                entry.messages.bury(message.id);
                if entry.messages.remove(message.id) {
                    Upsert::Updated
                } else {
                    Upsert::Unchanged
                }
            }
            _ => {
                // Events apply in event order: a later event brings a deleted id back.
                entry.messages.unbury(message.id);
                entry.messages.upsert(message)
            }
        };
        let row_changed = matches!(row, Upsert::Inserted | Upsert::Updated);
        if row_changed {
            entry.messages_changed();
        }
        let action_before = entry.projection.action;
        let (reason, changed) = if row == Upsert::Stale {
            (Reason::OlderUpdateCarriesNoProjection, false)
        } else {
            match projection {
                Some(projection) => match (entry.merge_projection(projection), row_changed) {
                    ((Reason::Unchanged, _), true) => (Reason::Applied, true),
                    ((why, merged), _) => (why, merged || row_changed),
                },
                None if row_changed => (Reason::Applied, true),
                None => (Reason::Unchanged, false),
            }
        };
        if changed {
            let discovery =
                (row_changed && row_matters) || entry.projection.action != action_before;
            self.touch_session_with(session_id, discovery);
        }
        reason
    }

    /// WebSocket: a session changed (state, and the projection when its keys are present).
    pub fn apply_session_event(&mut self, session: &Session) -> Reason {
        let entry = self.session_mut(&session.id);
        if entry.belongs_elsewhere(session.task_id.as_deref()) {
            return Reason::TaskMismatchRejected;
        }
        // A WebSocket session event is a snapshot of one moment: when its revision is older
        // than the held one, its state is as old as its projection, and is not applied either
        // (a delayed frame from before a restart must not turn a RUNNING session back into
        // WAITING_FOR_INPUT). REST session lists keep SPEC §5's rule: state always updates.
        // Without a revision (legacy, or the backend could not project) the state applies.
        let (replace, why) = can_replace(
            entry.projection.revision.as_ref(),
            session.pending_action_revision.as_ref(),
        );
        let stale = !replace
            && matches!(
                why,
                ReplaceReason::OlderEpoch | ReplaceReason::OlderRevisionRejected
            );
        let mut state_changed = false;
        if !stale && session.state.is_some() && entry.state != session.state {
            entry.set_state(session.state);
            state_changed = true;
        }
        if state_changed {
            self.touch_session(&session.id);
        }
        if stale {
            return Reason::from_replace(why);
        }
        if session.pending_action.is_none() && session.pending_action_revision.is_none() {
            return if state_changed {
                Reason::Applied
            } else {
                Reason::Unchanged
            };
        }
        let incoming = PendingProjection {
            action: session.pending_action,
            revision: session.pending_action_revision.clone(),
        };
        match self.merge_session_projection(&session.id, session.task_id.as_deref(), &incoming) {
            Reason::Unchanged if state_changed => Reason::Applied,
            why => why,
        }
    }

    /// WebSocket: `task.status_summary.updated`: replaces the held summary only when nothing is
    /// held or the incoming revision is strictly greater (SPEC §7).
    pub fn apply_status_summary_event(
        &mut self,
        task_id: &str,
        summary: Option<(StatusSummary, P)>,
    ) -> Reason {
        let task = self.tasks.entry(Box::from(task_id)).or_default();
        task.known = true;
        let held = task.summary.as_ref().map(HeldSummary::revision);
        let Some(incoming) = summary else {
            return Reason::Unchanged;
        };
        if !is_newer_summary(Some(incoming.0.revision), held) {
            return Reason::OlderRevisionRejected;
        }
        task.summary = Some(HeldSummary::held(incoming));
        self.touch_task(task_id);
        Reason::Applied
    }

    fn apply_task_fields(task: &mut TaskEntry<P>, input: &TaskInput<P>) {
        task.known = true;
        if let Some(action) = input.task_pending_action {
            task.task_pending_action = action;
        }
    }

    /// WebSocket: `task.updated`. Without a `status_summary` key the held summary stays; with
    /// the key (even `null`) it is overwritten without a revision check (SPEC §7).
    pub fn apply_task_updated(&mut self, input: TaskInput<P>) -> Reason {
        let task = self.tasks.entry(Box::from(input.id.as_str())).or_default();
        Self::apply_task_fields(task, &input);
        if let Some(summary) = input.status_summary {
            task.summary = summary.map(HeldSummary::held);
        }
        self.touch_task(&input.id);
        Reason::Applied
    }

    /// The task (and its sessions) was deleted.
    pub fn remove_task(&mut self, task_id: &str) -> Reason {
        let Some(task) = self.tasks.remove(task_id) else {
            return Reason::Unchanged;
        };
        let mut gone: Vec<Box<str>> = task.sessions.unwrap_or_default();
        gone.extend(
            self.sessions
                .iter()
                .filter(|(_, s)| s.task_id.as_deref() == Some(task_id))
                .map(|(id, _)| id.clone()),
        );
        for session_id in gone {
            if self.sessions.remove(&session_id).is_some() {
                self.touch_session(&session_id);
            }
        }
        self.touch_task(task_id);
        Reason::Applied
    }

    /// Starts a REST task-list/boot fetch: the token captures every task's presence and summary
    /// revision now, which [`Self::apply_task_snapshot`] merges against.
    pub fn begin_task_fetch(&mut self) -> u64 {
        let token = self.next_fetch;
        self.next_fetch = self.next_fetch.wrapping_add(1);
        let captured = self
            .tasks
            .iter()
            .map(|(id, t)| {
                (
                    id.clone(),
                    t.summary.as_ref().and_then(HeldSummary::revision),
                )
            })
            .collect();
        self.fetches.push_back((token, captured));
        while self.fetches.len() > MAX_FETCHES {
            self.fetches.pop_front();
        }
        token
    }

    /// REST: the tasks of a snapshot requested with `token` (SPEC §7 merge).
    pub fn apply_task_snapshot(
        &mut self,
        token: u64,
        tasks: Vec<TaskInput<P>>,
    ) -> Result<Reason, WireError> {
        let Some(at) = self.fetches.iter().position(|(t, _)| *t == token) else {
            return Err(WireError::InvalidValue {
                field: "token".into(),
                problem: "unknown or already used fetch token".into(),
            });
        };
        let Some((_, captured)) = self.fetches.remove(at) else {
            return Ok(Reason::UnknownFetchToken);
        };
        for input in tasks {
            let start = FetchStart {
                task_present: captured.contains_key(input.id.as_str()),
                revision: captured.get(input.id.as_str()).copied().flatten(),
            };
            if start.task_present && !self.tasks.contains_key(input.id.as_str()) {
                // Removed while the request was in flight: the snapshot is older than that.
                continue;
            }
            let task = self.tasks.entry(Box::from(input.id.as_str())).or_default();
            Self::apply_task_fields(task, &input);
            let response_summary = input.status_summary.clone().flatten();
            let (decision, _) = merge_fetched_summary(
                task.summary.as_ref().map(HeldSummary::revision),
                start,
                FetchedTask {
                    summary: response_summary.as_ref().map(|(s, _)| s.revision),
                    invalidated: input.invalidated,
                },
            );
            match decision {
                FetchedSummary::KeepHeld => {}
                FetchedSummary::TakeResponse => {
                    task.summary = response_summary.map(HeldSummary::held);
                }
                FetchedSummary::Drop => task.summary = None,
            }
            self.touch_task(&input.id);
        }
        Ok(Reason::Applied)
    }

    // ---- queries -------------------------------------------------------------------------------

    fn current_turn_of(entry: &SessionEntry) -> (CurrentTurn<&str>, Reason) {
        let (current, why) = entry.current.get().unwrap_or_else(|| {
            let computed = current_turn(entry.turns.as_deref(), entry.state, |turn| {
                entry.messages.references(turn)
            });
            entry.current.set(Some(computed));
            computed
        });
        let id = current.map(|i| {
            entry
                .turns
                .as_ref()
                .and_then(|t| t.get(i))
                .map_or("", |t| t.id.as_str())
        });
        (id, Reason::Turn(why))
    }

    /// The session's current turn (SPEC §2).
    pub fn current_turn_id(&self, session_id: &str) -> (CurrentTurn<&str>, Reason) {
        match self.sessions.get(session_id) {
            Some(entry) => Self::current_turn_of(entry),
            None => (CurrentTurn::Unknown, Reason::SessionUnknown),
        }
    }

    /// The session's pending action: its authoritative projection when known, else derived from
    /// its loaded turns and messages (SPEC §4).
    pub fn session_pending_action(&self, session_id: &str) -> (Option<PendingAction>, Reason) {
        let Some(entry) = self.sessions.get(session_id) else {
            return (None, Reason::SessionUnknown);
        };
        if let Some(action) = entry.projection.action {
            return (action, Reason::AuthoritativeProjection);
        }
        let (action, why) = session_pending_action_with(
            entry.state,
            entry.turns.as_deref(),
            |turn| entry.messages.references(turn),
            |turn| entry.messages.turn_requests(turn).into_iter(),
        );
        (action, Reason::SessionAction(why))
    }

    /// The active clarification bundle of a session (SPEC §3), scoped by its current turn and
    /// its authoritative projection.
    pub fn pending_clarification(&self, session_id: &str) -> (Option<Bundle<'_>>, Reason) {
        let Some(entry) = self.sessions.get(session_id) else {
            return (None, Reason::SessionUnknown);
        };
        let (current, _) = Self::current_turn_of(entry);
        let scope = Scope {
            current_turn: current,
            pending_action: entry.projection.action,
        };
        let candidates = match considered(Some(&scope)) {
            Considered::Nothing => {
                let why = match (scope.pending_action, current) {
                    (Some(a), _) if a != Some(PendingAction::Clarification) => {
                        Reason::ProjectionNotClarification
                    }
                    (_, CurrentTurn::None) => Reason::NoCurrentTurn,
                    _ => Reason::AuthorityUnknown,
                };
                return (None, why);
            }
            Considered::Turn(turn) => entry.messages.turn_requests(turn),
            Considered::All => entry.messages.discovery_candidates(),
        };
        let Some(request) =
            pending_request(&candidates, Some(&scope)).and_then(|i| candidates.get(i))
        else {
            return (None, Reason::NoPendingRequest);
        };
        let members = pending_bundle(&candidates, Some(&scope));
        if members.is_empty() {
            return (None, Reason::BundleIncomplete);
        }
        let bundle = Bundle {
            pending_id: request.pending_id_str(),
            message_ids: members
                .iter()
                .filter_map(|&i| candidates.get(i).map(|v| v.id_str()))
                .collect(),
        };
        (Some(bundle), Reason::ActiveBundle)
    }

    /// The message ids an overlay renders, hidden from the transcript (SPEC §3).
    pub fn hidden_message_ids(&self, session_id: &str) -> (Vec<&str>, Reason) {
        let (bundle, why) = self.pending_clarification(session_id);
        (bundle.map(|b| b.message_ids).unwrap_or_default(), why)
    }

    /// Whether the session is blocked on a permission (SPEC §3).
    pub fn has_pending_permission(&self, session_id: &str) -> (bool, Reason) {
        let Some(entry) = self.sessions.get(session_id) else {
            return (false, Reason::SessionUnknown);
        };
        let blocked =
            clarification::has_pending_permission(&entry.messages.permission_candidates());
        let why = if blocked {
            Reason::NewestPermissionPending
        } else {
            Reason::NoPendingPermission
        };
        (blocked, why)
    }

    fn listed_sessions<'s>(&'s self, task: &'s TaskEntry<P>) -> Vec<SessionRef<'s>> {
        task.sessions
            .iter()
            .flatten()
            .filter_map(|id| {
                self.sessions
                    .get_key_value(id)
                    .map(|(id, entry)| SessionRef { id, entry })
            })
            .collect()
    }

    /// The task's effective pending action (SPEC §4): its status summary's when it has one, else
    /// the legacy `task_pending_action`; a task known only through its session list takes the
    /// per-task rule over its sessions' projections.
    fn effective_action(&self, task: &TaskEntry<P>) -> (Option<PendingAction>, Reason) {
        if !task.known && task.summary.is_none() {
            return (
                task_pending_action(self.listed_sessions(task)),
                Reason::DerivedFromSessions,
            );
        }
        let why = if task.summary.is_some() {
            Reason::StatusSummaryAction
        } else {
            Reason::LegacyTaskAction
        };
        (effective_task_pending_action(&task.as_task()), why)
    }

    fn mark(&self, task: &TaskEntry<P>) -> TaskMark {
        TaskMark {
            summary_revision: task.summary.as_ref().and_then(HeldSummary::revision),
            action: self.effective_action(task).0,
        }
    }

    /// The task's effective pending action (see [`Self::effective_action`]).
    pub fn task_pending_action(&self, task_id: &str) -> (Option<PendingAction>, Reason) {
        match self.tasks.get(task_id) {
            Some(task) => self.effective_action(task),
            None => (None, Reason::TaskUnknown),
        }
    }

    /// The held status summary, the caller's own object.
    pub fn task_status_summary(&self, task_id: &str) -> (Option<&P>, Reason) {
        match self.tasks.get(task_id).and_then(|t| t.summary.as_ref()) {
            Some(summary) => (Some(&summary.payload), Reason::StatusSummaryHeld),
            None => (None, Reason::NoStatusSummary),
        }
    }

    /// The remembered session, unless the store knows it belongs to another task (SPEC §6: the
    /// preferred session counts only when it is not known to belong to another task).
    fn eligible_preferred<'p>(&self, task_id: &str, preferred: Option<&'p str>) -> Option<&'p str> {
        preferred.filter(|p| {
            self.sessions
                .get(*p)
                .and_then(|s| s.task_id.as_deref())
                .is_none_or(|t| t == task_id)
        })
    }

    /// The session to open for a task (SPEC §6), or `None` for task-only navigation.
    pub fn pending_owner<'s>(
        &'s self,
        task_id: &str,
        preferred: Option<&'s str>,
    ) -> (Option<&'s str>, Reason) {
        let Some(task) = self.tasks.get(task_id) else {
            return (None, Reason::TaskUnknown);
        };
        let sessions = self.listed_sessions(task);
        let (action, _) = self.effective_action(task);
        let preferred = self.eligible_preferred(task_id, preferred);
        let (owner, why) = resolve_owner(action, Some(task_id), &sessions, preferred);
        let owner = match owner {
            Owner::Session(id) => self
                .sessions
                .get_key_value(id)
                .map(|(k, _)| &**k)
                .or_else(|| preferred.filter(|p| *p == id)),
            Owner::TaskOnly => None,
        };
        (owner, Reason::Owner(why))
    }

    // ---- selection (SPEC §6) -----------------------------------------------------------------

    /// Starts a task selection; a newer selection makes every older ticket inert.
    pub fn begin_selection(
        &mut self,
        task_id: &str,
        preferred: Option<&str>,
        ticket: String,
    ) -> SelectionTicket {
        let task = self.tasks.get(task_id);
        let at_start = task.map(|t| self.mark(t));
        let reload =
            task.is_none_or(|t| self.effective_action(t).0.is_some() || t.sessions.is_none());
        if let Some(previous) = self.selection.take() {
            if self.superseded.len() >= MAX_SUPERSEDED {
                self.superseded.pop_front();
            }
            self.superseded.push_back(previous.ticket.into_boxed_str());
        }
        self.selection = Some(ActiveSelection {
            ticket: ticket.clone(),
            task_id: Box::from(task_id),
            at_start,
            preferred: preferred.filter(|p| !p.is_empty()).map(Box::from),
            active_task_changed: false,
        });
        SelectionTicket { ticket, reload }
    }

    /// The app's active task changed (navigation): an in-flight selection of another task
    /// becomes inert (sticky).
    pub fn set_active_task(&mut self, task_id: Option<&str>) {
        if let Some(selection) = self.selection.as_mut() {
            if task_id != Some(&*selection.task_id) {
                selection.active_task_changed = true;
            }
        }
    }

    /// Settles a selection with the outcome of its session load. A loaded list is applied to the
    /// store first; then every guard of SPEC §6 runs on the store's merged state.
    pub fn settle_selection(
        &mut self,
        ticket: &str,
        load: SelectionLoad,
    ) -> Result<(Navigation, Reason), WireError> {
        let current = self
            .selection
            .as_ref()
            .filter(|s| s.ticket == ticket)
            .cloned();
        let Some(selection) = current else {
            if self.superseded.iter().any(|t| **t == *ticket) {
                // A newer selection replaced this one: the rule's first guard.
                let (outcome, why) = settle_selection::<SessionRef<'_>>(Settle {
                    at_start: TaskMark {
                        summary_revision: None,
                        action: None,
                    },
                    now: None,
                    task_id: None,
                    superseded: true,
                    active_task_changed: false,
                    load: Load::Aborted,
                    preferred: None,
                });
                return Ok((Self::navigation(outcome), Reason::Settle(why)));
            }
            // Settled already, or never issued by this store.
            return Ok((Navigation::Inert, Reason::TicketNotCurrent));
        };
        if let SelectionLoad::Loaded(sessions) = &load {
            Self::check_sessions(&selection.task_id, sessions, "outcome.sessions")?;
        }
        self.selection = None;
        // A task known at the click and gone now was deleted: its late list is not applied. A task
        // the store did not know yet is described by the list.
        let present = self.tasks.contains_key(&*selection.task_id) || selection.at_start.is_none();
        if let (true, SelectionLoad::Loaded(sessions)) = (present, &load) {
            self.apply_session_list(&selection.task_id, sessions)?;
        }
        let task = self.tasks.get(&*selection.task_id);
        let now = task.map(|t| self.mark(t));
        let listed = task.map(|t| self.listed_sessions(t)).unwrap_or_default();
        let (outcome, why) = settle_selection(Settle {
            // A task unknown at the click counts as clean with no summary.
            at_start: selection.at_start.unwrap_or(TaskMark {
                summary_revision: None,
                action: None,
            }),
            now,
            task_id: Some(&selection.task_id),
            superseded: false,
            active_task_changed: selection.active_task_changed,
            load: match &load {
                SelectionLoad::Loaded(_) => Load::Loaded(&listed),
                SelectionLoad::Failed => Load::Failed,
                SelectionLoad::Aborted => Load::Aborted,
            },
            preferred: self.eligible_preferred(&selection.task_id, selection.preferred.as_deref()),
        });
        Ok((Self::navigation(outcome), Reason::Settle(why)))
    }

    fn navigation(outcome: SelectionOutcome<'_>) -> Navigation {
        match outcome {
            SelectionOutcome::Session(id) => Navigation::Session(id.to_owned()),
            SelectionOutcome::TaskOnly => Navigation::TaskOnly,
            SelectionOutcome::Inert => Navigation::Inert,
        }
    }

    // ---- introspection -----------------------------------------------------------------------

    /// A digest of the whole decision-relevant state (tests compare it before and after a
    /// rejected event). Iteration order does not matter.
    pub fn digest(&self) -> u64 {
        // Entries combine by wrapping addition, so iteration order does not matter.
        let hasher = Fnv;
        let sessions: u64 = self
            .sessions
            .iter()
            .map(|(id, s)| {
                let mut h = hasher.build_hasher();
                id.hash(&mut h);
                s.task_id.hash(&mut h);
                s.listed.hash(&mut h);
                s.state.hash(&mut h);
                s.is_primary.hash(&mut h);
                s.projection.action.hash(&mut h);
                s.projection.revision.hash(&mut h);
                if let Some(turns) = &s.turns {
                    for t in turns {
                        t.id.hash(&mut h);
                        t.completed.hash(&mut h);
                        t.started_at.hash(&mut h);
                        t.created_at.hash(&mut h);
                        t.updated_at.hash(&mut h);
                        t.flags.hash(&mut h);
                    }
                }
                for t in &s.early_turns {
                    t.id.hash(&mut h);
                    t.updated_at.hash(&mut h);
                }
                for row in s.messages.rows() {
                    row.id_str().hash(&mut h);
                    row.created().hash(&mut h);
                    row.updated().hash(&mut h);
                    row.turn_id_str().hash(&mut h);
                    row.row.kind.hash(&mut h);
                    row.row.status.hash(&mut h);
                    row.pending_id_str().hash(&mut h);
                }
                h.finish()
            })
            .fold(0, u64::wrapping_add);
        let tasks: u64 = self
            .tasks
            .iter()
            .map(|(id, t)| {
                let mut h = hasher.build_hasher();
                id.hash(&mut h);
                t.summary
                    .as_ref()
                    .map(|s| (s.summary.revision, s.summary.pending_action))
                    .hash(&mut h);
                t.task_pending_action.hash(&mut h);
                t.sessions.hash(&mut h);
                h.finish()
            })
            .fold(0, u64::wrapping_add);
        let mut h = hasher.build_hasher();
        sessions.hash(&mut h);
        tasks.hash(&mut h);
        h.finish()
    }

    /// How many messages the store holds.
    pub fn message_count(&self) -> usize {
        self.sessions.values().map(|s| s.messages.len()).sum()
    }

    /// Approximate heap bytes held by message indices.
    pub fn message_heap_bytes(&self) -> usize {
        self.sessions
            .values()
            .map(|s| s.messages.heap_bytes())
            .fold(0, usize::saturating_add)
    }

    /// The held projection of a session (tests, debugging).
    pub fn session_projection(
        &self,
        session_id: &str,
    ) -> Option<(Option<Option<PendingAction>>, Option<&Revision>)> {
        self.sessions
            .get(session_id)
            .map(|s| (s.projection.action, s.projection.revision.as_ref()))
    }

    /// The known state of a session.
    pub fn session_state(&self, session_id: &str) -> Option<SessionState> {
        self.sessions.get(session_id).and_then(|s| s.state)
    }
}
