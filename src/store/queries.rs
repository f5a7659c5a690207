//! The queries: current turn, session and task pending actions, clarification bundle, hidden
//! ids, permission, status summary and pending owner; each answer is a rule call. Each first asks
//! [`crate::rules::knowledge`] whether the inputs its rule reads have arrived: an answer not
//! known yet is `None` (`CurrentTurn::Unknown` for the current turn), with the input it awaits as
//! its reason, and never a clean answer (SPEC §11).

use super::messages::RowView;
use super::session::{SessionEntry, SessionRef};
use super::tasks::{HeldSummary, TaskEntry};
use super::{Bundle, ProjectionStore, Reason};
use crate::rules::action::{
    open_after_delete, permission_answerable, permission_shown, summary_predates,
};
use crate::rules::clarification;
use crate::rules::clarification::{considered, pending_bundle, pending_request, Considered, Scope};
use crate::rules::knowledge::{self, Knowledge, SessionInputs, TaskInputs};
use crate::rules::model::{MessageRecord, PendingAction, RequestStatus};
use crate::rules::owner::{resolve_owner, Owner, TaskMark};
use crate::rules::pending::{effective_task_pending_action, task_pending_action};
use crate::rules::time::Timestamp;
use crate::rules::turn::CurrentTurn;

/// What discovery found in a session ([`ProjectionStore::discover`]).
pub(super) struct Discovery<'a> {
    pub(super) considered: Considered<'a>,
    /// The rows discovery read, in creation order.
    pub(super) candidates: Vec<RowView<'a>>,
    /// The pending request among them.
    pub(super) request: Option<usize>,
    /// The active bundle's pending members among them (empty when incomplete).
    pub(super) members: Vec<usize>,
    pub(super) reason: Reason,
}

impl<'a> Discovery<'a> {
    /// The active bundle: the pending request's id and its members' ids, when the reason is
    /// [`Reason::ActiveBundle`].
    pub(super) fn bundle(&self) -> Option<Bundle<'a>> {
        let request = self.request.and_then(|i| self.candidates.get(i))?;
        (self.reason == Reason::ActiveBundle).then(|| Bundle {
            pending_id: request.pending_id_str(),
            message_ids: self
                .members
                .iter()
                .filter_map(|&i| self.candidates.get(i).map(|v| v.id_str()))
                .collect(),
        })
    }
}

/// `rows` with the session's settled bundles marked (SPEC §13: their rows count as answered).
/// The permission a session is blocked on (`pendingPermission`, SPEC §3 and §13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockedPermission<'a> {
    pub message_id: &'a str,
    pub pending_id: Option<&'a str>,
    /// Its status as the user sees it: `expired` when it cannot be answered.
    pub shown: RequestStatus,
    /// Whether the user can answer it (it carries its request identity).
    pub answerable: bool,
}

impl<P: Clone> ProjectionStore<P> {
    pub(super) fn current_turn_of(entry: &SessionEntry) -> (CurrentTurn<&str>, Reason) {
        let (current, why) = entry.current_turn();
        let id = current.map(|i| {
            entry
                .turns
                .as_ref()
                .and_then(|t| t.get(i))
                .map_or("", |t| t.id.as_str())
        });
        (id, Reason::Turn(why))
    }

    /// What has arrived about a session (SPEC §11).
    pub(super) fn session_inputs(&self, session_id: &str) -> SessionInputs {
        self.session_inputs_of(session_id, self.sessions.get(session_id).map(|e| &**e))
    }

    /// [`Self::session_inputs`] of the session's entry, already looked up.
    fn session_inputs_of(&self, session_id: &str, entry: Option<&SessionEntry>) -> SessionInputs {
        match entry {
            Some(entry) => entry.inputs(),
            None => SessionInputs {
                removed: self.is_removed_session(session_id),
                ..SessionInputs::default()
            },
        }
    }

    /// What has arrived about a task (SPEC §11).
    pub(super) fn task_inputs(&self, task_id: &str) -> TaskInputs {
        self.task_inputs_of(task_id, self.tasks.get(task_id))
    }

