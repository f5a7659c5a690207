//! Snapshots of the store (SPEC §12): [`ProjectionStore::dehydrate`] writes what the store holds
//! for some tasks and sessions (the rows the rules read, revisions and clocks, tombstones and
//! removals, the stream's epoch and position, the recent rejections) with its answers, as JSON;
//! [`ProjectionStore::hydrate`] builds a store from a decoded snapshot ([`SnapshotInput`], from
//! `wire::snapshot`), whose every answer, explanation and digest equal the source's. The format
//! is docs/snapshot-format.md.
//!
//! Only the state moves: a hydrated store has no fetch in flight, no selection and no recorded
//! changes (none of them are answers; a fetch token of the source is unknown to it).
//!
//! `write` holds the writing side (`dehydrate` and the JSON it writes), `read` the building
//! side (`hydrate`, and the parsing of a rejection's input and reason the decoder uses); this
//! module, what both share: the decoded snapshot's types, the scope, and the codes a snapshot
//! writes kinds, statuses, states and turn flags as.
//!
//! [`ProjectionStore::dehydrate`]: super::ProjectionStore::dehydrate
//! [`ProjectionStore::hydrate`]: super::ProjectionStore::hydrate

mod read;
mod write;

use super::rejections::Rejection;
use crate::rules::model::{
    Message, MessageKind, PendingAction, RequestStatus, Revision, SessionState, StatusSummary,
    Turn, TurnFlags,
};
use crate::rules::revision::PendingProjection;
use crate::rules::time::Timestamp;

/// The `format` of every snapshot.
pub const FORMAT: &str = "task-projection/snapshot";
/// The format version this build writes and reads.
pub const VERSION: u64 = 1;

/// Turn flags as the snapshot writes them: a bit mask.
pub const LIFECYCLE_ONLY: u64 = 1;
pub const DISPATCH_PENDING: u64 = 2;
pub const DISPATCH_ATTEMPTED: u64 = 4;

/// A decoded snapshot (`P`: the caller's summary objects).
#[derive(Clone, Debug, Default)]
pub struct SnapshotInput<P> {
    pub epoch: Option<String>,
    pub position: Option<(String, u64)>,
    pub tasks: Vec<TaskSnapshot<P>>,
    pub sessions: Vec<SessionSnapshot>,
    pub removed_tasks: Vec<String>,
    pub removed_sessions: Vec<String>,
    pub rejected: Vec<Rejection>,
}

/// One task of a snapshot.
#[derive(Clone, Debug)]
pub struct TaskSnapshot<P> {
    pub id: String,
    pub known: bool,
    pub summary: Option<(StatusSummary, P)>,
    pub legacy: Option<PendingAction>,
    pub sessions: Option<Vec<String>>,
}

/// One session of a snapshot.
#[derive(Clone, Debug, Default)]
pub struct SessionSnapshot {
    pub id: String,
    pub task: Option<String>,
    pub listed: bool,
    pub state: Option<SessionState>,
    pub state_at: Option<Timestamp>,
    pub primary: bool,
    pub primary_at: Option<Timestamp>,
    pub projection: PendingProjection,
    pub turns: Option<Vec<Turn>>,
    pub early: Vec<Turn>,
    pub messages: Vec<Message>,
    /// Deleted message ids with the delete's revision, oldest first.
    pub deleted: Vec<(String, Option<Revision>)>,
    pub paged: bool,
    /// The bundles the user's replies settled (SPEC §13), oldest first.
    pub settled: Vec<super::Settled>,
}

/// Which part of the store a snapshot holds: everything, or the named tasks (with their
/// sessions) and sessions.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scope<'a> {
    pub tasks: Option<&'a [String]>,
    pub sessions: Option<&'a [String]>,
}

impl Scope<'_> {
    fn everything(&self) -> bool {
        self.tasks.is_none() && self.sessions.is_none()
    }
    fn has_task(&self, id: &str) -> bool {
        self.everything() || self.tasks.is_some_and(|t| t.iter().any(|t| t == id))
    }
    fn names_session(&self, id: &str) -> bool {
        self.sessions.is_some_and(|s| s.iter().any(|s| s == id))
    }
}

/// A message kind as a snapshot writes it (an integer code).
pub const fn kind_code(kind: MessageKind) -> u8 {
    match kind {
        MessageKind::Other => 0,
        MessageKind::ClarificationRequest => 1,
        MessageKind::PermissionRequest => 2,
    }
}

/// The message kind of a code ([`kind_code`]).
pub const fn kind_of_code(code: u64) -> Option<MessageKind> {
    Some(match code {
        0 => MessageKind::Other,
        1 => MessageKind::ClarificationRequest,
        2 => MessageKind::PermissionRequest,
        _ => return None,
    })
}

/// The request statuses in the order of their codes.
const STATUSES: [RequestStatus; 7] = [
    RequestStatus::Pending,
    RequestStatus::Answered,
    RequestStatus::Approved,
    RequestStatus::Rejected,
    RequestStatus::Expired,
    RequestStatus::Cancelled,
    RequestStatus::Other,
];

/// A request status as a snapshot writes it (an integer code).
pub fn status_code(status: RequestStatus) -> usize {
    STATUSES.iter().position(|s| *s == status).unwrap_or(0)
}

/// The request status of a code ([`status_code`]).
pub fn status_of_code(code: u64) -> Option<RequestStatus> {
    STATUSES.get(usize::try_from(code).ok()?).copied()
}

/// The spelling of a session state (`OTHER` for one this version does not know, which reads
/// back as such).
pub const fn state_str(state: SessionState) -> &'static str {
    match state.as_wire() {
        Some(text) => text,
        None => "OTHER",
    }
}

/// The flags of a turn from the snapshot's bit mask.
pub fn turn_flags(bits: u64) -> TurnFlags {
    TurnFlags {
        lifecycle_only: bits & LIFECYCLE_ONLY != 0,
        prompt_dispatch_pending: bits & DISPATCH_PENDING != 0,
        prompt_dispatch_attempted: bits & DISPATCH_ATTEMPTED != 0,
    }
}
