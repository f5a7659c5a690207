//! Snapshots of the store (SPEC §12): [`ProjectionStore::dehydrate`] writes what the store holds
//! for some tasks and sessions (the rows the rules read, revisions and clocks, tombstones and
//! removals, the stream's epoch and position, the recent rejections) with its answers, as JSON;
//! [`ProjectionStore::hydrate`] builds a store from a decoded snapshot ([`SnapshotInput`], from
//! `wire::snapshot`), whose every answer, explanation and digest equal the source's. The format
//! is docs/snapshot-format.md.
//!
//! Only the state moves: a hydrated store has no fetch in flight, no selection and no recorded
//! changes (none of them are answers; a fetch token of the source is unknown to it).

use std::sync::Arc;

use super::rejections::{Input, Rejection, Rev};
use super::session::SessionEntry;
use super::tasks::{HeldSummary, TaskEntry};
use super::{MessageParts, ProjectionStore, Reason, SessionId};
use crate::json::Json;
use crate::rules::clarification;
use crate::rules::model::{
    Message, MessageKind, MessageRecord, PendingAction, RequestStatus, Revision, SessionState,
    StatusSummary, Turn, TurnFlags,
};
use crate::rules::revision::PendingProjection;
use crate::rules::time::Timestamp;
use crate::rules::turn::CurrentTurn;
use crate::text::push_uint;

/// The `format` of every snapshot.
pub const FORMAT: &str = "task-projection/snapshot";
/// The format version this build writes and reads.
pub const VERSION: u64 = 1;

/// Turn flags as the snapshot writes them: a bit mask.
pub const LIFECYCLE_ONLY: u64 = 1;
pub const DISPATCH_PENDING: u64 = 2;
pub const DISPATCH_ATTEMPTED: u64 = 4;

/// A decoded snapshot (`P`: the caller's summary objects).
#[derive(Clone, Debug, Default)]
pub struct SnapshotInput<P> {
    pub epoch: Option<String>,
    pub position: Option<(String, u64)>,
    pub tasks: Vec<TaskSnapshot<P>>,
    pub sessions: Vec<SessionSnapshot>,
    pub removed_tasks: Vec<String>,
    pub removed_sessions: Vec<String>,
    pub rejected: Vec<Rejection>,
}

/// One task of a snapshot.
#[derive(Clone, Debug)]
pub struct TaskSnapshot<P> {
    pub id: String,
    pub known: bool,
    pub summary: Option<(StatusSummary, P)>,
    pub legacy: Option<PendingAction>,
    pub sessions: Option<Vec<String>>,
}

/// One session of a snapshot.
#[derive(Clone, Debug, Default)]
pub struct SessionSnapshot {
    pub id: String,
    pub task: Option<String>,
    pub listed: bool,
    pub state: Option<SessionState>,
    pub state_at: Option<Timestamp>,
    pub primary: bool,
    pub primary_at: Option<Timestamp>,
    pub projection: PendingProjection,
    pub turns: Option<Vec<Turn>>,
    pub early: Vec<Turn>,
    pub messages: Vec<Message>,
    /// Deleted message ids with the delete's revision, oldest first.
    pub deleted: Vec<(String, Option<Revision>)>,
    pub paged: bool,
}

/// Which part of the store a snapshot holds: everything, or the named tasks (with their
/// sessions) and sessions.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scope<'a> {
    pub tasks: Option<&'a [String]>,
    pub sessions: Option<&'a [String]>,
}

impl Scope<'_> {
    fn everything(&self) -> bool {
        self.tasks.is_none() && self.sessions.is_none()
    }
    fn has_task(&self, id: &str) -> bool {
        self.everything() || self.tasks.is_some_and(|t| t.iter().any(|t| t == id))
    }
    fn names_session(&self, id: &str) -> bool {
        self.sessions.is_some_and(|s| s.iter().any(|s| s == id))
    }
}

/// A message kind as a snapshot writes it (an integer code).
pub const fn kind_code(kind: MessageKind) -> u8 {
    match kind {
        MessageKind::Other => 0,
        MessageKind::ClarificationRequest => 1,
        MessageKind::PermissionRequest => 2,
    }
}

/// The message kind of a code ([`kind_code`]).
pub const fn kind_of_code(code: u64) -> Option<MessageKind> {
    Some(match code {
        0 => MessageKind::Other,
        1 => MessageKind::ClarificationRequest,
        2 => MessageKind::PermissionRequest,
        _ => return None,
    })
}