    /// [`Self::task_inputs`] of the task's entry, already looked up.
    fn task_inputs_of(&self, task_id: &str, task: Option<&TaskEntry<P>>) -> TaskInputs {
        match task {
            Some(task) => TaskInputs {
                removed: false,
                described: task.known,
                sessions: task.sessions.is_some(),
            },
            None => TaskInputs {
                removed: self.is_removed_task(task_id),
                ..TaskInputs::default()
            },
        }
    }

    /// The session's entry when `knowledge` says its answer is known and held; else the answer
    /// `removed` gives a removed session, or `None` with the input awaited.
    fn known_session<T>(
        &self,
        session_id: &str,
        knowledge: fn(SessionInputs) -> Knowledge,
        removed: T,
    ) -> Result<&SessionEntry, (Option<T>, Reason)> {
        // One lookup: the entry both says what arrived and answers.
        let entry = self.sessions.get(session_id).map(|e| &**e);
        match (knowledge(self.session_inputs_of(session_id, entry)), entry) {
            (Knowledge::Known, Some(entry)) => Ok(entry),
            (Knowledge::Awaiting(input), _) => Err((None, Reason::Awaiting(input))),
            // Removed (or, never, known without an entry): known and clean.
            _ => Err((Some(removed), Reason::TaskRemoved)),
        }
    }

    /// The session's current turn (SPEC §2); unknown until its turns and messages arrived
    /// (known at once for a quarantined session: none).
    pub fn current_turn_id(&self, session_id: &str) -> (CurrentTurn<&str>, Reason) {
        match self.known_session(session_id, knowledge::session_discovery, CurrentTurn::None) {
            Ok(entry) => Self::current_turn_of(entry),
            Err((answer, why)) => (answer.unwrap_or(CurrentTurn::Unknown), why),
        }
    }

    /// The session's pending action: its authoritative projection when known, else derived from
    /// its loaded turns and messages (SPEC §4); `None` while unknown (SPEC §11).
    pub fn session_pending_action(
        &self,
        session_id: &str,
    ) -> (Option<Option<PendingAction>>, Reason) {
        let entry = match self.known_session(session_id, knowledge::session_action, None) {
            Ok(entry) => entry,
            Err(answer) => return answer,
        };
        match entry.projection.action {
            Some(action) if !entry.rows_decide() => {
                return (Some(action), Reason::AuthoritativeProjection)
            }
            _ => {}
        }
        let (action, why) = entry.rows_action();
        (Some(action), Reason::SessionAction(why))
    }

