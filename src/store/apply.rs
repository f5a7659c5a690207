//! The session-level inputs: session lists, turn lists and events, message pages and events,
//! session events. Each is ordered against what is held by a rule of [`crate::rules::order`]
//! (and the projection by [`crate::rules::revision`]); docs/convergence.md is the contract.

use std::borrow::Cow;
use std::sync::Arc;

use hashbrown::hash_map::EntryRef;

use super::messages::{MessageIndex, Upsert};
use super::rejections::{is_rejection, Input, Noted};
use super::session::Field;
use super::{
    MessageEvent, MessageEventKind, MessageParts, ProjectionStore, Reason, SessionId, TurnEvent,
};
use crate::error::{WireError, WireErrorKind};

use crate::rules::action::{lifts, retires};
use crate::rules::model::{Message, Session, SessionRecord, Turn};
use crate::rules::order::{
    merge_distinct_session_list, merge_session_list, merge_turns, revives, upsert_turn, Revival,
};
use crate::rules::revision::{merge_projection_into, PendingProjection};
use crate::rules::turn::CurrentTurn;

impl<P: Clone> ProjectionStore<P> {
    /// A session list may not hold a session of another task (`root` names the argument).
    pub(super) fn check_sessions<S: AsRef<str>>(
        task_id: &str,
        sessions: &[Session<S>],
        root: &str,
    ) -> Result<(), WireError> {
        match sessions
            .iter()
            .position(|s| s.task_id().is_some_and(|t| t != task_id))
        {
            Some(index) => Err(WireError::from(WireErrorKind::InvalidValue {
                field: [root, "[", &crate::text::decimal(index as u64), "].task_id"].concat(),
                problem: [
                    "the session belongs to another task than \"",
                    &crate::error::quoted(task_id),
                    "\"",
                ]
                .concat(),
            })),
            None => Ok(()),
        }
    }

    /// REST: a task's session list (newest first). The task's list becomes the union of the
    /// lists received ([`merge_session_list`]: sessions leave a task only with the task); each
    /// session's `state` and `is_primary` follow its own `updated_at`, its pending fields the
    /// revision rule; projections buffered for these sessions merge too, unless they were tagged
    /// with another task. A list of a removed task removes its sessions and applies nothing.
    pub fn apply_session_list<S: AsRef<str>>(
        &mut self,
        task_id: &str,
        sessions: Vec<Session<S>>,
    ) -> Result<Reason, WireError> {
        Self::check_sessions(task_id, &sessions, "sessions")?;
        if self.is_removed_task(task_id) {
            for session in &sessions {
                self.remove_session(session.id());
            }
            return Ok(Reason::TaskRemoved);
        }
        let held_len = self
            .tasks
            .get(task_id)
            .and_then(|t| t.sessions.as_ref())
            .map_or(0, Vec::len);
        // Room for the sessions the task did not list yet, at once: growing by doubling would
        // rehash every id again (a cache miss each).
        let new = sessions.len().saturating_sub(held_len);
        self.sessions.reserve(new);
        if self.track_changes {
            self.changed_sessions.reserve(new);
        }
        // One copy of the task id for every session the list tags, and one of each session id
        // (the table's key, shared by the task's list and the change set).
        let shared_task: Arc<str> = Arc::from(task_id);
        let mut incoming: Vec<SessionId> = Vec::with_capacity(sessions.len());
        let mut left: Vec<Arc<str>> = Vec::new();
        // Whether the list is known to name no session twice (each entry is stamped with the
        // call that listed it).
        self.list_calls = self.list_calls.wrapping_add(1);
        let call = self.list_calls;
        let mut distinct = true;
        let mut late = Vec::new();
        for session in sessions {
            if self.removed_input(session.id(), None) {
                // A deleted session (or one of a removed task) is not listed again, whatever
                // the list's age (SPEC §5).
                distinct = false;
                continue;
            }
            // One lookup per session (not `session_mut` and then `touch_session`'s).
            let (id, entry) = match self.sessions.entry_ref(session.id()) {
                EntryRef::Occupied(held) => (held.key().clone(), held.into_mut()),
                EntryRef::Vacant(slot) => {
                    let held = slot.insert_entry(Box::default());
                    (held.key().clone(), held.into_mut())
                }
            };
            distinct &= std::mem::replace(&mut entry.listed_in, call) != call;
            let mut changed = false;
            if entry.belongs_elsewhere(Some(task_id)) {
                // A buffered projection of another task is rejected (SPEC §5).
                entry.projection = PendingProjection::default();
                changed = true;
            }
            if entry.task_id.as_deref() != Some(task_id) {
                // A session another task held moves here: that task's answers change too.
                if let Some(previous) = entry.task_id.replace(shared_task.clone()) {
                    left.push(previous);
                }
            }
            // The row's revision is handed over, not copied; one the rule refuses while a
            // revision is held (an older row) is handed back, and logged.
            let merged = merge_projection_into(
                &mut entry.projection,
                session.pending_action,
                session.pending_action_revision.map(Cow::Owned),
            );
            changed |= merged.changed;
            if let (Some(older), true) =
                (merged.kept_held_over, entry.projection.revision.is_some())
            {
                late.push((id.clone(), older.into_owned()));
            }
            changed |= !entry.listed;
            entry.listed = true;
            let clock = session.updated_at.as_ref();
            changed |= entry.take_state(session.state, clock) == Field::Changed;
            changed |= entry.take_primary(session.is_primary, clock);
            if changed {
                // `touch_session`, but for the task: the task is touched once, below.
                self.version = self.version.wrapping_add(1);
                entry.version = self.version;
                entry.discovery = self.version;
                if self.track_changes {
                    self.changed_sessions.record(&id, entry);
                }
            }
            incoming.push(id);
        }
        let task = self.tasks.entry(Box::from(task_id)).or_default();
        let held = task.sessions.as_deref().unwrap_or_default();
        // A re-delivered list changes nothing: the held list stays (no new copy of its ids).
        let merged = if distinct {
            merge_distinct_session_list(held, incoming)
        } else {
            let merged = merge_session_list(held, &incoming);
            (merged != held).then_some(merged)
        };
        match (merged, &mut task.sessions) {
            (Some(merged), sessions) => *sessions = Some(merged),
            (None, sessions @ None) => *sessions = Some(Vec::new()),
            (None, Some(_)) => {}
        }
        self.touch_task(task_id);
        for previous in &left {
            self.touch_task(previous);
        }
        for (session_id, revision) in &late {
            self.note_rejection(Noted {
                input: Input::SessionList,
                reason: Reason::OlderRevisionRejected,
                task_id: Some(task_id),
                session_id: Some(session_id),
                message_id: None,
                revision: Some(revision),
                summary: None,
            });
        }
        Ok(Reason::Applied)
    }

