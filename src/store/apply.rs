//! The session-level inputs: session lists, turn lists and events, message pages and events,
//! session events, each merged under SPEC §5.

use super::messages::{MessageIndex, Upsert};
use super::{MessageEvent, MessageEventKind, MessageParts, ProjectionStore, Reason, TurnEvent};
use crate::error::WireError;
use crate::rules::model::{Message, Session, Turn};
use crate::rules::revision::{can_replace, merge_projection, PendingProjection, ReplaceReason};
use crate::rules::turn::CurrentTurn;

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
    pub(super) fn check_sessions(
        task_id: &str,
        sessions: &[Session],
        root: &str,
    ) -> Result<(), WireError> {
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
}
