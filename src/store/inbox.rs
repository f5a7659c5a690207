//! The workspace's "needs you" inbox in the store (SPEC §14): the page held (placed by its stream
//! position), the boot seed, a failed read, the sessions that moved since the page, and the
//! answer. Every decision is a [`crate::rules::workspace`] call; this module holds the state.
//!
//! One workspace at a time: a page, seed or failure of another workspace replaces what is held.
//! Not part of a snapshot: a hydrated store's inbox is unknown until a page is read.

use crate::rules::model::PendingAction;
use crate::rules::time::Timestamp;
use crate::rules::workspace::{self, Live, Source, State};

use super::{ProjectionStore, Reason};

/// One row of an inbox page: what the store reads of it (the caller keeps its copy of the row
/// itself, by the row's place in the page).
#[derive(Clone, Debug)]
pub struct InboxRow {
    pub pending_id: Box<str>,
    pub session_id: Box<str>,
    pub task_id: Box<str>,
    pub created_at: Timestamp,
}

/// An inbox page (`GET /api/v1/clarification-inbox`), decoded.
#[derive(Clone, Debug)]
pub struct InboxPage {
    pub workspace: Box<str>,
    /// Where it was read in the server's event stream (`None`: unknown, before every event).
    pub at: Option<(Box<str>, u64)>,
    /// In the server's order.
    pub rows: Vec<InboxRow>,
    /// More rows follow (`next_cursor` present).
    pub truncated: bool,
    pub hidden_count: u64,
    pub next_snooze_expiry: Option<Timestamp>,
}

/// The badge's boot seed (`GET /api/v1/clarification-inbox/boot`): a count, no rows, no place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InboxSeed {
    pub count: u64,
    pub has_more: bool,
}

#[derive(Clone, Debug)]
pub(super) struct Inbox {
    workspace: Box<str>,
    page: Option<InboxPage>,
    /// The last read failed after the page held (or with none).
    failed: bool,
    /// The seed, with the number of frames the store had taken when it came: it holds until the
    /// next frame.
    seed: Option<(InboxSeed, u64)>,
}

impl Inbox {
    /// The inbox of `workspace` before any page, seed or failure.
    fn empty(workspace: &str) -> Self {
        Inbox {
            workspace: workspace.into(),
            page: None,
            failed: false,
            seed: None,
        }
    }

    /// Where the page held was read: `None` when no page is held, `Some(None)` for a page of no
    /// known place.
    fn held_place(&self) -> Option<Option<(&str, u64)>> {
        self.page
            .as_ref()
            .map(|p| p.at.as_ref().map(|(s, o)| (&**s, *o)))
    }
}

/// One row of the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct AnswerRow<'a> {
    pub pending_id: &'a str,
    pub session_id: &'a str,
    pub task_id: Option<&'a str>,
    pub created_at: Timestamp,
    /// The page's row (its index in the page); `None` for a bundle the store found itself (no
    /// page names it yet).
    pub row: Option<usize>,
}

/// The inbox of a workspace (`inbox(workspaceId)`): the rows and their count are one list.
#[derive(Clone, Debug, PartialEq)]
pub struct InboxAnswer<'a> {
    pub state: State,
    /// The rows known, in the inbox order.
    pub rows: Vec<AnswerRow<'a>>,
    /// More rows follow the page's last.
    pub more: bool,
    pub hidden_count: u64,
    pub next_snooze_expiry: Option<&'a Timestamp>,
    /// The boot seed, while no page is held and no frame came after it.
    pub seed: Option<&'a InboxSeed>,
}

impl<P: Clone> ProjectionStore<P> {
    /// The inbox held for `workspace`, made (empty) when another one, or none, is held.
    fn inbox_of(&mut self, workspace: &str) -> &mut Inbox {
        let inbox = self
            .inbox
            .get_or_insert_with(|| Box::new(Inbox::empty(workspace)));
        if &*inbox.workspace != workspace {
            **inbox = Inbox::empty(workspace);
        }
        inbox
    }

    /// The page's offset as the sessions' offsets count it: `None` when it is of another stream
    /// than the store's (or of no known place).
    fn page_offset(&self, page: &InboxPage) -> Option<u64> {
        match (&page.at, &self.position) {
            (Some((ps, po)), Some((ss, _))) if ps == ss => Some(*po),
            _ => None,
        }
    }

    /// An inbox page arrived: held when it is a later read than the one held
    /// ([`workspace::page_replaces`]), else ignored (`inbox_page_older`).
    pub fn apply_inbox_page(&mut self, page: InboxPage) -> Reason {
        let live = self.position.as_ref().map(|(s, _)| s.clone());
        let inbox = self.inbox_of(&page.workspace);
        let held = inbox.held_place();
        let incoming = page.at.as_ref().map(|(s, o)| (&**s, *o));
        if let Some(held) = held {
            if !workspace::page_replaces(held, incoming, live.as_deref()) {
                return Reason::InboxPageOlder;
            }
        }
        let inbox = self.inbox_of(&page.workspace);
        inbox.page = Some(page);
        inbox.failed = false;
        self.inbox_changed()
    }

