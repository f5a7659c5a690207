//! The authoritative projection (SPEC §2, §4): per-session pending action for a list of sessions,
//! the task action, and the projection carried by `session.message.*` events.
//!
//! The decision is [`rules::pending::session_pending_action_with`] (current turn without
//! lifecycle turns and unpublished reservations, session quarantine, terminal sessions clean) and
//! [`rules::pending::task_pending_action`]. The projector reads, in one snapshot, only what that
//! rule reads ([`load_pending_snapshots`]): the session row, its turns, which of them messages
//! reference, and the request rows of the turn [`rules::pending::session_pending_read`] names, so
//! an event costs the same on a long transcript as on a short one. [`load_snapshots`] reads every
//! message, for the callers that need the transcript. A read or decode failure is an error: never
//! a falsely clean answer.
//!
//! [`rules::pending::session_pending_action_with`]: task_projection::rules::pending::session_pending_action_with
//! [`rules::pending::session_pending_read`]: task_projection::rules::pending::session_pending_read
//! [`rules::pending::task_pending_action`]: task_projection::rules::pending::task_pending_action

use std::cmp::Ordering;

use serde_json::{json, Map, Value};

use task_projection::rules::model::{
    MessageRecord, PendingAction, Revision, SessionRecord, SessionState,
};
use task_projection::rules::pending::{
    session_pending_action, session_pending_action_with, session_pending_read, task_pending_action,
    PendingRead, SessionActionReason,
};
use task_projection::rules::respond::{observe_bundle_with, BundleObservation};
use task_projection::rules::time::Timestamp;
use task_projection::rules::turn::window_decides;

use super::db::{Backend, Conn, On};
use super::error::{Result, ServerError};
use super::events::{
    Event, EventSink, SESSION_MESSAGE_ADDED, SESSION_MESSAGE_DELETED, SESSION_MESSAGE_UPDATED,
};
use super::revision::RevisionClock;
use super::storage::{
    bundle_rows_on, messages_on, pending_window, session_on, task_windows, turn_referenced_on,
    turn_requests_on, turns_on, turns_referenced_on, turns_window_on, MessageRow, PendingWindow,
    SessionRow, Storage, SummaryRow, TurnRow,
};

/// Every row of one session, its whole transcript included, from one snapshot (respond, the
/// REST turn history, the simulator; the projector reads a [`PendingSnapshot`]).
#[derive(Clone, Debug)]
pub struct SessionSnapshot {
    pub session: SessionRow,
    pub turns: Vec<TurnRow>,
    pub messages: Vec<MessageRow>,
}

impl SessionSnapshot {
    /// The session's authoritative pending action (SPEC §4), decided by the rules.
    pub fn pending_action(&self) -> (Option<PendingAction>, SessionActionReason) {
        session_pending_action(
            Some(self.session.state()),
            Some(&self.turns[..]),
            &self.messages,
        )
    }
}

/// Whether the sorted ids `referenced` hold `turn_id`.
fn sorted_contains(referenced: &[String], turn_id: &str) -> bool {
    referenced
        .binary_search_by(|id| id.as_str().cmp(turn_id))
        .is_ok()
}

/// What one session's pending action reads, from one snapshot: the session row, its turns, the
/// turns its messages reference, and the `clarification_request` / `permission_request` rows of
/// the turn the rule reads (storage's prefilter: the only rows of that turn the rule counts).
#[derive(Clone, Debug)]
pub struct PendingSnapshot {
    pub session: SessionRow,
    /// The turns the current-turn rule needs: every turn, or a window of the most current ones
    /// that decides as all of them would ([`rules::turn::window_decides`]).
    ///
    /// [`rules::turn::window_decides`]: task_projection::rules::turn::window_decides
    pub turns: Vec<TurnRow>,
    /// The ids of those turns that at least one of the session's messages references, sorted.
    pub referenced: Vec<String>,
    /// The request rows of the turn [`session_pending_read`] named, in insertion order; empty
    /// when it decided without reading a turn.
    pub requests: Vec<MessageRow>,
}

