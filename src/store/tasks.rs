//! Tasks: `TaskEntry` (its summary, legacy action and session list), `HeldSummary`, and the
//! task inputs: summary events, `task.updated`, deletion, and REST snapshots merged against the
//! fetch token's `Captured` state (SPEC §7).

use super::hash::HashMap;
use super::rejections::{Input, Noted};
use super::{ProjectionStore, Reason, SessionId, TaskInput, MAX_FETCHES};
use crate::error::{WireError, WireErrorKind};
use crate::rules::model::{self, PendingAction, StatusSummary};
use crate::rules::order::applies_after_removal;
use crate::rules::summary::{
    is_newer_summary, merge_fetched_summary, FetchStart, FetchedSummary, FetchedTask,
};

#[derive(Clone, Debug)]
pub(super) struct HeldSummary<P> {
    pub(super) summary: StatusSummary,
    pub(super) payload: P,
}

impl<P> HeldSummary<P> {
    /// A decoded summary with the caller's object.
    fn held((summary, payload): (StatusSummary, P)) -> HeldSummary<P> {
        HeldSummary { summary, payload }
    }

    pub(super) fn revision(&self) -> Option<u64> {
        self.summary.revision
    }
}

#[derive(Clone, Debug)]
pub(super) struct TaskEntry<P> {
    /// The task itself was described (task.updated, a snapshot or a summary event), not only
    /// referenced by a session list.
    pub(super) known: bool,
    pub(super) summary: Option<HeldSummary<P>>,
    pub(super) task_pending_action: Option<PendingAction>,
    /// The task's session list (newest first), once loaded.
    pub(super) sessions: Option<Vec<SessionId>>,
    pub(super) version: u64,
}

impl<P> Default for TaskEntry<P> {
    fn default() -> Self {
        TaskEntry {
            known: false,
            summary: None,
            task_pending_action: None,
            sessions: None,
            version: 0,
        }
    }
}

impl<P> TaskEntry<P> {
    /// The task as the §4 rule reads it.
    pub(super) fn as_task(&self) -> model::Task {
        model::Task {
            status_summary: self.summary.as_ref().map(|s| s.summary),
            task_pending_action: self.task_pending_action,
            ..model::Task::default()
        }
    }
}

/// What a fetch token captured: each task present then, with its summary revision (in
/// `revisions`, at the place `places` holds for its id: a map of `u32`s, the type of the message
/// index's names map, so the wasm holds one instantiation of the table's code for both).
#[derive(Clone, Debug, Default)]
pub(super) struct Captured {
    places: HashMap<Box<str>, u32>,
    revisions: Vec<Option<u64>>,
}

impl Captured {
    /// What the fetch's start held of task `id`.
    fn start(&self, id: &str) -> FetchStart {
        let at = self.places.get(id);
        FetchStart {
            task_present: at.is_some(),
            revision: at
                .and_then(|at| self.revisions.get(usize::try_from(*at).ok()?))
                .copied()
                .flatten(),
        }
    }
}

impl<P: Clone> ProjectionStore<P> {
    /// Whether `task_id` was removed: every later-arriving input about it is older than the
    /// removal ([`applies_after_removal`]).
    pub(super) fn is_removed_task(&self, task_id: &str) -> bool {
        self.removed_tasks.contains(task_id) && !applies_after_removal()
    }

    /// Whether `session_id` belongs to a removed task (as far as the store remembers).
    pub(super) fn is_removed_session(&self, session_id: &str) -> bool {
        self.removed_sessions.contains(session_id) && !applies_after_removal()
    }

    /// Whether an input about `session_id` (tagged with `task_id`) arrived after the removal of
    /// the session's task. An input tagged with a removed task reveals that the session was the
    /// task's: it is removed too.
    pub(super) fn removed_input(&mut self, session_id: &str, task_id: Option<&str>) -> bool {
        if self.is_removed_session(session_id) {
            return true;
        }
        match task_id {
            Some(task_id) if self.is_removed_task(task_id) => {
                self.remove_session(session_id);
                true
            }
            _ => false,
        }
    }