/// The request statuses in the order of their codes.
const STATUSES: [RequestStatus; 7] = [
    RequestStatus::Pending,
    RequestStatus::Answered,
    RequestStatus::Approved,
    RequestStatus::Rejected,
    RequestStatus::Expired,
    RequestStatus::Cancelled,
    RequestStatus::Other,
];

/// A request status as a snapshot writes it (an integer code).
pub fn status_code(status: RequestStatus) -> usize {
    STATUSES.iter().position(|s| *s == status).unwrap_or(0)
}

/// The request status of a code ([`status_code`]).
pub fn status_of_code(code: u64) -> Option<RequestStatus> {
    STATUSES.get(usize::try_from(code).ok()?).copied()
}

/// The spelling of a session state (`OTHER` for one this version does not know, which reads
/// back as such).
pub const fn state_str(state: SessionState) -> &'static str {
    match state.as_wire() {
        Some(text) => text,
        None => "OTHER",
    }
}

impl Json {
    #[inline(never)]
    fn timestamp(&mut self, time: Option<&Timestamp>) {
        self.sep();
        self.timestamp_value(time);
    }

    #[inline(never)]
    fn timestamp_value(&mut self, time: Option<&Timestamp>) {
        match time {
            Some(t) => self.text(&t.text()),
            None => self.0.push_str("null"),
        }
    }

    #[inline(never)]
    fn item(&mut self, value: Option<&str>) {
        self.sep();
        match value {
            Some(v) => self.text(v),
            None => self.0.push_str("null"),
        }
    }

    #[inline(never)]
    fn item_raw(&mut self, raw: &str) {
        self.sep();
        self.0.push_str(raw);
    }

    /// A revision in a row: two items, its epoch and sequence (`null, null` for none).
    #[inline(never)]
    fn row_revision(&mut self, revision: Option<&Revision>) {
        match revision {
            Some(r) => {
                self.item(Some(&r.epoch));
                self.sequence(r.sequence);
            }
            None => {
                self.item_raw("null");
                self.item_raw("null");
            }
        }
    }

    /// A sequence: a number, or beyond 2^53 − 1 (where a JS Number would round it) its decimal
    /// text.
    #[inline(never)]
    fn sequence(&mut self, sequence: u64) {
        self.sep();
        if sequence > (1 << 53) - 1 {
            self.text(&crate::text::decimal(sequence));
        } else {
            push_uint(&mut self.0, sequence);
        }
    }

    #[inline(never)]
    fn revision_value(&mut self, revision: Option<&Revision>) {
        match revision {
            None => self.0.push_str("null"),
            Some(r) => {
                self.0.push('{');
                self.str("epoch", Some(&r.epoch));
                self.num("sequence", Some(r.sequence));
                self.0.push('}');
            }
        }
    }

    /// A question total as the count its gate waits for ([`clarification::gate`]: the same
    /// answers, written as an integer), or null when it does not gate.
    #[inline(never)]
    fn total(&mut self, total: Option<f64>) {
        self.sep();
        match clarification::gate(total) {
            Some(count) => push_uint(&mut self.0, count),
            None => self.0.push_str("null"),
        }
    }

    #[inline(never)]
    fn turns(&mut self, turns: &[Turn]) {
        for t in turns {
            self.sep();
            self.0.push('[');
            self.item(Some(&t.id));
            self.item_raw(if t.completed { "true" } else { "false" });
            self.timestamp(Some(&t.started_at));
            self.timestamp(Some(&t.created_at));
            self.timestamp(t.updated_at.as_ref());
            let bit = |set: bool, bit: u64| if set { bit } else { 0 };
            let flags = bit(t.flags.lifecycle_only, LIFECYCLE_ONLY)
                | bit(t.flags.prompt_dispatch_pending, DISPATCH_PENDING)
                | bit(t.flags.prompt_dispatch_attempted, DISPATCH_ATTEMPTED);
            self.sep();
            push_uint(&mut self.0, flags);
            self.0.push(']');
        }
    }
}

/// The flags of a turn from the snapshot's bit mask.
pub fn turn_flags(bits: u64) -> TurnFlags {
    TurnFlags {
        lifecycle_only: bits & LIFECYCLE_ONLY != 0,
        prompt_dispatch_pending: bits & DISPATCH_PENDING != 0,
        prompt_dispatch_attempted: bits & DISPATCH_ATTEMPTED != 0,
    }
}