impl PendingSnapshot {
    /// Whether any message of the session references `turn_id`.
    pub fn is_referenced(&self, turn_id: &str) -> bool {
        sorted_contains(&self.referenced, turn_id)
    }

    /// The turn whose request rows the rule reads ([`session_pending_read`]), if any.
    fn named_turn(&self) -> Option<String> {
        match session_pending_read(
            Some(self.session.state()),
            Some(&self.turns[..]),
            |turn_id| self.is_referenced(turn_id),
        ) {
            PendingRead::Turn(turn_id) => Some(turn_id.to_owned()),
            PendingRead::Decided(_) => None,
        }
    }

    /// The session's authoritative pending action (SPEC §4), decided by the rules: equal to
    /// [`SessionSnapshot::pending_action`] over the whole transcript of the same snapshot.
    pub fn pending_action(&self) -> (Option<PendingAction>, SessionActionReason) {
        session_pending_action_with(
            Some(self.session.state()),
            Some(&self.turns[..]),
            |turn_id| self.is_referenced(turn_id),
            |turn_id| {
                self.requests
                    .iter()
                    .filter(move |m| m.turn_id() == Some(turn_id))
            },
        )
    }
}

/// What responding to one clarification bundle reads, from one snapshot: the session row, its
/// turns, the turns its messages reference, and the bundle's rows in the session
/// ([`observe_bundle_with`] reads no more; the transcript is not read).
#[derive(Clone, Debug)]
pub struct BundleSnapshot {
    pub session: SessionRow,
    /// The turns the current-turn rule needs (as [`PendingSnapshot::turns`]), and the bundle's
    /// turns.
    pub turns: Vec<TurnRow>,
    /// The ids of those turns that at least one of the session's messages references, sorted.
    pub referenced: Vec<String>,
    /// The session's messages whose `pending_id` is the bundle's, in insertion order.
    pub rows: Vec<MessageRow>,
}

impl BundleSnapshot {
    /// Whether any message of the session references `turn_id`.
    pub fn is_referenced(&self, turn_id: &str) -> bool {
        sorted_contains(&self.referenced, turn_id)
    }

    /// The bundle placed by the rules (indices into [`BundleSnapshot::rows`]): equal to
    /// [`observe_bundle`](task_projection::rules::respond::observe_bundle) over the whole transcript of
    /// the same snapshot.
    pub fn observe(&self, pending_id: &str) -> BundleObservation {
        observe_bundle_with(
            Some(self.session.state()),
            &self.turns,
            |turn_id| self.is_referenced(turn_id),
            &self.rows,
            pending_id,
        )
    }
}

/// The turns the current-turn rule needs of a session, with the ids of those that messages
/// reference (sorted): a window of the most current ones when
/// [`rules::turn::window_decides`](task_projection::rules::turn::window_decides) says it chooses
/// what the whole history would, otherwise every turn. A long history costs the same as a short
/// one.
async fn current_turns_on(
    conn: &mut Conn,
    session_id: &str,
) -> Result<(Vec<TurnRow>, Vec<String>)> {
    if let Some((turns, referenced, exhausted)) = turns_window_on(conn, session_id).await? {
        if window_decides(&turns, exhausted, |id| sorted_contains(&referenced, id)) {
            return Ok((turns, referenced));
        }
    }
    turns_referenced_on(conn, session_id).await
}

/// Reads a [`BundleSnapshot`] on `conn` (inside the caller's transaction).
pub(crate) async fn bundle_snapshot_on(
    conn: &mut Conn,
    session_id: &str,
    pending_id: &str,
) -> Result<BundleSnapshot> {
    let session = session_on(conn, session_id).await?;
    let (mut turns, mut referenced) = current_turns_on(conn, session_id).await?;
    let rows = bundle_rows_on(conn, session_id, pending_id).await?;
    // The bundle's turns, when the window left them out (none of them is current then): the rule
    // asks whether the bundle's turn exists. Adding turns from outside a deciding window never
    // changes its choice.
    for row in &rows {
        let Some(turn_id) = row.turn_id() else {
            continue;
        };
        if turns.iter().any(|t| t.id == turn_id) {
            continue;
        }
        if let Some((turn, is_referenced)) = turn_referenced_on(conn, session_id, turn_id).await? {
            if is_referenced {
                referenced.push(turn.id.clone());
            }
            turns.push(turn);
        }
    }
    referenced.sort_unstable();
    Ok(BundleSnapshot {
        session,
        turns,
        referenced,
        rows,
    })
}