    /// Drops a session of a removed task and remembers it as removed.
    pub(super) fn remove_session(&mut self, session_id: &str) {
        let newly = !self.removed_sessions.contains(session_id);
        self.removed_sessions.insert(session_id, None);
        if self.sessions.contains_key(session_id) {
            // Touched while the entry still names its task, so that task is marked changed too.
            self.touch_session(session_id);
            self.sessions.remove(session_id);
            self.changed_sessions.removed();
        } else if newly {
            // Not heard of before, removed now: its answers went from unknown to known (SPEC
            // §11).
            self.touch_session(session_id);
        }
        self.removals = self.version;
    }

    /// The session was deleted (SPEC §5: `session.deleted`, or the reply of the app's delete): a
    /// tombstone, as for a deleted message. It leaves its task's session list, its answers are
    /// known and clean, the owner rule never picks it, and later-arriving inputs about it
    /// (an older session list included) are dropped.
    pub fn delete_session(&mut self, session_id: &str) -> Reason {
        let known = self.sessions.contains_key(session_id);
        let newly = !self.removed_sessions.contains(session_id);
        let mut listed = Vec::new();
        for (task_id, task) in &mut self.tasks {
            if let Some(list) = task.sessions.as_mut() {
                let before = list.len();
                list.retain(|s| &**s != session_id);
                if list.len() != before {
                    listed.push(task_id.clone());
                }
            }
        }
        for task_id in listed {
            self.touch_task(&task_id);
        }
        self.remove_session(session_id);
        if known || newly {
            Reason::Applied
        } else {
            Reason::Unchanged
        }
    }

    /// WebSocket: `task.status_summary.updated`: replaces the held summary only when nothing is
    /// held or the incoming revision is strictly greater (SPEC §7).
    pub fn apply_status_summary_event(
        &mut self,
        task_id: &str,
        summary: Option<(StatusSummary, P)>,
    ) -> Reason {
        if self.is_removed_task(task_id) {
            return Reason::TaskRemoved;
        }
        let task = self.tasks.entry(Box::from(task_id)).or_default();
        // Becoming known can change the task's action (SPEC §4 reads the legacy field of a
        // known task): the task is touched even when no summary is taken.
        let newly_known = !std::mem::replace(&mut task.known, true);
        let held = task.summary.as_ref().map(HeldSummary::revision);
        let Some(incoming) = summary else {
            if newly_known {
                self.touch_task(task_id);
            }
            return Reason::Unchanged;
        };
        if !is_newer_summary(Some(incoming.0.revision), held) {
            if newly_known {
                self.touch_task(task_id);
            }
            self.note_rejection(Noted {
                input: Input::StatusSummary,
                reason: Reason::OlderRevisionRejected,
                task_id: Some(task_id),
                session_id: None,
                message_id: None,
                revision: None,
                summary: incoming.0.revision,
            });
            return Reason::OlderRevisionRejected;
        }
        task.summary = Some(HeldSummary::held(incoming));
        self.touch_task(task_id);
        Reason::Applied
    }

    fn apply_task_fields(task: &mut TaskEntry<P>, input: &TaskInput<P>) {
        task.known = true;
        if let Some(action) = input.task_pending_action {
            task.task_pending_action = action;
        }
    }

    /// WebSocket: `task.updated`. Without a `status_summary` key the held summary stays; with
    /// the key (even `null`) it is overwritten without a revision check (SPEC §7).
    pub fn apply_task_updated(&mut self, input: TaskInput<P>) -> Reason {
        if self.is_removed_task(&input.id) {
            return Reason::TaskRemoved;
        }
        let task = self.tasks.entry(Box::from(input.id.as_str())).or_default();
        Self::apply_task_fields(task, &input);
        if let Some(summary) = input.status_summary {
            task.summary = summary.map(HeldSummary::held);
        }
        self.touch_task(&input.id);
        Reason::Applied
    }