    /// The badge's boot seed for `workspace`: held until a page or the next frame.
    pub fn apply_inbox_seed(&mut self, workspace: &str, seed: InboxSeed) -> Reason {
        let frames = self.frames;
        let inbox = self.inbox_of(workspace);
        inbox.seed = Some((seed, frames));
        self.inbox_changed()
    }

    /// A read of `workspace`'s inbox that began at `at` failed: the answer is an error until a
    /// page comes, unless the page held was read at or after that read began
    /// ([`workspace::failure_counts`]).
    pub fn inbox_read_failed(&mut self, workspace: &str, at: Option<(&str, u64)>) -> Reason {
        let inbox = self.inbox_of(workspace);
        let held = inbox.held_place();
        if !workspace::failure_counts(held, at) {
            return Reason::Unchanged;
        }
        inbox.failed = true;
        self.inbox_changed()
    }

    /// The version moves and the change is recorded (for listeners: `take_changes`).
    fn inbox_changed(&mut self) -> Reason {
        self.bump();
        self.changed_inbox = self.track_changes;
        Reason::Applied
    }

    /// What the store itself holds of a session's live bundle, with the bundle's `created_at`.
    fn live_of(&self, session_id: &str) -> (Live<'_>, Timestamp) {
        if self.removed_sessions.contains(session_id) {
            return (Live::Removed, Timestamp::default());
        }
        match self.live_bundle(session_id) {
            Some(Some((p, at))) => (Live::Bundle(p), at),
            Some(None) => (Live::None, Timestamp::default()),
            None => match self.session_pending_action(session_id).0 {
                Some(Some(PendingAction::Clarification)) => (Live::Asking, Timestamp::default()),
                Some(_) => (Live::None, Timestamp::default()),
                None => (Live::Unknown, Timestamp::default()),
            },
        }
    }

    fn settled(&self, session_id: &str, pending_id: &str) -> bool {
        self.settled_bundles(session_id)
            .iter()
            .any(|s| &*s.pending_id == pending_id)
    }

    /// The inbox of `workspace` (SPEC §14) at the caller's clock `now` (for snoozes that end).
    #[inline(never)]
    pub fn inbox(&self, workspace: &str, now: Option<&Timestamp>) -> InboxAnswer<'_> {
        let inbox = self.inbox.as_deref().filter(|i| &*i.workspace == workspace);
        let page = inbox.and_then(|i| i.page.as_ref());
        let mut answer = InboxAnswer {
            state: State::NotRead,
            rows: Vec::new(),
            more: page.is_some_and(|p| p.truncated),
            hidden_count: page.map_or(0, |p| p.hidden_count),
            next_snooze_expiry: page.and_then(|p| p.next_snooze_expiry.as_ref()),
            seed: None,
        };
        let (mut unknown, mut gone) = (false, false);
        if let Some(page) = page {
            let offset = self.page_offset(page);
            // The page's rows, then the sessions that moved and have none (a task's sessions
            // only: the store's tasks are the workspace's).
            let extra = self.sessions.iter().filter_map(|(id, e)| {
                (workspace::moved(e.offset, offset)
                    && e.task_id.is_some()
                    && !page.rows.iter().any(|r| *r.session_id == **id))
                .then_some(id)
            });
            let sessions = page
                .rows
                .iter()
                .enumerate()
                .map(|(i, r)| (&*r.session_id, Some((i, r))))
                .chain(extra.map(|id| (&**id, None)));
            for (session, page_row) in sessions {
                let (live, at) = self.live_of(session);
                let entry = self.sessions.get_key_value(session);
                let moved = entry.is_some_and(|(_, e)| workspace::moved(e.offset, offset));
                let source = workspace::session_row(
                    page_row.map(|(_, r)| &*r.pending_id),
                    moved,
                    live,
                    |p| self.settled(session, p),
                    page.hidden_count == 0,
                );
                match (source, page_row, live, entry) {
                    (Source::Page, Some((i, r)), _, _) => answer.rows.push(AnswerRow {
                        pending_id: &r.pending_id,
                        session_id: &r.session_id,
                        task_id: Some(&r.task_id),
                        created_at: r.created_at.clone(),
                        row: Some(i),
                    }),
                    (Source::Store, _, Live::Bundle(p), Some((id, e))) => {
                        gone |= page_row.is_some();
                        answer.rows.push(AnswerRow {
                            pending_id: p,
                            session_id: id,
                            task_id: e.task_id.as_deref(),
                            created_at: at,
                            row: None,
                        });
                    }
                    (Source::Unknown, ..) => unknown = true,
                    _ => gone |= page_row.is_some(),
                }
            }
            crate::sort::stable_sort_by(&mut answer.rows, |a, b| {
                workspace::order(&a.created_at, a.pending_id, &b.created_at, b.pending_id)
            });
        }
        answer.state = workspace::state(
            page.is_some(),
            inbox.is_some_and(|i| i.failed),
            unknown,
            gone && answer.more,
            answer.next_snooze_expiry,
            now,
        );
        if answer.state == State::Failed {
            answer.rows.clear();
            answer.more = false;
        }
        if page.is_none() {
            answer.seed = inbox
                .and_then(|i| i.seed.as_ref())
                .filter(|(_, frames)| *frames == self.frames)
                .map(|(seed, _)| seed);
        }
        answer
    }
}