/// The [`BundleSnapshot`] of bundle `pending_id` in session `session_id`, in one read transaction.
pub async fn load_bundle_snapshot(
    storage: &Storage,
    session_id: &str,
    pending_id: &str,
) -> Result<BundleSnapshot> {
    let mut tx = read_transaction(storage).await?;
    let snapshot = bundle_snapshot_on(&mut tx, session_id, pending_id).await?;
    tx.commit().await?;
    Ok(snapshot)
}

/// A read transaction ([`Db::begin_read`](super::db::Db::begin_read)): REPEATABLE READ on
/// PostgreSQL; a SQLite read transaction is a snapshot already.
async fn read_transaction(storage: &Storage) -> Result<Conn> {
    storage.db().begin_read().await
}

/// The [`PendingSnapshot`] of one session from [`pending_window`]'s one statement, when its window
/// decides ([`window_decides`]); `None` when the session must be read whole (a turn without order
/// keys, or a window that does not decide). [`ServerError::NotFound`] when the session does not
/// exist.
async fn windowed_snapshot(
    on: impl Into<On<'_>>,
    session_id: &str,
) -> Result<Option<PendingSnapshot>> {
    let Some(read) = pending_window(on, session_id).await? else {
        return Err(ServerError::NotFound {
            what: "session",
            id: session_id.to_owned(),
        });
    };
    Ok(decided_snapshot(read))
}

/// The [`PendingSnapshot`] a [`PendingWindow`] stands for, when its window decides
/// ([`window_decides`]); `None` when the session must be read whole.
fn decided_snapshot(read: PendingWindow) -> Option<PendingSnapshot> {
    let window = read.window?;
    if !window_decides(&window.turns, window.exhausted(), |id| {
        sorted_contains(&window.referenced, id)
    }) {
        return None;
    }
    let mut snapshot = PendingSnapshot {
        session: read.session,
        turns: window.turns,
        referenced: window.referenced,
        requests: Vec::new(),
    };
    if let Some(turn_id) = snapshot.named_turn() {
        // The named turn is the window's current turn: its request rows were read with it.
        snapshot.requests = window
            .requests
            .into_iter()
            .filter(|m| m.turn_id() == Some(turn_id.as_str()))
            .collect();
    }
    Some(snapshot)
}

/// The [`PendingSnapshot`] of one session in separate statements on `tx` (inside the caller's
/// read transaction): the session row, its current turns (with `window`, [`current_turns_on`]: a
/// window when it decides, otherwise every turn; without, every turn), and the request rows of
/// the turn the rule names.
async fn snapshot_on(tx: &mut Conn, session_id: &str, window: bool) -> Result<PendingSnapshot> {
    let session = session_on(tx, session_id).await?;
    let (turns, referenced) = if window {
        current_turns_on(tx, session_id).await?
    } else {
        turns_referenced_on(tx, session_id).await?
    };
    let mut snapshot = PendingSnapshot {
        session,
        turns,
        referenced,
        requests: Vec::new(),
    };
    if let Some(turn_id) = snapshot.named_turn() {
        snapshot.requests = turn_requests_on(tx, session_id, &turn_id).await?;
    }
    Ok(snapshot)
}

/// The [`PendingSnapshot`] of one session read whole ([`snapshot_on`] without a window), in one
/// read transaction.
async fn whole_snapshot(storage: &Storage, session_id: &str) -> Result<PendingSnapshot> {
    let mut tx = read_transaction(storage).await?;
    let snapshot = snapshot_on(&mut tx, session_id, false).await?;
    tx.commit().await?;
    Ok(snapshot)
}

