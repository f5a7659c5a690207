//! The reading side of snapshots: [`ProjectionStore::hydrate`], which builds a store from a
//! decoded snapshot, and the parsing of a rejection's input and reason that the decoder
//! (`wire::snapshot`) uses.

use std::sync::Arc;

use super::SnapshotInput;
use crate::hash::IdIndex;
use crate::rules::action::Stale;
use crate::store::rejections::Input;
use crate::store::tasks::{HeldSummary, TaskEntry};
use crate::store::{MessageParts, ProjectionStore, Reason, SessionId};

impl<P: Clone> ProjectionStore<P> {
    /// A store holding exactly what `snapshot` describes; `restored`: its answers are marked as
    /// restored until the stream's first hello or a task snapshot ([`Self::restored`]).
    pub fn hydrate(snapshot: SnapshotInput<P>, restored: bool) -> Self {
        let mut store = Self::new();
        // Every entry starts at a version above 0 (0 means "no entry").
        let version = store.bump();
        store.server_epoch = snapshot.epoch.map(Box::from);
        store.position = snapshot.position.map(|(s, o)| (Box::from(s), o));
        store.restored = restored;
        for id in snapshot.removed_tasks {
            store.removed_tasks.insert(&id, None);
        }
        for id in snapshot.removed_sessions {
            store.removed_sessions.insert(&id, None);
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
        for s in snapshot.sessions {
            // Filled in place, through the table's one entry path (the ids are distinct: the
            // decoder checked).
            let entry = store.session_mut(&s.id);
            entry.task_id = s.task.as_deref().map(&mut task_id);
            entry.listed = s.listed;
            entry.state = s.state;
            entry.state_clock = s.state_at;
            entry.is_primary = s.primary;
            entry.primary_clock = s.primary_at;
            entry.projection = s.projection;
            entry.early_turns = s.early;
            entry.paged = s.paged;
            entry.settled = s.settled;
            entry.version = version;
            entry.discovery = version;
            if let Some(turns) = s.turns {
                entry.set_turns(turns);
            }
            for message in &s.messages {
                entry.messages.upsert(&MessageParts::from(message));
            }
            for (message, revision) in &s.deleted {
                entry.messages.bury(message, revision.as_ref());
            }
        }
        for t in snapshot.tasks {
            let sessions = t.sessions.map(|list| {
                list.into_iter()
                    .map(|id| match store.sessions.get_key_value(id.as_str()) {
                        Some((key, _)) => key.clone(),
                        None => SessionId::from(id),
                    })
                    .collect()
            });
            let entry = TaskEntry {
                known: t.known,
                summary: t
                    .summary
                    .map(|(summary, payload)| HeldSummary { summary, payload }),
                task_pending_action: t.legacy,
                sessions,
                version,
            };
            *store.tasks.entry(Box::from(t.id.as_str())).or_default() = entry;
        }
        // Decoded (and so validated) by every build; kept where the log is (`development`).
        #[cfg(feature = "development")]
        for r in snapshot.rejected {
            store.rejected.push(r);
        }
        store.removals = version;
        store.clear_changes();
        store
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
