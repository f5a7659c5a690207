//! A session's entry in the store (`SessionEntry`: its task, state, projection, turns and
//! message index, with the cached current turn) and `SessionRef`, an entry seen as a
//! [`SessionRecord`] by the rules.

use std::cell::Cell;
use std::sync::Arc;

use super::messages::{MessageIndex, RowView};
use super::{Reason, SessionId};
use crate::hash::IdIndex;
use crate::rules::action::{session_action_source, ActionSource};
use crate::rules::knowledge::SessionInputs;
use crate::rules::model::{MessageKind, PendingAction, SessionRecord, SessionState, Turn};
use crate::rules::order::session_field_applies;
use crate::rules::pending::{session_pending_action_with, SessionActionReason};
use crate::rules::revision::{can_replace, merge_projection, PendingProjection};
use crate::rules::time::Timestamp;
use crate::rules::turn::{current_turn, CurrentTurn, TurnReason};

/// What an input did to one of the session's own fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Field {
    Changed,
    Unchanged,
    /// The input is older than the field's clock: the field stays.
    Older,
}

#[derive(Clone, Debug, Default)]
pub(super) struct SessionEntry {
    /// Shared by every session a session list tagged (one copy per list, not per session).
    pub(super) task_id: Option<Arc<str>>,
    /// Present in its task's loaded session list.
    pub(super) listed: bool,
    pub(super) state: Option<SessionState>,
    /// The `updated_at` of the input that set `state` (SPEC §5: the session's own clock).
    pub(super) state_clock: Option<Timestamp>,
    pub(super) is_primary: bool,
    /// The `updated_at` of the session list row that set `is_primary`.
    pub(super) primary_clock: Option<Timestamp>,
    pub(super) projection: PendingProjection,
    pub(super) turns: Option<Vec<Turn>>,
    /// Turn events received before the turn list.
    pub(super) early_turns: Vec<Turn>,
    pub(super) messages: MessageIndex,
    /// A message page arrived (SPEC §11: the session's rows are known from then on).
    pub(super) paged: bool,
    pub(super) version: u64,
    /// The version at the last change that can move the session's current turn or clarification
    /// bundle (turns, state, projected action, request rows, and any row while a reservation
    /// exists or the current turn is unknown). Other changes (ordinary messages of a known
    /// turn, a new revision of the same action) leave it: the cached answers stay valid.
    pub(super) discovery: u64,
    /// The current turn, computed once per change of turns, state or (with a reservation among
    /// the turns) messages.
    pub(super) current: Cell<Option<(CurrentTurn<usize>, TurnReason)>>,
    /// Some turn is an unpublished reservation (messages can then change the current turn).
    pub(super) has_reservation: bool,
    /// The [`SessionChanges`] generation in which the session was last recorded as changed.
    pub(super) changed_in: u64,
    /// The session list call that last listed the session (a list that names it twice is seen).
    pub(super) listed_in: u64,
    /// The bundles the user's replies settled (SPEC §13), oldest first.
    pub(super) settled: Vec<super::Settled>,
    /// The offset of the last frame that changed the session (0: none), in the store's stream.
    pub(super) offset: u64,
}

/// The sessions changed since the last take, each recorded once without a set: an entry
/// carries the generation in which it was recorded (`SessionEntry::changed_in`), and a take
/// starts a new generation.
#[derive(Clone, Debug)]
pub(super) struct SessionChanges {
    ids: Vec<SessionId>,
    generation: u64,
    /// An id can be in `ids` twice: recorded while it had no entry, or its entry was removed and
    /// made again.
    may_repeat: bool,
}

impl Default for SessionChanges {
    fn default() -> Self {
        SessionChanges {
            ids: Vec::new(),
            // Above every new entry's `changed_in`.
            generation: 1,
            may_repeat: false,
        }
    }
}

impl SessionChanges {
    /// Records the session of `entry` (its id `id`).
    pub(super) fn record(&mut self, id: &SessionId, entry: &mut SessionEntry) {
        if entry.changed_in != self.generation {
            entry.changed_in = self.generation;
            self.ids.push(id.clone());
        }
    }

    /// Records a session that has no entry.
    pub(super) fn record_absent(&mut self, id: &str) {
        self.ids.push(SessionId::from(id));
        self.may_repeat = true;
    }