    /// REST: a session's turn list, merged with the turns held and the turn events that arrived
    /// before it ([`merge_turns`]): a list read before a turn event that already arrived (a
    /// concurrent or late load) neither drops that turn nor rolls it back.
    pub fn apply_turn_list(&mut self, session_id: &str, turns: Vec<Turn>) -> Reason {
        if self.removed_input(session_id, None) {
            return Reason::TaskRemoved;
        }
        let entry = self.session_mut(session_id);
        let early = std::mem::take(&mut entry.early_turns);
        let held = entry.turns.clone().unwrap_or_default();
        let merged = merge_turns(held.into_iter().chain(early), turns);
        if entry.turns.as_ref() == Some(&merged) {
            return Reason::Unchanged;
        }
        entry.set_turns(merged);
        self.touch_session(session_id);
        Reason::Applied
    }

    /// WebSocket: a turn started or completed; its row replaces the held one only when newer
    /// ([`crate::rules::order::turn_order`]).
    pub fn apply_turn_event(&mut self, event: TurnEvent) -> Reason {
        let session_id = event.session_id.as_str();
        if self.removed_input(session_id, event.task_id.as_deref()) {
            return Reason::TaskRemoved;
        }
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
        self.take_rows(session_id, rows, true)
    }

    /// Rows taken as a page's (`page`: they are one, which makes the session's rows known).
    pub(super) fn take_rows<'a>(
        &mut self,
        session_id: &str,
        rows: impl IntoIterator<Item = MessageParts<'a>>,
        page: bool,
    ) -> Reason {
        if self.removed_input(session_id, None) {
            return Reason::TaskRemoved;
        }
        let entry = self.session_mut(session_id);
        // The first page makes the session's rows known (SPEC §11): its answers change.
        let mut changed = page && !entry.paged;
        entry.paged |= page;
        for message in rows {
            // A page that lists a deleted id was read before the delete.
            if let Some(deleted) = entry.messages.tombstone(message.id) {
                if !revives(deleted, Revival::PageRow) {
                    continue;
                }
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
        let reason = self.take_message(kind, session_id, task_id, message, projection);
        if is_rejection(reason) {
            self.note_rejection(Noted {
                input: Input::Message(kind),
                reason,
                task_id,
                session_id: Some(session_id),
                message_id: Some(message.id),
                revision: projection.and_then(|p| p.revision.as_ref()),
                summary: None,
            });
        }
        reason
    }

    /// [`Self::apply_message`] without the rejection log.
    fn take_message(
        &mut self,
        kind: MessageEventKind,
        session_id: &str,
        task_id: Option<&str>,
        message: &MessageParts<'_>,
        projection: Option<&PendingProjection>,
    ) -> Reason {
        if self.removed_input(session_id, task_id) {
            return Reason::TaskRemoved;
        }
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
        let revision = projection.and_then(|p| p.revision.as_ref());
        let row = match kind {
            MessageEventKind::Deleted => {
                entry.messages.bury(message.id, revision);
                if entry.messages.remove(message.id) {
                    Upsert::Updated
                } else {
                    Upsert::Unchanged
                }
            }
            _ => match entry.messages.tombstone(message.id) {
                // Older than the delete (or not provably newer): the id stays deleted.
                Some(deleted) if !revives(deleted, Revival::Event(revision)) => Upsert::Buried,
                Some(_) => {
                    entry.messages.unbury(message.id);
                    entry.messages.upsert(message)
                }
                None => entry.messages.upsert(message),
            },
        };
        let row_changed = matches!(row, Upsert::Inserted | Upsert::Updated);
        if row_changed {
            entry.messages_changed();
            if let (false, Some(pending_id)) = (entry.settled.is_empty(), message.pending_id) {
                // A pending row newer than a settlement's position lifts it; once the bundle's
                // rows are all terminal the settlement retires (SPEC §13).
                // Every row of the bundle, wherever its turn stands: discovery's candidates are
                // only the latest turn's, which need not be the bundle's.
                let pending = message.status.is_pending();
                let rows_pending = pending
                    || entry.messages.rows().any(|r| {
                        r.pending_id_str() == Some(pending_id) && r.row.status.is_pending()
                    });
                entry.settled.retain(|s| {
                    &*s.pending_id != pending_id
                        || !retires(rows_pending, lifts(s.position.as_ref(), pending, revision))
                });
            }
        }
        let action_before = entry.projection.action;
        let (reason, changed) = if row == Upsert::Stale {
            (Reason::OlderUpdateCarriesNoProjection, false)
        } else {
            match projection {
                Some(projection) => match (entry.merge_projection(projection), row_changed) {
                    ((Reason::Unchanged, _), true) => (Reason::Applied, true),
                    ((_, false), false) if row == Upsert::Buried => {
                        (Reason::DeletedMessageStaysDeleted, false)
                    }
                    ((why, merged), _) => (why, merged || row_changed),
                },
                None if row_changed => (Reason::Applied, true),
                None if row == Upsert::Buried => (Reason::DeletedMessageStaysDeleted, false),
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

    /// WebSocket: a session changed. Its `state` follows the session's own `updated_at`, its
    /// projection (when its keys are present) the revision rule, each independently of the other
    /// (SPEC §5): a newer revision never hides a state change, an older one never reverts it.
    pub fn apply_session_event(&mut self, session: &Session) -> Reason {
        let (reason, projection) = self.take_session_event(session);
        let noted = if is_rejection(reason) {
            Some(reason)
        } else {
            // The state applied and the projection was older: that part is logged.
            (projection == Reason::OlderRevisionRejected).then_some(projection)
        };
        if let Some(reason) = noted {
            self.note_rejection(Noted {
                input: Input::SessionEvent,
                reason,
                task_id: session.task_id.as_deref(),
                session_id: Some(&session.id),
                message_id: None,
                revision: session.pending_action_revision.as_ref(),
                summary: None,
            });
        }
        reason
    }

    /// [`Self::apply_session_event`] without the rejection log: the event's reason and what its
    /// projection did.
    fn take_session_event(&mut self, session: &Session) -> (Reason, Reason) {
        if self.removed_input(&session.id, session.task_id.as_deref()) {
            return (Reason::TaskRemoved, Reason::Unchanged);
        }
        let entry = self.session_mut(&session.id);
        if entry.belongs_elsewhere(session.task_id.as_deref()) {
            return (Reason::TaskMismatchRejected, Reason::Unchanged);
        }
        entry.adopt_task(session.task_id.as_deref());
        let state = entry.take_state(session.state, session.updated_at.as_ref());
        if state == Field::Changed {
            self.touch_session(&session.id);
        }
        let mut projection = Reason::Unchanged;
        if session.pending_action.is_some() || session.pending_action_revision.is_some() {
            let incoming = PendingProjection {
                action: session.pending_action,
                revision: session.pending_action_revision.clone(),
            };
            // The entry checked and tagged above: merge into it directly.
            let (why, changed) = self.session_mut(&session.id).merge_projection(&incoming);
            if changed {
                self.touch_session(&session.id);
            }
            projection = why;
        }
        let reason = match (state, projection) {
            // The state applied: the event applied, whatever its projection did.
            (Field::Changed, Reason::Unchanged | Reason::OlderRevisionRejected) => Reason::Applied,
            (Field::Older, Reason::Unchanged) => Reason::OlderStateIgnored,
            (_, why) => why,
        };
        (reason, projection)
    }
}
