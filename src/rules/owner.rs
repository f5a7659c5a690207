//! Pending-owner session resolution (SPEC §6): which session to open when the user clicks a task,
//! and how an asynchronous selection settles.

use super::model::{PendingAction, SessionRecord, Task};
use super::pending::effective_task_pending_action;

/// Where a task click navigates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner<'a> {
    Session(&'a str),
    /// Open the task without a session (fail closed).
    TaskOnly,
}

/// Why [`resolve_owner`] decided what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerReason {
    PendingOwner,
    OwnerNotInputCapable,
    PreferredSession,
    PrimarySession,
    FirstListedSession,
    PreferredNotListed,
    NoSession,
}

fn belongs_elsewhere<S: SessionRecord>(session: &S, task_id: Option<&str>) -> bool {
    matches!((session.task_id(), task_id), (Some(s), Some(t)) if s != t)
}

/// Resolves the session to open for a task (SPEC §6).
///
/// * Pending task (`action` is `Some`): the first listed session that is input-capable and whose
///   `pending_action` equals the task's action; none → task-only. Never the remembered, primary
///   or first session.
/// * Clean task: the preferred session if listed (and not known to belong to another task), else
///   the first `is_primary`, else the first listed, else the preferred id.
///
/// `preferred` is the remembered session; pass it only when it has an environment. A listed
/// session with an empty id is not a candidate (nothing could open it).
pub fn resolve_owner<'a, S: SessionRecord>(
    action: Option<PendingAction>,
    task_id: Option<&str>,
    sessions: &'a [S],
    preferred: Option<&'a str>,
) -> (Owner<'a>, OwnerReason) {
    // A session without an id (`""`) cannot be opened: never an owner.
    let listed = || {
        sessions
            .iter()
            .filter(move |s| !s.id().is_empty() && !belongs_elsewhere(s, task_id))
    };
    if let Some(action) = action {
        return match listed().find(|s| {
            s.state().is_some_and(|state| state.is_input_capable()) && s.action() == Some(action)
        }) {
            Some(owner) => (Owner::Session(owner.id()), OwnerReason::PendingOwner),
            None => (Owner::TaskOnly, OwnerReason::OwnerNotInputCapable),
        };
    }
    if let Some(preferred) = preferred.filter(|p| !p.is_empty()) {
        if let Some(session) = listed().find(|s| s.id() == preferred) {
            return (Owner::Session(session.id()), OwnerReason::PreferredSession);
        }
    }
    if let Some(primary) = listed().find(|s| s.is_primary()) {
        return (Owner::Session(primary.id()), OwnerReason::PrimarySession);
    }
    if let Some(first) = listed().next() {
        return (Owner::Session(first.id()), OwnerReason::FirstListedSession);
    }
    match preferred.filter(|p| !p.is_empty()) {
        Some(preferred) => (Owner::Session(preferred), OwnerReason::PreferredNotListed),
        None => (Owner::TaskOnly, OwnerReason::NoSession),
    }
}

/// The task state a selection compares at settle: summary revision and effective action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskMark {
    pub summary_revision: Option<u64>,
    pub action: Option<PendingAction>,
}

impl TaskMark {
    pub fn of(task: &Task) -> TaskMark {
        TaskMark {
            summary_revision: task.status_summary.and_then(|s| s.revision),
            action: effective_task_pending_action(task),
        }
    }
}

/// How the session load of a selection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load<'a, S> {
    Loaded(&'a [S]),
    Failed,
    Aborted,
}

/// The facts at settle time of an asynchronous selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settle<'a, S> {
    /// The task as captured when the selection began; `None` when it was not known then.
    pub at_start: Option<TaskMark>,
    /// The task now; `None` when it is not known (it disappeared, when it was known at start).
    pub now: Option<TaskMark>,
    pub task_id: Option<&'a str>,
    /// A newer selection started.
    pub superseded: bool,
    /// The active task changed during the load (sticky).
    pub active_task_changed: bool,
    pub load: Load<'a, S>,
    pub preferred: Option<&'a str>,
}

/// The outcome of a settled selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectionOutcome<'a> {
    Session(&'a str),
    TaskOnly,
    /// Do nothing: the selection no longer matters.
    Inert,
}

/// Why [`settle_selection`] decided what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettleReason {
    Superseded,
    ActiveTaskChanged,
    Aborted,
    TaskGone,
    TaskChangedDuringLoad,
    LoadFailedPendingTask,
    LoadFailedCleanTask,
    Resolved(OwnerReason),
}