    /// The task (and its sessions) was deleted. Removal is final: the task and every session
    /// known to be its are remembered as removed, and later-arriving inputs about them are
    /// dropped ([`applies_after_removal`]).
    pub fn remove_task(&mut self, task_id: &str) -> Reason {
        let known = self.tasks.contains_key(task_id);
        let newly = !self.removed_tasks.contains(task_id);
        self.removed_tasks.insert(task_id, None);
        let task = self.tasks.remove(task_id);
        let mut gone: Vec<SessionId> = task.and_then(|t| t.sessions).unwrap_or_default();
        gone.extend(
            self.sessions
                .iter()
                .filter(|(_, s)| s.task_id.as_deref() == Some(task_id))
                .map(|(id, _)| id.clone()),
        );
        for session_id in gone {
            self.remove_session(&session_id);
        }
        if known || newly {
            // A task not heard of before is known now: removed (SPEC §11).
            self.touch_task(task_id);
        }
        self.removals = self.version;
        if known || newly {
            Reason::Applied
        } else {
            Reason::Unchanged
        }
    }

    /// Starts a REST task-list/boot fetch: the token captures every task's presence and summary
    /// revision now, which [`Self::apply_task_snapshot`] merges against.
    pub fn begin_task_fetch(&mut self) -> u64 {
        let token = self.next_fetch;
        self.next_fetch = self.next_fetch.wrapping_add(1);
        let mut captured = Captured::default();
        for (id, t) in self.tasks.iter() {
            // Below 2^32 tasks (a wasm32 memory holds far fewer).
            let Ok(at) = u32::try_from(captured.revisions.len()) else {
                break;
            };
            captured.places.insert(id.clone(), at);
            captured
                .revisions
                .push(t.summary.as_ref().and_then(HeldSummary::revision));
        }
        self.fetches.push_back((token, captured));
        while self.fetches.len() > MAX_FETCHES {
            self.fetches.pop_front();
        }
        token
    }

    /// REST: the tasks of a snapshot requested with `token` (SPEC §7 merge).
    pub fn apply_task_snapshot(
        &mut self,
        token: u64,
        tasks: Vec<TaskInput<P>>,
    ) -> Result<Reason, WireError> {
        let Some(at) = self.fetches.iter().position(|(t, _)| *t == token) else {
            return Err(WireError::from(WireErrorKind::InvalidValue {
                field: "token".into(),
                problem: "unknown or already used fetch token".into(),
            }));
        };
        let Some((_, captured)) = self.fetches.remove(at) else {
            return Ok(Reason::UnknownFetchToken);
        };
        // A refetch confirms or replaces restored state.
        self.confirm_restored();
        for input in tasks {
            let start = captured.start(&input.id);
            // Removed while the request was in flight (present at its start, gone now; or
            // remembered as removed): the snapshot is older than the removal.
            let gone = start.task_present && !self.tasks.contains_key(input.id.as_str());
            if (gone && !applies_after_removal()) || self.is_removed_task(&input.id) {
                continue;
            }
            let task = self.tasks.entry(Box::from(input.id.as_str())).or_default();
            Self::apply_task_fields(task, &input);
            let response_summary = input.status_summary.clone().flatten();
            let (decision, _) = merge_fetched_summary(
                task.summary.as_ref().map(HeldSummary::revision),
                start,
                FetchedTask {
                    summary: response_summary.as_ref().map(|(s, _)| s.revision),
                    invalidated: input.invalidated,
                },
            );
            match decision {
                FetchedSummary::KeepHeld => {}
                FetchedSummary::TakeResponse => {
                    task.summary = response_summary.map(HeldSummary::held);
                }
                FetchedSummary::Drop => task.summary = None,
            }
            self.touch_task(&input.id);
        }
        Ok(Reason::Applied)
    }
}
