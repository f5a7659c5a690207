//! The reading side of snapshots: [`ProjectionStore::merge`], which merges a decoded snapshot
//! into the state held (a later page's, SPEC §12), [`ProjectionStore::hydrate`], which is that
//! merge into a new store, and the parsing of a rejection's input and reason that the decoder
//! (`wire::snapshot`) uses.

use std::sync::Arc;

use super::SnapshotInput;
use crate::hash::IdIndex;
use crate::rules::action::Stale;
use crate::rules::connection::{self, Position};
use crate::rules::order::merge_session_list;
use crate::rules::summary::is_newer_summary;
use crate::store::rejections::{Input, Noted};
use crate::store::session::Field;
use crate::store::tasks::{HeldSummary, TaskEntry};
use crate::store::{MessageParts, ProjectionStore, Reason, SessionId, TurnEvent};

impl<P: Clone> ProjectionStore<P> {
    /// A store holding exactly what `snapshot` describes; `restored`: its answers are marked as
    /// restored until the stream's first hello or a task snapshot ([`Self::restored`]).
    pub fn hydrate(snapshot: SnapshotInput<P>, restored: bool) -> Self {
        let mut store = Self::new();
        store.merge(snapshot);
        store.restored = restored;
        store.clear_changes();
        store
    }

    /// Merges another page's snapshot into the state held (SPEC §12): each part is ordered
    /// against what is held by the rule its input has (a session's state and `is_primary` by
    /// their clocks, its projection by the revision rule, turns and messages as a REST list and
    /// page are, a task's summary by its revision, session lists as a union; a removal is final),
    /// so a part older than what is held is ignored (and logged), whatever the order pages come
    /// in; no clock of the client's is read. Parts with no order of their own (a task's legacy
    /// pending action) give way to the held ones when the snapshot is older in the stream
    /// ([`connection::snapshot_is_older`]); the user's settled answers are taken for sessions
    /// the store did not hold only (a response belongs to the page that sent it). The stream
    /// position moves by [`connection::position_after_snapshot`]. `Applied` when anything
    /// changed.
    #[inline(never)]
    pub fn merge(&mut self, snapshot: SnapshotInput<P>) -> Reason {
        let before = self.version;
        let holds_nothing = self.tasks.is_empty()
            && self.sessions.is_empty()
            && self.position.is_none()
            && self.server_epoch.is_none();
        let at = |(stream, offset): &(String, u64)| Position {
            stream: Box::<str>::from(stream.as_str()),
            offset: *offset,
        };
        let incoming = snapshot.position.as_ref().map(at);
        let older = connection::snapshot_is_older(self.held_position().as_ref(), incoming.as_ref());
        let position =
            connection::position_after_snapshot(self.held_position(), incoming, holds_nothing);
        self.set_position(position);
        if holds_nothing {
            self.server_epoch = snapshot.epoch.map(Box::from);
        }
        for id in &snapshot.removed_tasks {
            if !self.is_removed_task(id) {
                self.remove_task(id);
            }
        }
        for id in &snapshot.removed_sessions {
            if !self.is_removed_session(id) {
                self.delete_session(id);
            }
        }
        // Each task id once, shared by its sessions.
        let mut shared: Vec<Arc<str>> = Vec::new();
        let mut index = IdIndex::with_capacity(snapshot.sessions.len());
        let mut task_id = |id: &str| -> Arc<str> {
            let at = index.get_or_insert(id, shared.len(), &|i| shared.get(i).map(|t| &**t));
            match at.and_then(|i| shared.get(i)) {
                Some(held) => held.clone(),
                None => {
                    let id: Arc<str> = Arc::from(id);
                    shared.push(id.clone());
                    id
                }
            }
        };
        for mut s in snapshot.sessions {
            let noted = |reason| Noted {
                input: Input::Snapshot,
                reason,
                task_id: None,
                session_id: None,
                message_id: None,
                revision: None,
                summary: None,
            };
            if self.removed_input(&s.id, s.task.as_deref()) {
                self.note_rejection(Noted {
                    session_id: Some(&s.id),
                    ..noted(Reason::TaskRemoved)
                });
                continue;
            }
            let new = !self.sessions.contains_key(s.id.as_str());
            let entry = self.session_mut(&s.id);
            if entry.belongs_elsewhere(s.task.as_deref()) {
                self.note_rejection(Noted {
                    session_id: Some(&s.id),
                    ..noted(Reason::TaskMismatchRejected)
                });
                continue;
            }
            let mut changed = new;
            if entry.task_id.is_none() {
                entry.task_id = s.task.as_deref().map(&mut task_id);
                changed |= entry.task_id.is_some();
            }
            if new {
                // Not held: what the page knew of it, as it was (hydrate's every field).
                entry.is_primary = s.primary;
                entry.primary_clock = s.primary_at;
                entry.early_turns = std::mem::take(&mut s.early);
                entry.settled = s.settled;
            } else if s.listed {
                changed |= entry.take_primary(s.primary, s.primary_at.as_ref());
            }
            if s.listed && !entry.listed {
                entry.listed = true;
                changed = true;
            }
            let state = entry.take_state(s.state, s.state_at.as_ref());
            changed |= state == Field::Changed;
            let (projection, moved) = entry.merge_projection(&s.projection);
            changed |= moved;
            if changed {
                self.touch_session(&s.id);
            }
            // Turns and messages as their REST list and page (or events) are taken.
            if let Some(turns) = s.turns {
                self.apply_turn_list(&s.id, turns);
            } else if !new {
                for turn in s.early {
                    let session_id = s.id.clone();
                    self.apply_turn_event(TurnEvent {
                        session_id,
                        task_id: None,
                        turn,
                    });
                }
            }
            self.take_rows(&s.id, s.messages.iter().map(MessageParts::from), s.paged);
            // Each deletion as its event: the row goes (SPEC §5).
            if let Some(entry) = self.sessions.get_mut(s.id.as_str()) {
                let mut rows = false;
                for (message, revision) in &s.deleted {
                    entry.messages.bury(message, revision.as_ref());
                    rows |= entry.messages.remove(message);
                }
                if rows {
                    entry.messages_changed();
                    self.touch_session(&s.id);
                }
            }
            let why = match (state, projection) {
                (Field::Older, _) => Some(Reason::OlderStateIgnored),
                (_, Reason::OlderRevisionRejected) => Some(Reason::OlderRevisionRejected),
                _ => None,
            };
            if let Some(reason) = why {
                self.note_rejection(Noted {
                    session_id: Some(&s.id),
                    revision: s.projection.revision.as_ref(),
                    ..noted(reason)
                });
            }
        }
        for t in snapshot.tasks {
            if self.is_removed_task(&t.id) {
                continue;
            }
            let sessions = t.sessions.map(|list| {
                list.into_iter()
                    .map(|id| match self.sessions.get_key_value(id.as_str()) {
                        Some((key, _)) => key.clone(),
                        None => SessionId::from(id),
                    })
                    .collect::<Vec<_>>()
            });
            let new = !self.tasks.contains_key(t.id.as_str());
            let task: &mut TaskEntry<P> = self.tasks.entry(Box::from(t.id.as_str())).or_default();
            let mut changed = new;
            if t.known && (!task.known || !older) {
                changed |= !task.known || task.task_pending_action != t.legacy;
                task.known = true;
                task.task_pending_action = t.legacy;
            }
            let mut late = None;
            if let Some((summary, payload)) = t.summary {
                if is_newer_summary(
                    Some(summary.revision),
                    task.summary.as_ref().map(HeldSummary::revision),
                ) {
                    task.summary = Some(HeldSummary { summary, payload });
                    changed = true;
                } else {
                    late = Some(summary.revision);
                }
            }
            match (sessions, &mut task.sessions) {
                (None, _) => {}
                (Some(list), held @ None) => {
                    *held = Some(list);
                    changed = true;
                }
                (Some(list), Some(held)) => {
                    let merged = merge_session_list(held, &list);
                    if merged != *held {
                        *held = merged;
                        changed = true;
                    }
                }
            }
            if changed {
                self.touch_task(&t.id);
            }
            if let Some(revision) = late {
                self.note_rejection(Noted {
                    input: Input::Snapshot,
                    reason: Reason::OlderRevisionRejected,
                    task_id: Some(&t.id),
                    session_id: None,
                    message_id: None,
                    revision: None,
                    summary: revision,
                });
            }
        }
        // Decoded (and so validated) by every build; kept where the log is (`development`), and
        // only by a store that held nothing (another page's log is not this one's).
        #[cfg(feature = "development")]
        if holds_nothing {
            for r in snapshot.rejected {
                self.rejected.push(r);
            }
        }
        if self.version == before {
            Reason::Unchanged
        } else {
            Reason::Applied
        }
    }
}

impl Input {
    /// The input a rejection's text names (the inverse of [`Input::as_str`]).
    pub fn parse(text: &str) -> Option<Input> {
        use crate::store::MessageEventKind as K;
        Some(match text {
            "session_list" => Input::SessionList,
            "session.updated" => Input::SessionEvent,
            "session.message.added" => Input::Message(K::Added),
            "session.message.updated" => Input::Message(K::Updated),
            "session.message.deleted" => Input::Message(K::Deleted),
            "task.status_summary.updated" => Input::StatusSummary,
            "respond_reply" => Input::RespondReply,
            "snapshot" => Input::Snapshot,
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
            Reason::StaleReply(Stale::UnknownAttempt),
            Reason::StaleReply(Stale::Superseded),
            Reason::StaleReply(Stale::AlreadyReplied),
        ]
        .into_iter()
        .find(|r| r.code() == code)
    }
}
