//! The log of recent inputs the store rejected ([`Rejection`]): what `explain` and
//! `explainOwner` list, and what a development build's snapshot carries. Not decision state (the
//! digest leaves it out); the production build (no `development` feature) records nothing.

use std::collections::VecDeque;

use super::{MessageEventKind, ProjectionStore, Reason};
use crate::rules::model::Revision;
use crate::rules::revision::{can_replace, ReplaceReason};

/// How many rejected inputs the store remembers (store-wide; an explanation lists its own).
#[cfg_attr(not(feature = "development"), allow(dead_code))] // the production build records none
const REJECTIONS: usize = 64;

/// The kind of input a [`Rejection`] was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    SessionList,
    SessionEvent,
    Message(MessageEventKind),
    StatusSummary,
    /// A respond's reply (SPEC §13).
    RespondReply,
    /// A snapshot merged into the state held (SPEC §12).
    Snapshot,
}

impl Input {
    pub const fn as_str(self) -> &'static str {
        match self {
            Input::SessionList => "session_list",
            Input::SessionEvent => "session.updated",
            Input::Message(MessageEventKind::Added) => "session.message.added",
            Input::Message(MessageEventKind::Updated) => "session.message.updated",
            Input::Message(MessageEventKind::Deleted) => "session.message.deleted",
            Input::StatusSummary => "task.status_summary.updated",
            Input::RespondReply => "respond_reply",
            Input::Snapshot => "snapshot",
        }
    }
}

/// A revision as a rejection carries it: a pending-action revision or a summary's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rev {
    Pending(Revision),
    Summary(u64),
}

/// An input the store did not take (wholly or, for a session event whose state applied, its
/// projection): what it was, why, and the revision it carried beside the one held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    pub input: Input,
    pub reason: Reason,
    pub task_id: Option<Box<str>>,
    pub session_id: Option<Box<str>>,
    pub message_id: Option<Box<str>>,
    pub revision: Option<Rev>,
    pub held: Option<Rev>,
}

impl Rejection {
    /// The finer reason of a revision comparison (older epoch, older sequence, malformed epoch).
    pub fn detail(&self) -> Option<ReplaceReason> {
        match (&self.revision, &self.held) {
            (Some(Rev::Pending(incoming)), held) => {
                let held = match held {
                    Some(Rev::Pending(h)) => Some(h),
                    _ => None,
                };
                Some(can_replace(held, Some(incoming)).1)
            }
            _ => None,
        }
    }
}

/// The bounded log of recent rejections (oldest first).
#[derive(Clone, Debug, Default)]
pub(super) struct Rejections(VecDeque<Rejection>);

impl Rejections {
    #[cfg_attr(not(feature = "development"), allow(dead_code))] // the production build records none
    pub(super) fn push(&mut self, rejection: Rejection) {
        if self.0.len() >= REJECTIONS {
            self.0.pop_front();
        }
        self.0.push_back(rejection);
    }

    pub(super) fn clear(&mut self) {
        self.0.clear();
    }

    /// Every rejection, oldest first (snapshots).
    pub(super) fn oldest_first(&self) -> impl Iterator<Item = &Rejection> + '_ {
        self.0.iter()
    }

    /// The rejections `keep` selects, newest first.
    pub(super) fn select(&self, keep: impl Fn(&Rejection) -> bool) -> Vec<&Rejection> {
        self.0.iter().rev().filter(|r| keep(r)).collect()
    }
}

/// The reasons an event reason counts as a rejection.
pub(super) const fn is_rejection(reason: Reason) -> bool {
    matches!(
        reason,
        Reason::OlderRevisionRejected
            | Reason::OlderUpdateCarriesNoProjection
            | Reason::OlderStateIgnored
            | Reason::DeletedMessageStaysDeleted
            | Reason::TaskMismatchRejected
            | Reason::TaskRemoved
    )
}

/// A rejected input as its apply call sees it ([`ProjectionStore::note_rejection`] copies it).
#[cfg_attr(not(feature = "development"), allow(dead_code))] // the production build records none
pub(super) struct Noted<'a> {
    pub(super) input: Input,
    pub(super) reason: Reason,
    pub(super) task_id: Option<&'a str>,
    pub(super) session_id: Option<&'a str>,
    pub(super) message_id: Option<&'a str>,
    /// A pending-action revision (a summary's is `summary`).
    pub(super) revision: Option<&'a Revision>,
    pub(super) summary: Option<u64>,
}

impl<P: Clone> ProjectionStore<P> {
    /// Records a rejected input (see [`Rejections`]) with the revision held now: a rejected
    /// input left it as it was. Out of line: rejections are rare, and the apply paths stay small.
    /// Without the `development` feature (the package's production build) nothing is recorded:
    /// the log only serves [`Self::explain`] and the snapshot's copy of it.
    #[cfg(not(feature = "development"))]
    #[inline(always)]
    pub(super) fn note_rejection(&mut self, _noted: Noted<'_>) {}

    #[cfg(feature = "development")]
    #[inline(never)]
    pub(super) fn note_rejection(&mut self, noted: Noted<'_>) {
        let (revision, held) = if noted.input == Input::StatusSummary {
            let held = noted
                .task_id
                .and_then(|t| self.tasks.get(t))
                .and_then(|t| t.summary.as_ref())
                .and_then(|s| s.revision());
            (noted.summary.map(Rev::Summary), held.map(Rev::Summary))
        } else {
            let held = noted
                .session_id
                .and_then(|s| self.sessions.get(s))
                .and_then(|s| s.projection.revision.clone());
            (
                noted.revision.cloned().map(Rev::Pending),
                held.map(Rev::Pending),
            )
        };
        self.rejected.push(Rejection {
            input: noted.input,
            reason: noted.reason,
            task_id: noted.task_id.map(Box::from),
            session_id: noted.session_id.map(Box::from),
            message_id: noted.message_id.map(Box::from),
            revision,
            held,
        });
    }

    /// Forgets the recorded rejections.
    pub fn clear_rejections(&mut self) {
        self.rejected.clear();
    }
}