/// Reads what the pending action of each of `session_ids` reads ([`PendingSnapshot`]), from one
/// snapshot. On PostgreSQL a session is one statement (`pending_window`) when its window of
/// turns decides, and one such session needs no transaction; otherwise (and on SQLite) the rule
/// names the turn whose request rows are read ([`session_pending_read`]) from the turns read
/// first. Several sessions are read in one read transaction.
pub async fn load_pending_snapshots(
    storage: &Storage,
    session_ids: &[&str],
) -> Result<Vec<PendingSnapshot>> {
    // PostgreSQL: a statement is a round trip, so a session is one statement when it can be, and
    // a session whose joined window did not decide is read whole (its window is not read again).
    // SQLite: a statement is a call, and the joined rows cost more than three narrow reads.
    let joined = storage.db().backend() == Backend::Postgres;
    if let ([id], true) = (session_ids, joined) {
        let snapshot = match windowed_snapshot(storage.db(), id).await? {
            Some(snapshot) => snapshot,
            None => whole_snapshot(storage, id).await?,
        };
        return Ok(vec![snapshot]);
    }
    let mut tx = read_transaction(storage).await?;
    let mut snapshots = Vec::with_capacity(session_ids.len());
    for id in session_ids {
        let windowed = if joined {
            windowed_snapshot(&mut tx, id).await?
        } else {
            None
        };
        let snapshot = match windowed {
            Some(snapshot) => snapshot,
            None => snapshot_on(&mut tx, id, !joined).await?,
        };
        snapshots.push(snapshot);
    }
    tx.commit().await?;
    Ok(snapshots)
}

/// The [`PendingSnapshot`] of one session ([`ServerError::NotFound`] when it does not exist).
pub async fn load_pending_snapshot(storage: &Storage, session_id: &str) -> Result<PendingSnapshot> {
    only(
        load_pending_snapshots(storage, &[session_id]).await?,
        session_id,
    )
}

/// Reads the snapshots of `session_ids`, every message included, in one read transaction.
pub async fn load_snapshots(
    storage: &Storage,
    session_ids: &[&str],
) -> Result<Vec<SessionSnapshot>> {
    let mut tx = read_transaction(storage).await?;
    let mut snapshots = Vec::with_capacity(session_ids.len());
    for id in session_ids {
        let session = session_on(&mut tx, id).await?;
        let turns = turns_on(&mut tx, id).await?;
        let messages = messages_on(&mut tx, id).await?;
        snapshots.push(SessionSnapshot {
            session,
            turns,
            messages,
        });
    }
    tx.commit().await?;
    Ok(snapshots)
}

/// The snapshot of one session ([`ServerError::NotFound`] when it does not exist).
pub async fn load_snapshot(storage: &Storage, session_id: &str) -> Result<SessionSnapshot> {
    only(load_snapshots(storage, &[session_id]).await?, session_id)
}

/// The one snapshot of a one-session read ([`ServerError::NotFound`] when there is none).
fn only<T>(snapshots: Vec<T>, session_id: &str) -> Result<T> {
    snapshots
        .into_iter()
        .next()
        .ok_or_else(|| ServerError::NotFound {
            what: "session",
            id: session_id.to_owned(),
        })
}

/// One session with its authoritative projection.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionProjection {
    pub session: SessionRow,
    pub pending_action: Option<PendingAction>,
    pub reason: SessionActionReason,
    pub revision: Revision,
}

impl SessionRecord for SessionProjection {
    fn id(&self) -> &str {
        &self.session.id
    }
    fn task_id(&self) -> Option<&str> {
        Some(&self.session.task_id)
    }
    fn state(&self) -> Option<SessionState> {
        Some(self.session.state())
    }
    fn is_primary(&self) -> bool {
        self.session.is_primary
    }
    fn action(&self) -> Option<PendingAction> {
        self.pending_action
    }
}

/// A session with its authoritative action and no revision (what [`Projector::task_action`]
/// reads).
struct SessionAction {
    session: SessionRow,
    action: Option<PendingAction>,
}

impl SessionRecord for SessionAction {
    fn id(&self) -> &str {
        &self.session.id
    }
    fn task_id(&self) -> Option<&str> {
        Some(&self.session.task_id)
    }
    fn state(&self) -> Option<SessionState> {
        Some(self.session.state())
    }
    fn is_primary(&self) -> bool {
        self.session.is_primary
    }
    fn action(&self) -> Option<PendingAction> {
        self.action
    }
}