    /// A session's entry was removed (its id may be recorded again in this generation).
    pub(super) fn removed(&mut self) {
        self.may_repeat = true;
    }

    pub(super) fn reserve(&mut self, additional: usize) {
        self.ids.reserve(additional);
    }

    pub(super) fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The recorded ids, each once; a new generation starts.
    pub(super) fn take(&mut self) -> Vec<String> {
        self.generation = self.generation.wrapping_add(1);
        let ids = std::mem::take(&mut self.ids);
        let mut index =
            std::mem::take(&mut self.may_repeat).then(|| IdIndex::with_capacity(ids.len()));
        let mut kept: Vec<String> = Vec::with_capacity(ids.len());
        for id in ids {
            let repeated = index.as_mut().is_some_and(|index| {
                index
                    .get_or_insert(&id, kept.len(), &|i| kept.get(i).map(String::as_str))
                    .is_some()
            });
            if !repeated {
                kept.push(String::from(&*id));
            }
        }
        kept
    }

    pub(super) fn clear(&mut self) {
        self.ids.clear();
        self.may_repeat = false;
        self.generation = self.generation.wrapping_add(1);
    }
}

impl SessionEntry {
    /// What has arrived about the session (SPEC §11).
    pub(super) fn inputs(&self) -> SessionInputs {
        SessionInputs {
            removed: false,
            quarantined: self.state.is_some_and(|s| !s.is_input_capable()),
            projection: self.projection.action.is_some(),
            turns: self.turns.is_some(),
            messages: self.paged,
        }
    }

    /// The session is known to belong to another task than `task_id`.
    pub(super) fn belongs_elsewhere(&self, task_id: Option<&str>) -> bool {
        matches!((self.task_id.as_deref(), task_id), (Some(held), Some(t)) if held != t)
    }

    /// Merges a projection under the revision rule (SPEC §5); also says whether it changed.
    pub(super) fn merge_projection(&mut self, incoming: &PendingProjection) -> (Reason, bool) {
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
    pub(super) fn adopt_task(&mut self, task_id: Option<&str>) {
        if self.task_id.is_none() {
            self.task_id = task_id.map(Arc::from);
        }
    }

    pub(super) fn set_turns(&mut self, turns: Vec<Turn>) {
        self.has_reservation = turns
            .iter()
            .any(|t| t.flags.prompt_dispatch_pending && !t.flags.prompt_dispatch_attempted);
        self.turns = Some(turns);
        self.current.set(None);
    }

    /// Takes an input's `state` under the session's own clock (SPEC §5,
    /// [`session_field_applies`]): not when the input has none or is older than the state held.
    pub(super) fn take_state(
        &mut self,
        state: Option<SessionState>,
        clock: Option<&Timestamp>,
    ) -> Field {
        let Some(state) = state else {
            return Field::Unchanged;
        };
        if !session_field_applies(self.state_clock.as_ref(), clock) {
            return Field::Older;
        }
        if self.state_clock.as_ref() != clock {
            self.state_clock = clock.cloned();
        }
        if self.state == Some(state) {
            return Field::Unchanged;
        }
        self.state = Some(state);
        self.current.set(None);
        Field::Changed
    }

    /// Takes a session list row's `is_primary` under its own clock, like [`Self::take_state`];
    /// `true` when it changed.
    pub(super) fn take_primary(&mut self, is_primary: bool, clock: Option<&Timestamp>) -> bool {
        if !session_field_applies(self.primary_clock.as_ref(), clock) {
            return false;
        }
        if self.primary_clock.as_ref() != clock {
            self.primary_clock = clock.cloned();
        }
        let changed = self.is_primary != is_primary;
        self.is_primary = is_primary;
        changed
    }

    /// Messages changed: the current turn can only move when a reservation exists.
    pub(super) fn messages_changed(&self) {
        if self.has_reservation {
            self.current.set(None);
        }
    }
}

/// A session entry with its id, seen through [`SessionRecord`].
#[derive(Clone, Copy)]
pub(super) struct SessionRef<'a> {
    pub(super) id: &'a str,
    pub(super) entry: &'a SessionEntry,
}