impl<P: Clone> ProjectionStore<P> {
    /// The snapshot of `scope` as JSON text (docs/snapshot-format.md). `payload` writes a held
    /// status summary (the caller's object) as JSON.
    pub fn dehydrate(&self, scope: Scope<'_>, payload: impl Fn(&P, &mut String)) -> String {
        let mut tasks: Vec<&str> = Vec::new();
        let mut sessions: Vec<&str> = Vec::new();
        for (id, task) in &self.tasks {
            if !scope.has_task(id) {
                continue;
            }
            tasks.push(id);
            sessions.extend(task.sessions.iter().flatten().map(|s| &**s));
        }
        for (id, entry) in &self.sessions {
            let of_task = entry.task_id.as_deref().is_some_and(|t| scope.has_task(t));
            if scope.everything() || of_task || scope.names_session(id) {
                sessions.push(id);
            }
        }
        crate::sort::stable_sort_by(&mut tasks, |a, b| a.cmp(b));
        crate::sort::stable_sort_by(&mut sessions, |a, b| a.cmp(b));
        sessions.dedup();
        sessions.retain(|s| self.sessions.contains_key(*s));

        let mut j = Json::with_capacity(256);
        j.0.push('{');
        j.str("format", Some(FORMAT));
        j.num("version", Some(VERSION));
        j.str("epoch", self.server_epoch.as_deref());
        let (stream, offset) = self.stream_position();
        j.str("stream", stream);
        j.num("offset", offset);

        j.open("tasks", '[');
        for id in &tasks {
            let Some(task) = self.tasks.get(*id) else {
                continue;
            };
            j.element();
            j.str("id", Some(id));
            j.bool("known", task.known);
            match &task.summary {
                Some(held) => {
                    j.key("summary");
                    payload(&held.payload, &mut j.0);
                }
                None => j.raw("summary", "null"),
            }
            j.action("legacy", task.task_pending_action);
            match &task.sessions {
                None => j.raw("sessions", "null"),
                Some(list) => {
                    j.open("sessions", '[');
                    for s in list {
                        j.item(Some(s));
                    }
                    j.close(']');
                }
            }
            j.close('}');
        }
        j.close(']');

        j.open("sessions", '[');
        for id in &sessions {
            let Some(entry) = self.sessions.get(*id) else {
                continue;
            };
            j.element();
            Self::write_session(&mut j, id, entry);
            j.close('}');
        }
        j.close(']');

        j.open("removed", '{');
        fn removed<'r>(
            ids: &'r super::remembered::Remembered,
            keep: &dyn Fn(&str) -> bool,
        ) -> Vec<&'r str> {
            ids.ordered()
                .filter(|(id, _)| keep(id))
                .map(|(id, _)| id)
                .collect()
        }
        let removed_tasks = removed(&self.removed_tasks, &|id| scope.has_task(id));
        let removed_sessions = removed(&self.removed_sessions, &|id| {
            scope.everything() || scope.names_session(id)
        });
        for (key, ids) in [("tasks", removed_tasks), ("sessions", removed_sessions)] {
            j.open(key, '[');
            for id in ids {
                j.item(Some(id));
            }
            j.close(']');
        }
        j.close('}');

        let in_scope = |r: &Rejection| {
            scope.everything()
                || r.task_id.as_deref().is_some_and(|t| scope.has_task(t))
                || r.session_id
                    .as_deref()
                    .is_some_and(|s| sessions.contains(&s))
        };
        j.open("rejected", '[');
        for r in self.rejected.oldest_first().filter(|r| in_scope(r)) {
            j.sep();
            j.0.push('[');
            j.item(Some(r.input.as_str()));
            j.item(Some(r.reason.code()));
            j.item(r.task_id.as_deref());
            j.item(r.session_id.as_deref());
            j.item(r.message_id.as_deref());
            for rev in [&r.revision, &r.held] {
                match rev {
                    Some(Rev::Pending(p)) => j.row_revision(Some(p)),
                    Some(Rev::Summary(n)) => {
                        j.item_raw("null");
                        j.sequence(*n);
                    }
                    None => j.row_revision(None),
                }
            }
            j.0.push(']');
        }
        j.close(']');

        self.write_answers(&mut j, &tasks, &sessions, &payload);
        j.0.push('}');
        j.0
    }

    #[inline(never)]
    fn write_session(j: &mut Json, id: &str, entry: &SessionEntry) {
        j.str("id", Some(id));
        j.str("task", entry.task_id.as_deref());
        j.bool("listed", entry.listed);
        j.str("state", entry.state.map(state_str));
        j.key("state_at");
        j.timestamp_value(entry.state_clock.as_ref());
        j.bool("primary", entry.is_primary);
        j.key("primary_at");
        j.timestamp_value(entry.primary_clock.as_ref());
        // `action` absent: no projection held (unknown); null: clean.
        if let Some(action) = entry.projection.action {
            j.action("action", action);
        }
        j.key("revision");
        j.revision_value(entry.projection.revision.as_ref());
        match &entry.turns {
            None => j.raw("turns", "null"),
            Some(turns) => {
                j.open("turns", '[');
                j.turns(turns);
                j.close(']');
            }
        }
        j.open("early", '[');
        j.turns(&entry.early_turns);
        j.close(']');
        // A message's turn by its index in `turns` when listed there (most are): the id once.
        let turn_index: crate::hash::HashMap<&str, usize> = entry
            .turns
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, t)| (t.id.as_str(), i))
            .collect();
        j.open("messages", '[');
        for row in entry.messages.rows() {
            j.sep();
            j.0.push('[');
            j.item(Some(row.id_str()));
            match row.turn_id_str() {
                Some(turn) => match turn_index.get(turn) {
                    Some(&i) => {
                        j.sep();
                        push_uint(&mut j.0, i as u64);
                    }
                    None => j.item(Some(turn)),
                },
                None => j.item_raw("null"),
            }
            j.sep();
            push_uint(&mut j.0, u64::from(kind_code(row.kind())));
            j.sep();
            push_uint(&mut j.0, status_code(row.status()) as u64);
            j.item(row.pending_id_str());
            j.total(row.question_total());
            let created = row.created();
            j.timestamp(Some(created));
            match row.updated() {
                // The common case, written once.
                Some(updated) if updated == *created => j.item_raw("true"),
                updated => j.timestamp(updated.as_ref()),
            }
            j.0.push(']');
        }
        j.close(']');
        j.open("deleted", '[');
        for (message, revision) in entry.messages.tombstones_ordered() {
            j.sep();
            j.0.push('[');
            j.item(Some(message));
            j.row_revision(revision);
            j.0.push(']');
        }
        j.close(']');
        j.bool("paged", entry.paged);
    }

    /// The answers of the snapshot's tasks and sessions, each key named after its query and
    /// absent while the answer is unknown.
    #[inline(never)]
    fn write_answers(
        &self,
        j: &mut Json,
        tasks: &[&str],
        sessions: &[&str],
        payload: &impl Fn(&P, &mut String),
    ) {
        j.open("answers", '{');
        j.open("tasks", '{');
        for id in tasks {
            j.key(id).0.push('{');
            if let Some(action) = self.task_pending_action(id).0 {
                j.action("taskPendingAction", action);
            }
            match self.task_status_summary(id).0 {
                None => {}
                Some(None) => j.raw("taskStatusSummary", "null"),
                Some(Some(summary)) => {
                    j.key("taskStatusSummary");
                    payload(summary, &mut j.0);
                }
            }
            if let Some(owner) = self.pending_owner(id, None).0 {
                j.str("pendingOwner", Some(owner.unwrap_or("")));
            }
            j.close('}');
        }
        j.close('}');
        j.open("sessions", '{');
        for id in sessions {
            j.key(id).0.push('{');
            if let Some(action) = self.session_pending_action(id).0 {
                j.action("sessionPendingAction", action);
            }
            match self.current_turn_id(id).0 {
                CurrentTurn::Unknown => {}
                CurrentTurn::None => j.raw("currentTurnId", "null"),
                CurrentTurn::Turn(t) => j.str("currentTurnId", Some(t)),
            }
            if let Some(bundle) = self.pending_clarification(id).0 {
                match bundle {
                    None => j.raw("pendingClarification", "null"),
                    Some(bundle) => {
                        j.open("pendingClarification", '{');
                        j.str("pending_id", bundle.pending_id);
                        j.open("message_ids", '[');
                        for m in &bundle.message_ids {
                            j.item(Some(m));
                        }
                        j.close(']');
                        j.close('}');
                    }
                }
            }
            if let Some(ids) = self.hidden_message_ids(id).0 {
                j.open("hiddenMessageIds", '[');
                for m in ids {
                    j.item(Some(m));
                }
                j.close(']');
            }
            if let Some(blocked) = self.has_pending_permission(id).0 {
                j.bool("hasPendingPermission", blocked);
            }
            j.close('}');
        }
        j.close('}');
        j.close('}');
    }

    /// A store holding exactly what `snapshot` describes; `restored`: its answers are marked as
    /// restored until the stream's first hello or a task snapshot ([`Self::restored`]).
    pub fn hydrate(snapshot: SnapshotInput<P>, restored: bool) -> Self {
        let mut store = Self::new();
        store.server_epoch = snapshot.epoch.map(Box::from);
        store.position = snapshot.position.map(|(s, o)| (Box::from(s), o));
        store.restored = restored;
        for id in snapshot.removed_tasks {
            store.removed_tasks.insert(&id, None);
        }
        for id in snapshot.removed_sessions {
            store.removed_sessions.insert(&id, None);
        }
        let mut shared: crate::hash::HashMap<String, Arc<str>> = crate::hash::HashMap::default();
        let mut task_id = |id: &str| -> Arc<str> {
            shared
                .entry(id.to_owned())
                .or_insert_with(|| Arc::from(id))
                .clone()
        };
        for s in snapshot.sessions {
            let mut entry = SessionEntry {
                task_id: s.task.as_deref().map(&mut task_id),
                listed: s.listed,
                state: s.state,
                state_clock: s.state_at,
                is_primary: s.primary,
                primary_clock: s.primary_at,
                projection: s.projection,
                early_turns: s.early,
                paged: s.paged,
                ..SessionEntry::default()
            };
            if let Some(turns) = s.turns {
                entry.set_turns(turns);
            }
            for message in &s.messages {
                entry.messages.upsert(&MessageParts::from(message));
            }
            for (message, revision) in &s.deleted {
                entry.messages.bury(message, revision.as_ref());
            }
            store
                .sessions
                .insert(SessionId::from(s.id), Box::new(entry));
        }
        for t in snapshot.tasks {
            let sessions = t.sessions.map(|list| {
                list.into_iter()
                    .map(|id| match store.sessions.get_key_value(id.as_str()) {
                        Some((key, _)) => key.clone(),
                        None => SessionId::from(id),
                    })
                    .collect()
            });
            let entry = TaskEntry {
                known: t.known,
                summary: t
                    .summary
                    .map(|(summary, payload)| HeldSummary { summary, payload }),
                task_pending_action: t.legacy,
                sessions,
                version: 0,
            };
            store.tasks.insert(Box::from(t.id), entry);
        }
        // Decoded (and so validated) by every build; kept where the log is (`development`).
        #[cfg(feature = "development")]
        for r in snapshot.rejected {
            store.rejected.push(r);
        }
        // Every entry starts at a version above 0 (0 means "no entry").
        let version = store.bump();
        for entry in store.sessions.values_mut() {
            entry.version = version;
            entry.discovery = version;
        }
        for task in store.tasks.values_mut() {
            task.version = version;
        }
        store.removals = version;
        store.clear_changes();
        store
    }
}

impl Input {
    /// The input a rejection's text names (the inverse of [`Input::as_str`]).
    pub fn parse(text: &str) -> Option<Input> {
        use super::MessageEventKind as K;
        Some(match text {
            "session_list" => Input::SessionList,
            "session.updated" => Input::SessionEvent,
            "session.message.added" => Input::Message(K::Added),
            "session.message.updated" => Input::Message(K::Updated),
            "session.message.deleted" => Input::Message(K::Deleted),
            "task.status_summary.updated" => Input::StatusSummary,
            _ => return None,
        })
    }
}

impl Reason {
    /// A rejection's reason from its code (the reasons the rejection log holds).
    pub fn rejection(code: &str) -> Option<Reason> {
        [
            Reason::OlderRevisionRejected,
            Reason::OlderUpdateCarriesNoProjection,
            Reason::OlderStateIgnored,
            Reason::DeletedMessageStaysDeleted,
            Reason::TaskMismatchRejected,
            Reason::TaskRemoved,
        ]
        .into_iter()
        .find(|r| r.code() == code)
    }
}