/// The wire object of a revision.
pub fn revision_json(revision: &Revision) -> Value {
    json!({ "epoch": revision.epoch, "sequence": revision.sequence })
}

/// The wire value of a pending action (`null` when clean).
pub fn action_json(action: Option<PendingAction>) -> Value {
    action.map_or(Value::Null, |a| Value::from(a.as_str()))
}

impl SessionProjection {
    /// The session as the task-session list returns it.
    pub fn to_wire(&self) -> Value {
        let s = &self.session;
        json!({
            "id": s.id,
            "task_id": s.task_id,
            "state": s.state_text,
            "agent_profile_id": s.agent_profile_id,
            "is_primary": s.is_primary,
            "started_at": s.started_at,
            "updated_at": s.updated_at,
            "completed_at": s.completed_at,
            "pending_action": action_json(self.pending_action),
            "pending_action_revision": revision_json(&self.revision),
        })
    }
}

/// What a message event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageEventKind {
    Added,
    /// A semantic update (status, metadata): carries the projection.
    Updated,
    /// A content-only update: replaceable, carries no projection.
    ContentUpdated,
    Deleted,
}

impl MessageEventKind {
    pub const fn name(self) -> &'static str {
        match self {
            MessageEventKind::Added => SESSION_MESSAGE_ADDED,
            MessageEventKind::Updated | MessageEventKind::ContentUpdated => SESSION_MESSAGE_UPDATED,
            MessageEventKind::Deleted => SESSION_MESSAGE_DELETED,
        }
    }
}

/// The authoritative projector of one server instance.
#[derive(Clone, Debug)]
pub struct Projector {
    storage: Storage,
    clock: RevisionClock,
}

impl Projector {
    pub fn new(storage: Storage, clock: RevisionClock) -> Projector {
        Projector { storage, clock }
    }

    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    pub fn clock(&self) -> &RevisionClock {
        &self.clock
    }

    /// Projects the given sessions. The revision is reserved **before** the read (SPEC §5); the
    /// read is what the rule reads ([`load_pending_snapshots`]), not the transcript.
    pub async fn project_sessions(&self, session_ids: &[&str]) -> Result<Vec<SessionProjection>> {
        let revision = self.clock.reserve().await?;
        let snapshots = load_pending_snapshots(&self.storage, session_ids).await?;
        Ok(snapshots
            .into_iter()
            .map(|snapshot| projection(snapshot, revision.clone()))
            .collect())
    }

    /// The task-session list (newest first by `started_at` in the rules' timestamp order), each
    /// with its authoritative projection. Fails rather than answer without pending ownership.
    pub async fn task_sessions(&self, task_id: &str) -> Result<Vec<SessionProjection>> {
        let rows = self.storage.sessions_of_task(task_id).await?;
        let ids: Vec<&str> = rows.iter().map(|s| s.id.as_str()).collect();
        let mut projections = self.project_sessions(&ids).await?;
        projections.sort_by(|a, b| newest_first(&a.session, &b.session));
        Ok(projections)
    }

    /// The task's authoritative action (SPEC §4): decided by
    /// [`rules::pending::task_pending_action`](task_projection::rules::pending::task_pending_action)
    /// over the task's sessions, ordered as [`Projector::task_sessions`] orders them. No revision
    /// is reserved: the answer labels nothing (a status summary carries its own revision).
    pub async fn task_action(&self, task_id: &str) -> Result<Option<PendingAction>> {
        if let Some((_, action)) = self.windowed_task(task_id).await? {
            return Ok(action);
        }
        self.task_action_read(task_id).await
    }

    /// The task's persisted summary with its authoritative action ([`Projector::task_action`])
    /// read no earlier than the summary (what a summary repair compares); `None` when the task
    /// has no summary. On PostgreSQL one statement when every session's window decides
    /// (`task_windows`); otherwise the summary first, then the action.
    pub async fn summary_with_action(
        &self,
        task_id: &str,
    ) -> Result<Option<(SummaryRow, Option<PendingAction>)>> {
        if let Some((summary, action)) = self.windowed_task(task_id).await? {
            return Ok(summary.map(|summary| (summary, action)));
        }
        let Some(summary) = self.storage.summary(task_id).await? else {
            return Ok(None);
        };
        Ok(Some((summary, self.task_action_read(task_id).await?)))
    }