impl SessionEntry {
    /// `rows` with each row of a bundle the user's reply settled marked so (SPEC §13: it counts
    /// as answered).
    pub(super) fn settled_rows<'a>(&self, mut rows: Vec<RowView<'a>>) -> Vec<RowView<'a>> {
        if !self.settled.is_empty() {
            for row in &mut rows {
                row.settled = row
                    .pending_id_str()
                    .is_some_and(|p| self.settled.iter().any(|s| &*s.pending_id == p));
            }
        }
        rows
    }

    /// Whether a row of request `pending_id` (a permission's, or a clarification bundle's) is
    /// still pending in the data, wherever its turn stands.
    pub(super) fn request_pending(&self, pending_id: &str, permission: bool) -> bool {
        let kind = if permission {
            MessageKind::PermissionRequest
        } else {
            MessageKind::ClarificationRequest
        };
        self.messages.rows().any(|r| {
            r.row.kind == kind
                && r.pending_id_str() == Some(pending_id)
                && r.row.status.is_pending()
        })
    }

    /// The session's current turn (SPEC §2), as an index into its turns: computed once per
    /// change of what it reads (`current` is cleared with the turns, the state and the messages).
    pub(super) fn current_turn(&self) -> (CurrentTurn<usize>, TurnReason) {
        self.current.get().unwrap_or_else(|| {
            let computed = current_turn(self.turns.as_deref(), self.state, |turn| {
                self.messages.references(turn)
            });
            self.current.set(Some(computed));
            computed
        })
    }

    /// Whether the session's settled bundles make its rows, not its held projection, decide its
    /// pending action ([`session_action_source`]).
    pub(super) fn rows_decide(&self) -> bool {
        if self.settled.is_empty() {
            return false;
        }
        // The current turn's request rows; `None` while the turn history is unknown (then every
        // settled bundle counts as the current turn's, as when it settled).
        let current = match self.current_turn().0 {
            CurrentTurn::Turn(i) => Some(
                self.turns
                    .as_ref()
                    .and_then(|t| t.get(i))
                    .map(|t| self.messages.turn_requests(&t.id))
                    .unwrap_or_default(),
            ),
            CurrentTurn::Unknown => None,
            CurrentTurn::None => Some(Vec::new()),
        };
        self.settled.iter().any(|s| {
            let in_current = current.as_ref().is_none_or(|rows| {
                rows.iter()
                    .any(|r| r.pending_id_str() == Some(&*s.pending_id))
            });
            session_action_source(
                s.position.as_ref(),
                self.projection.revision.as_ref(),
                in_current,
            ) == ActionSource::Rows
        })
    }

    /// The session's pending action by its rows (SPEC §4), settled bundles counted as answered.
    pub(super) fn rows_action(&self) -> (Option<PendingAction>, SessionActionReason) {
        session_pending_action_with(
            self.state,
            self.turns.as_deref(),
            |turn| self.messages.references(turn),
            |turn| {
                self.settled_rows(self.messages.turn_requests(turn))
                    .into_iter()
            },
        )
    }
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
    /// The held projection; while the user's settled answer is newer than it (SPEC §13), the
    /// rows' word, so the task's action and its pending owner follow the answer at once.
    fn action(&self) -> Option<PendingAction> {
        if self.entry.rows_decide() {
            return self.entry.rows_action().0;
        }
        self.entry.projection.action.flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_set_holds_each_session_once() {
        let mut changes = SessionChanges::default();
        let (a, b) = (SessionId::from("a"), SessionId::from("b"));
        let (mut entry_a, mut entry_b) = (SessionEntry::default(), SessionEntry::default());
        changes.record(&a, &mut entry_a);
        changes.record(&a, &mut entry_a);
        changes.record(&b, &mut entry_b);
        assert_eq!(changes.take(), ["a", "b"]);
        assert!(changes.is_empty());
        // A new generation: the same entries are recorded again, once.
        changes.record(&b, &mut entry_b);
        changes.record(&b, &mut entry_b);
        assert_eq!(changes.take(), ["b"]);
        // Removed and made again within one generation, or recorded without an entry: still once.
        changes.record(&a, &mut entry_a);
        changes.removed();
        let mut again = SessionEntry::default();
        changes.record(&a, &mut again);
        changes.record_absent("c");
        changes.record_absent("c");
        assert_eq!(changes.take(), ["a", "c"]);
        changes.record(&a, &mut again);
        changes.clear();
        assert!(changes.take().is_empty());
    }
}