/// Settles an asynchronous selection (SPEC §6).
pub fn settle_selection<S: SessionRecord>(
    settle: Settle<'_, S>,
) -> (SelectionOutcome<'_>, SettleReason) {
    if settle.superseded {
        return (SelectionOutcome::Inert, SettleReason::Superseded);
    }
    if settle.active_task_changed {
        return (SelectionOutcome::Inert, SettleReason::ActiveTaskChanged);
    }
    if matches!(settle.load, Load::Aborted) {
        return (SelectionOutcome::Inert, SettleReason::Aborted);
    }
    // Inert only when the task projection disappeared: a task the caller never knew counts as
    // clean with no summary, before and after (a failed load then settles as for a clean task).
    let unknown = TaskMark {
        summary_revision: None,
        action: None,
    };
    let now = match (settle.at_start, settle.now) {
        (Some(_), None) => return (SelectionOutcome::Inert, SettleReason::TaskGone),
        (_, now) => now.unwrap_or(unknown),
    };
    if now != settle.at_start.unwrap_or(unknown) {
        return (
            SelectionOutcome::TaskOnly,
            SettleReason::TaskChangedDuringLoad,
        );
    }
    let sessions = match settle.load {
        Load::Loaded(sessions) => sessions,
        _ if now.action.is_some() => {
            return (
                SelectionOutcome::TaskOnly,
                SettleReason::LoadFailedPendingTask,
            )
        }
        _ => {
            let outcome = match settle.preferred.filter(|p| !p.is_empty()) {
                Some(preferred) => SelectionOutcome::Session(preferred),
                None => SelectionOutcome::TaskOnly,
            };
            return (outcome, SettleReason::LoadFailedCleanTask);
        }
    };
    let (owner, reason) = resolve_owner(now.action, settle.task_id, sessions, settle.preferred);
    let outcome = match owner {
        Owner::Session(id) => SelectionOutcome::Session(id),
        Owner::TaskOnly => SelectionOutcome::TaskOnly,
    };
    (outcome, SettleReason::Resolved(reason))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::model::{Session, SessionState};

    fn settle<'a>(
        at_start: Option<TaskMark>,
        now: Option<TaskMark>,
        load: Load<'a, Session>,
        preferred: Option<&'a str>,
    ) -> (SelectionOutcome<'a>, SettleReason) {
        settle_selection(Settle {
            at_start,
            now,
            task_id: Some("task-1"),
            superseded: false,
            active_task_changed: false,
            load,
            preferred,
        })
    }

    const CLEAN: TaskMark = TaskMark {
        summary_revision: None,
        action: None,
    };

    fn listed(id: &str, primary: bool, action: Option<PendingAction>) -> Session {
        Session {
            id: id.to_owned(),
            task_id: Some("task-1".to_owned()),
            state: Some(SessionState::Running),
            is_primary: primary,
            pending_action: Some(action),
            pending_action_revision: None,
            updated_at: None,
        }
    }

    #[test]
    fn a_session_without_an_id_is_never_the_owner() {
        // Found by the store fuzz target (fuzz/regressions/store/owner-empty-session-id.bin): a
        // primary session listed with `id: ""` was the session a selection opened.
        let sessions = [listed("", true, None), listed("s1", false, None)];
        assert_eq!(
            resolve_owner(None, Some("task-1"), &sessions, None).0,
            Owner::Session("s1")
        );
        let only = [listed("", true, Some(PendingAction::Clarification))];
        assert_eq!(
            resolve_owner(
                Some(PendingAction::Clarification),
                Some("task-1"),
                &only,
                None
            )
            .0,
            Owner::TaskOnly
        );
        assert_eq!(
            resolve_owner(None, Some("task-1"), &only, Some("")),
            (Owner::TaskOnly, OwnerReason::NoSession)
        );
    }

    #[test]
    fn only_a_task_that_disappeared_makes_the_selection_inert() {
        assert_eq!(
            settle(Some(CLEAN), None, Load::Failed, None),
            (SelectionOutcome::Inert, SettleReason::TaskGone)
        );
        // Never known: neither at the click nor now. A failed load settles as for a clean task.
        assert_eq!(
            settle(None, None, Load::Failed, None),
            (
                SelectionOutcome::TaskOnly,
                SettleReason::LoadFailedCleanTask
            )
        );
        assert_eq!(
            settle(None, None, Load::Failed, Some("s1")),
            (
                SelectionOutcome::Session("s1"),
                SettleReason::LoadFailedCleanTask
            )
        );
        assert_eq!(
            settle(None, None, Load::Loaded(&[]), None),
            (
                SelectionOutcome::TaskOnly,
                SettleReason::Resolved(OwnerReason::NoSession)
            )
        );
        // Known only after the click, and pending: it changed during the load.
        let pending = TaskMark {
            summary_revision: Some(1),
            action: Some(PendingAction::Clarification),
        };
        assert_eq!(
            settle(None, Some(pending), Load::Failed, None),
            (
                SelectionOutcome::TaskOnly,
                SettleReason::TaskChangedDuringLoad
            )
        );
    }
}
