//! Introspection: the state digest (with its small FNV hasher), message counts and heap bytes,
//! and the held projection and state of a session.

use std::hash::{BuildHasher, Hash, Hasher};

use super::ProjectionStore;
use crate::rules::model::{PendingAction, Revision, SessionState};

/// FNV-1a: a deliberately small hasher for [`ProjectionStore::digest`] (tests only; keeps the
/// wasm small, where an inlined fast hasher per field cost ~10 KB).
#[derive(Clone, Copy, Default)]
struct Fnv;

struct FnvState(u64);

impl Hasher for FnvState {
    #[inline(never)]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl BuildHasher for Fnv {
    type Hasher = FnvState;
    fn build_hasher(&self) -> FnvState {
        FnvState(0xcbf2_9ce4_8422_2325)
    }
}

impl<P: Clone> ProjectionStore<P> {
    /// A digest of the whole decision-relevant state (tests compare it before and after a
    /// rejected event). Iteration order does not matter.
    pub fn digest(&self) -> u64 {
        // Entries combine by wrapping addition, so iteration order does not matter.
        let hasher = Fnv;
        let sessions: u64 = self
            .sessions
            .iter()
            .map(|(id, s)| {
                let mut h = hasher.build_hasher();
                id.hash(&mut h);
                s.task_id.hash(&mut h);
                s.listed.hash(&mut h);
                s.state.hash(&mut h);
                s.state_clock.hash(&mut h);
                s.is_primary.hash(&mut h);
                s.primary_clock.hash(&mut h);
                s.projection.action.hash(&mut h);
                s.projection.revision.hash(&mut h);
                // What has arrived (SPEC §11: the known/unknown state is decision state).
                s.paged.hash(&mut h);
                if let Some(turns) = &s.turns {
                    for t in turns {
                        t.id.hash(&mut h);
                        t.completed.hash(&mut h);
                        t.started_at.hash(&mut h);
                        t.created_at.hash(&mut h);
                        t.updated_at.hash(&mut h);
                        t.flags.hash(&mut h);
                    }
                }
                for t in &s.early_turns {
                    t.id.hash(&mut h);
                    t.updated_at.hash(&mut h);
                }
                s.messages
                    .tombstones()
                    .map(|tombstone| hasher.hash_one(tombstone))
                    .fold(0, u64::wrapping_add)
                    .hash(&mut h);
                for row in s.messages.rows() {
                    row.id_str().hash(&mut h);
                    row.created().hash(&mut h);
                    row.updated().hash(&mut h);
                    row.turn_id_str().hash(&mut h);
                    row.row.kind.hash(&mut h);
                    row.row.status.hash(&mut h);
                    row.pending_id_str().hash(&mut h);
                }
                h.finish()
            })
            .fold(0, u64::wrapping_add);
        let tasks: u64 = self
            .tasks
            .iter()
            .map(|(id, t)| {
                let mut h = hasher.build_hasher();
                id.hash(&mut h);
                t.known.hash(&mut h);
                t.summary
                    .as_ref()
                    .map(|s| (s.summary.revision, s.summary.pending_action))
                    .hash(&mut h);
                t.task_pending_action.hash(&mut h);
                t.sessions.hash(&mut h);
                h.finish()
            })
            .fold(0, u64::wrapping_add);
        let removed = |ids: &mut dyn Iterator<Item = &str>| {
            ids.map(|id| hasher.hash_one(id)).fold(0, u64::wrapping_add)
        };
        let mut h = hasher.build_hasher();
        sessions.hash(&mut h);
        tasks.hash(&mut h);
        removed(&mut self.removed_tasks.iter().map(|(id, _)| id)).hash(&mut h);
        removed(&mut self.removed_sessions.iter().map(|(id, _)| id)).hash(&mut h);
        h.finish()
    }

    /// How many messages the store holds.
    pub fn message_count(&self) -> usize {
        self.sessions.values().map(|s| s.messages.len()).sum()
    }

    /// Approximate heap bytes held by message indices.
    pub fn message_heap_bytes(&self) -> usize {
        self.sessions
            .values()
            .map(|s| s.messages.heap_bytes())
            .fold(0, usize::saturating_add)
    }

    /// The held projection of a session (tests, debugging).
    pub fn session_projection(
        &self,
        session_id: &str,
    ) -> Option<(Option<Option<PendingAction>>, Option<&Revision>)> {
        self.sessions
            .get(session_id)
            .map(|s| (s.projection.action, s.projection.revision.as_ref()))
    }

    /// A session's pending action as the per-task rule and the owner rule read it: its held
    /// projection, or its rows while the user's settled answer is newer (SPEC §13).
    pub fn session_owner_action(&self, session_id: &str) -> Option<PendingAction> {
        use crate::rules::model::SessionRecord;
        self.sessions
            .get_key_value(session_id)
            .and_then(|(id, entry)| super::session::SessionRef { id, entry }.action())
    }

    /// The known state of a session.
    pub fn session_state(&self, session_id: &str) -> Option<SessionState> {
        self.sessions.get(session_id).and_then(|s| s.state)
    }

    /// The ids of the sessions held (in no particular order): what a trace recorder asks the
    /// answers of (`crate::trace`).
    pub fn session_ids(&self) -> impl Iterator<Item = &str> {
        self.sessions.keys().map(|k| &**k)
    }

    /// The sessions held with the task each belongs to (`None`: not known yet), in no particular
    /// order: what the devtools panel lists (`js/devtools-dom.js`, through `__held`).
    pub fn session_tasks(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.sessions
            .iter()
            .map(|(id, entry)| (&**id, entry.task_id.as_deref()))
    }

    /// The ids of the tasks held (in no particular order).
    pub fn task_ids(&self) -> impl Iterator<Item = &str> {
        self.tasks.keys().map(|k| &**k)
    }

    /// The revision of a task's held status summary: `None` when none is held, `Some(None)` for
    /// a summary without one.
    pub fn task_summary_revision(&self, task_id: &str) -> Option<Option<u64>> {
        self.tasks
            .get(task_id)
            .and_then(|t| t.summary.as_ref())
            .map(|s| s.summary.revision)
    }
}