    /// PostgreSQL: the task's summary and action from [`task_windows`]' one statement, when every
    /// session's window decides; `None` otherwise (and on SQLite).
    async fn windowed_task(
        &self,
        task_id: &str,
    ) -> Result<Option<(Option<SummaryRow>, Option<PendingAction>)>> {
        if self.storage.db().backend() != Backend::Postgres {
            return Ok(None);
        }
        let read = task_windows(self.storage.db(), task_id).await?;
        let snapshots: Option<Vec<PendingSnapshot>> =
            read.sessions.into_iter().map(decided_snapshot).collect();
        Ok(snapshots.map(|snapshots| (read.summary, task_action_of(snapshots))))
    }

    /// [`Projector::task_action`] from the task's sessions and then their snapshots.
    async fn task_action_read(&self, task_id: &str) -> Result<Option<PendingAction>> {
        let rows = self.storage.sessions_of_task(task_id).await?;
        let ids: Vec<&str> = rows.iter().map(|s| s.id.as_str()).collect();
        Ok(task_action_of(
            load_pending_snapshots(&self.storage, &ids).await?,
        ))
    }

    /// The payload of a `session.message.*` event: the message fields plus the session's
    /// authoritative `pending_action` and `pending_action_revision`. The two keys are omitted
    /// for a content-only update and when the projection fails (a warning is logged): omitted
    /// means "keep what you have", never a false clean.
    pub async fn message_event(
        &self,
        kind: MessageEventKind,
        session_id: &str,
        message: Value,
    ) -> Event {
        let mut payload = match message {
            Value::Object(map) => map,
            other => {
                let mut map = Map::new();
                map.insert("message".into(), other);
                map
            }
        };
        if kind != MessageEventKind::ContentUpdated {
            match self.project_sessions(&[session_id]).await {
                Ok(projections) => {
                    if let Some(projection) = projections.first() {
                        payload.insert(
                            "pending_action".into(),
                            action_json(projection.pending_action),
                        );
                        payload.insert(
                            "pending_action_revision".into(),
                            revision_json(&projection.revision),
                        );
                    }
                }
                Err(error) => {
                    tracing::warn!(session_id, %error, "pending-action projection failed; event omits it");
                }
            }
        }
        Event {
            name: kind.name(),
            payload: Value::Object(payload),
        }
    }

    /// Builds and publishes a message event (publication failures are logged).
    pub async fn publish_message_event(
        &self,
        sink: &dyn EventSink,
        kind: MessageEventKind,
        session_id: &str,
        message: Value,
    ) -> Event {
        let event = self.message_event(kind, session_id, message).await;
        if let Err(error) = sink.publish(event.clone()) {
            tracing::warn!(session_id, %error, "message event publication failed");
        }
        event
    }
}

/// The projection a snapshot read after `revision` was reserved stands for.
fn projection(snapshot: PendingSnapshot, revision: Revision) -> SessionProjection {
    let (pending_action, reason) = snapshot.pending_action();
    SessionProjection {
        session: snapshot.session,
        pending_action,
        reason,
        revision,
    }
}

/// The task action over its sessions' snapshots, ordered as [`Projector::task_sessions`] orders
/// them.
fn task_action_of(snapshots: Vec<PendingSnapshot>) -> Option<PendingAction> {
    let mut sessions: Vec<SessionAction> = snapshots
        .into_iter()
        .map(|snapshot| SessionAction {
            action: snapshot.pending_action().0,
            session: snapshot.session,
        })
        .collect();
    sessions.sort_by(|a, b| newest_first(&a.session, &b.session));
    task_pending_action(&sessions)
}

/// Newest first by `started_at` (the rules' timestamp order), ties by id.
fn newest_first(a: &SessionRow, b: &SessionRow) -> Ordering {
    Timestamp::parse(&b.started_at)
        .cmp(&Timestamp::parse(&a.started_at))
        .then_with(|| a.id.cmp(&b.id))
}
