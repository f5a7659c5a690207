//! Task selection (SPEC §6): the active selection and its tickets, the superseded ones, and
//! settling a selection against the store's merged state.

use super::session::SessionRef;
use super::{Navigation, ProjectionStore, Reason, SelectionLoad, SelectionTicket};
use crate::error::WireError;
use crate::rules::owner::{settle_selection, Load, SelectionOutcome, Settle, TaskMark};

#[derive(Clone, Debug)]
pub(super) struct ActiveSelection {
    ticket: String,
    task_id: Box<str>,
    at_start: Option<TaskMark>,
    preferred: Option<Box<str>>,
    active_task_changed: bool,
}

/// How many superseded selection tickets are remembered.
const MAX_SUPERSEDED: usize = 16;

impl<P: Clone> ProjectionStore<P> {
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
    pub fn settle_selection<S: AsRef<str>>(
        &mut self,
        ticket: &str,
        load: SelectionLoad<S>,
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
                    at_start: None,
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
        // A loaded list's rows are handed to the store (`None`): the guards below read its merged
        // list instead.
        let unloaded = match load {
            SelectionLoad::Loaded(sessions) => {
                if present {
                    self.apply_session_list(&selection.task_id, sessions)?;
                }
                None
            }
            SelectionLoad::Failed => Some(Load::Failed),
            SelectionLoad::Aborted => Some(Load::Aborted),
        };
        let task = self.tasks.get(&*selection.task_id);
        let now = task.map(|t| self.mark(t));
        let listed = task.map(|t| self.listed_sessions(t)).unwrap_or_default();
        let (outcome, why) = settle_selection(Settle {
            // A task unknown at the click counts as clean with no summary (the rule's call).
            at_start: selection.at_start,
            now,
            task_id: Some(&selection.task_id),
            superseded: false,
            active_task_changed: selection.active_task_changed,
            load: unloaded.unwrap_or(Load::Loaded(&listed)),
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
}