    /// Discovery over a session's held rows (SPEC §3): the rows read, the pending request and
    /// the active bundle's members among them (indices), and why.
    pub(super) fn discover(entry: &SessionEntry) -> Discovery<'_> {
        let (current, _) = Self::current_turn_of(entry);
        let scope = Scope {
            current_turn: current,
            pending_action: entry.projection.action,
        };
        let considered = considered(Some(&scope));
        let mut discovery = Discovery {
            considered,
            candidates: Vec::new(),
            request: None,
            members: Vec::new(),
            reason: Reason::NoPendingRequest,
        };
        discovery.candidates = match considered {
            Considered::Nothing => {
                discovery.reason = match (scope.pending_action, current) {
                    (Some(a), _) if a != Some(PendingAction::Clarification) => {
                        Reason::ProjectionNotClarification
                    }
                    (_, CurrentTurn::None) => Reason::NoCurrentTurn,
                    _ => Reason::AuthorityUnknown,
                };
                return discovery;
            }
            Considered::Turn(turn) => entry.settled_rows(entry.messages.turn_requests(turn)),
            Considered::All => entry.settled_rows(entry.messages.discovery_candidates()),
        };
        discovery.request = pending_request(&discovery.candidates, Some(&scope));
        if discovery.request.is_none() {
            return discovery;
        }
        discovery.members = pending_bundle(&discovery.candidates, Some(&scope));
        discovery.reason = if discovery.members.is_empty() {
            Reason::BundleIncomplete
        } else {
            Reason::ActiveBundle
        };
        discovery
    }

    /// The active clarification bundle of a session (SPEC §3), scoped by its current turn and
    /// its authoritative projection: `Some(None)` when there is none, `None` while unknown.
    pub fn pending_clarification(&self, session_id: &str) -> (Option<Option<Bundle<'_>>>, Reason) {
        let entry = match self.known_session(session_id, knowledge::session_discovery, None) {
            Ok(entry) => entry,
            Err(answer) => return answer,
        };
        let discovery = Self::discover(entry);
        (Some(discovery.bundle()), discovery.reason)
    }

    /// The active bundle's `pending_id` and when it was asked (its first member's `created_at`),
    /// for the inbox (SPEC §14); `None` while unknown, `Some(None)` for none (or a bundle no
    /// `pending_id` names).
    pub(super) fn live_bundle(&self, session_id: &str) -> Option<Option<(&str, Timestamp)>> {
        let entry = match self.known_session(session_id, knowledge::session_discovery, None) {
            Ok(entry) => entry,
            Err((answer, _)) => return answer,
        };
        let discovery = Self::discover(entry);
        if discovery.reason != Reason::ActiveBundle {
            return Some(None);
        }
        let request = discovery.request.and_then(|i| discovery.candidates.get(i));
        let first = discovery
            .members
            .first()
            .and_then(|&i| discovery.candidates.get(i));
        Some(
            request
                .and_then(|r| r.pending_id_str())
                .zip(first.map(|m| m.created_at().clone())),
        )
    }

    /// The message ids an overlay renders, hidden from the transcript (SPEC §3); `None` while
    /// unknown.
    pub fn hidden_message_ids(&self, session_id: &str) -> (Option<Vec<&str>>, Reason) {
        let (bundle, why) = self.pending_clarification(session_id);
        (
            bundle.map(|b| b.map(|b| b.message_ids).unwrap_or_default()),
            why,
        )
    }

    /// Whether the session is blocked on a permission (SPEC §3); `None` while unknown.
    pub fn has_pending_permission(&self, session_id: &str) -> (Option<bool>, Reason) {
        let (blocked, why) = self.pending_permission(session_id);
        (blocked.map(|b| b.is_some()), why)
    }

    /// The permission the session is blocked on (SPEC §3, its bundle settled by the user's
    /// reply counted as answered, SPEC §13): `Some(None)` when none, `None` while unknown.
    pub fn pending_permission(
        &self,
        session_id: &str,
    ) -> (Option<Option<BlockedPermission<'_>>>, Reason) {
        let entry = match self.known_session(session_id, knowledge::session_rows, None) {
            Ok(entry) => entry,
            Err(answer) => return answer,
        };
        let rows = entry.settled_rows(entry.messages.permission_candidates());
        let blocked = clarification::pending_permission(&rows).map(|row| {
            let flags = MessageRecord::flags(row);
            BlockedPermission {
                message_id: row.id_str(),
                pending_id: row.pending_id_str(),
                shown: permission_shown(row.row.status, flags),
                answerable: permission_answerable(flags),
            }
        });
        let why = if blocked.is_some() {
            Reason::NewestPermissionPending
        } else {
            Reason::NoPendingPermission
        };
        (Some(blocked), why)
    }

    pub(super) fn listed_sessions<'s>(&'s self, task: &'s TaskEntry<P>) -> Vec<SessionRef<'s>> {
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
    pub(super) fn effective_action(&self, task: &TaskEntry<P>) -> (Option<PendingAction>, Reason) {
        if (!task.known && task.summary.is_none()) || self.settled_since_summary(task) {
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

    /// Whether a session of the task holds a settlement (deciding by its rows) made while the
    /// task's held summary, or a newer one, was held: that summary predates the answer (SPEC
    /// §13), so the sessions decide. Only with the task's session list.
    fn settled_since_summary(&self, task: &TaskEntry<P>) -> bool {
        let Some(held) = task.summary.as_ref() else {
            return false;
        };
        let held = held.revision();
        task.sessions.is_some()
            && self.listed_sessions(task).iter().any(|s| {
                s.entry.rows_decide()
                    && s.entry
                        .settled
                        .iter()
                        .any(|settled| summary_predates(held, settled.summary))
            })
    }

    pub(super) fn mark(&self, task: &TaskEntry<P>) -> TaskMark {
        TaskMark {
            summary_revision: task.summary.as_ref().and_then(HeldSummary::revision),
            action: self.effective_action(task).0,
        }
    }

    /// The task's entry when `knowledge` says its answer is known and held; else the answer
    /// `removed` gives a removed task, or `None` with the input awaited.
    fn known_task<T>(
        &self,
        task_id: &str,
        knowledge: fn(TaskInputs) -> Knowledge,
        removed: T,
    ) -> Result<&TaskEntry<P>, (Option<T>, Reason)> {
        let task = self.tasks.get(task_id);
        match (knowledge(self.task_inputs_of(task_id, task)), task) {
            (Knowledge::Known, Some(task)) => Ok(task),
            (Knowledge::Awaiting(input), _) => Err((None, Reason::Awaiting(input))),
            _ => Err((Some(removed), Reason::TaskRemoved)),
        }
    }

    /// Which session to open after the user deleted `deleted` while `open` was open (SPEC §13,
    /// [`open_after_delete`]): the first remaining session of the task's list (the server lists
    /// newest first); `None` while the task's session list is not known.
    pub fn session_after_delete<'s>(
        &'s self,
        task_id: &str,
        open: Option<&'s str>,
        deleted: &str,
    ) -> Option<Option<&'s str>> {
        let list = self.tasks.get(task_id)?.sessions.as_ref()?;
        Some(open_after_delete(open, deleted, list.iter().map(|s| &**s)))
    }

    /// The task's effective pending action (see [`Self::effective_action`]); `None` while
    /// unknown (SPEC §11).
    pub fn task_pending_action(&self, task_id: &str) -> (Option<Option<PendingAction>>, Reason) {
        match self.known_task(task_id, knowledge::task_action, None) {
            Ok(task) => {
                let (action, why) = self.effective_action(task);
                (Some(action), why)
            }
            Err(answer) => answer,
        }
    }

    /// The held status summary, the caller's own object: `Some(None)` when none is held, `None`
    /// while unknown.
    pub fn task_status_summary(&self, task_id: &str) -> (Option<Option<&P>>, Reason) {
        match self.known_task(task_id, knowledge::task_action, None) {
            Ok(task) => match &task.summary {
                Some(summary) => (Some(Some(&summary.payload)), Reason::StatusSummaryHeld),
                None => (Some(None), Reason::NoStatusSummary),
            },
            Err(answer) => answer,
        }
    }

    /// The remembered session, unless the store knows it belongs to another task (SPEC §6: the
    /// preferred session counts only when it is not known to belong to another task).
    pub(super) fn eligible_preferred<'p>(
        &self,
        task_id: &str,
        preferred: Option<&'p str>,
    ) -> Option<&'p str> {
        preferred.filter(|p| {
            !self.is_removed_session(p)
                && self
                    .sessions
                    .get(*p)
                    .and_then(|s| s.task_id.as_deref())
                    .is_none_or(|t| t == task_id)
        })
    }

    /// The session to open for a task (SPEC §6): `Some(None)` for task-only navigation, `None`
    /// while unknown (SPEC §11: the task's action and its session list not both known).
    pub fn pending_owner<'s>(
        &'s self,
        task_id: &str,
        preferred: Option<&'s str>,
    ) -> (Option<Option<&'s str>>, Reason) {
        let task = match self.known_task(task_id, knowledge::owner, None) {
            Ok(task) => task,
            Err(answer) => return answer,
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
        (Some(owner), Reason::Owner(why))
    }
}
