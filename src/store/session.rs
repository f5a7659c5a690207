//! A session's entry in the store (`SessionEntry`: its task, state, projection, turns and
//! message index, with the cached current turn) and `SessionRef`, an entry seen as a
//! [`SessionRecord`] by the rules.

use std::cell::Cell;

use super::messages::MessageIndex;
use super::Reason;
use crate::rules::model::{PendingAction, SessionRecord, SessionState, Turn};
use crate::rules::order::session_field_applies;
use crate::rules::revision::{can_replace, merge_projection, PendingProjection};
use crate::rules::time::Timestamp;
use crate::rules::turn::{CurrentTurn, TurnReason};

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
    pub(super) task_id: Option<Box<str>>,
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
}

impl SessionEntry {
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
            self.task_id = task_id.map(Box::from);
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
