//! The user's actions in the store (SPEC §13): the attempts of responds, and the bundles their
//! replies settled. Every step is a [`crate::rules::action`] call; this module holds the state.

use crate::rules::action::{
    classify, may_start, offered, permission_target, reply_counts, settles_now, Offered, Outcome,
    Phase, Refusal, Stale, Start, Transport,
};
use crate::rules::model::{MessageRecord, Revision, SessionState};

use super::rejections::{Input, Noted};
use super::{ProjectionStore, Reason, SessionId};

/// How many attempts the store remembers; the oldest is forgotten first (its late reply then
/// changes nothing: `unknown_attempt`).
const MAX_ATTEMPTS: usize = 64;

/// How many settled bundles a session holds; beyond it the oldest is forgotten (its rows are
/// long terminal by then in any real transcript).
const MAX_SETTLED: usize = 16;

/// One respond: the bundle it answers and where it stands.
#[derive(Clone, Debug)]
pub(super) struct Attempt {
    pub(super) id: u64,
    pub(super) session: SessionId,
    pub(super) pending_id: Box<str>,
    /// A permission's respond (approve, deny); else a clarification bundle's.
    pub(super) permission: bool,
    pub(super) phase: Phase,
}

/// A bundle a reply settled (SPEC §13): its rows count as answered until the data says so, or a
/// newer pending row of it lifts the settlement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settled {
    pub pending_id: Box<str>,
    /// The session's projection revision after the server handled the response, when the reply
    /// said it.
    pub position: Option<Revision>,
    /// The revision of the task's status summary held when the reply settled the bundle: a
    /// summary no newer than it gives way to the sessions
    /// ([`crate::rules::action::summary_predates`]).
    pub summary: Option<u64>,
}

/// What [`ProjectionStore::respond_start`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Started {
    /// The attempt's number: the reply names it.
    pub attempt: u64,
    /// `false` when an attempt for this bundle was already in flight: that one is returned,
    /// and no request is to be sent.
    pub fresh: bool,
}

/// What [`ProjectionStore::respond_reply`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replied {
    pub outcome: Outcome,
    /// Whether the reply changed what the store answers (a settlement or a reopened bundle).
    pub applied: bool,
    /// Why it did not, when it did not.
    pub stale: Option<Stale>,
}

/// Where a bundle's respond stands, for the app (`respondState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptState<'a> {
    pub attempt: u64,
    pub phase: &'a Phase,
}

impl<P: Clone> ProjectionStore<P> {
    /// The newest attempt for `pending_id` of a session (of that kind, when `permission` is
    /// given).
    fn attempt_of(
        &self,
        session_id: &str,
        pending_id: &str,
        permission: Option<bool>,
    ) -> Option<&Attempt> {
        self.attempts.iter().rev().find(|a| {
            &*a.session == session_id
                && &*a.pending_id == pending_id
                && permission.is_none_or(|p| p == a.permission)
        })
    }

    /// What a respond may target now: the session's live bundle as discovery finds it (settled
    /// bundles hidden), or for a permission its [`permission_target`]; `Err` while unknown or
    /// not answerable.
    #[inline(never)]
    fn live_target(&self, session_id: &str, permission: bool) -> Result<Option<&str>, Refusal> {
        if permission {
            return match self.pending_permission(session_id).0 {
                Some(blocked) => permission_target(blocked.map(|b| (b.pending_id, b.answerable))),
                None => Err(Refusal::Unknown),
            };
        }
        match self.pending_clarification(session_id) {
            (Some(bundle), _) => Ok(bundle.and_then(|b| b.pending_id)),
            (None, _) => Err(Refusal::Unknown),
        }
    }

    /// The user answers or skips bundle `pending_id` of a session (SPEC §13). A new attempt, or
    /// the one already in flight for the bundle (`fresh: false`: send nothing).
    pub fn respond_start(
        &mut self,
        session_id: &str,
        pending_id: &str,
    ) -> Result<Started, Refusal> {
        self.start(session_id, pending_id, false)
    }

    /// The user approves or denies permission `pending_id`, the one the session is blocked on
    /// (SPEC §13); as [`Self::respond_start`].
    pub fn permission_start(
        &mut self,
        session_id: &str,
        pending_id: &str,
    ) -> Result<Started, Refusal> {
        self.start(session_id, pending_id, true)
    }

    #[inline(never)]
    fn start(
        &mut self,
        session_id: &str,
        pending_id: &str,
        permission: bool,
    ) -> Result<Started, Refusal> {
        let held = self.attempt_of(session_id, pending_id, Some(permission));
        match may_start(
            self.live_target(session_id, permission),
            pending_id,
            held.map(|a| &a.phase),
        )? {
            Start::InFlight => Ok(Started {
                attempt: held.map_or(0, |a| a.id),
                fresh: false,
            }),
            Start::New => {
                let Some(session) = self
                    .sessions
                    .get_key_value(session_id)
                    .map(|(k, _)| k.clone())
                else {
                    return Err(Refusal::Unknown);
                };
                self.next_attempt = self.next_attempt.wrapping_add(1);
                let id = self.next_attempt;
                if self.attempts.len() >= MAX_ATTEMPTS {
                    self.attempts.remove(0);
                }
                self.attempts.push(Attempt {
                    id,
                    session,
                    pending_id: pending_id.into(),
                    permission,
                    phase: Phase::InFlight,
                });
                self.touch_session_with(session_id, false);
                Ok(Started {
                    attempt: id,
                    fresh: true,
                })
            }
        }
    }

    /// The reply to attempt `attempt` (SPEC §13): its outcome, and whether it settled the
    /// bundle. `position` is the session's projection revision after handling, when the reply
    /// carried it (apply that projection itself as a session event first).
    #[inline(never)]
    pub fn respond_reply(
        &mut self,
        attempt: u64,
        transport: Transport,
        position: Option<Revision>,
    ) -> Replied {
        let outcome = classify(transport);
        let index = self.attempts.iter().rposition(|a| a.id == attempt);
        let held = index.and_then(|i| self.attempts.get(i)).and_then(|a| {
            // The bundle's current attempt is the newest one for it.
            let current = self.attempt_of(&a.session, &a.pending_id, Some(a.permission))?;
            Some((current.id, &a.phase))
        });
        if let Err(stale) = reply_counts(attempt, held) {
            let about = index
                .and_then(|i| self.attempts.get(i))
                .map(|a| a.session.clone());
            let task = about
                .as_deref()
                .and_then(|s| self.sessions.get(s))
                .and_then(|e| e.task_id.clone());
            self.note_rejection(Noted {
                input: Input::RespondReply,
                reason: Reason::StaleReply(stale),
                task_id: task.as_deref(),
                session_id: about.as_deref(),
                message_id: None,
                revision: position.as_ref(),
                summary: None,
            });
            return Replied {
                outcome,
                applied: false,
                stale: Some(stale),
            };
        }
        let Some(entry) = index.and_then(|i| self.attempts.get_mut(i)) else {
            return Replied {
                outcome,
                applied: false,
                stale: Some(Stale::UnknownAttempt),
            };
        };
        let (session, pending_id, permission) = (
            entry.session.clone(),
            entry.pending_id.clone(),
            entry.permission,
        );
        entry.phase = if outcome.settles() {
            Phase::Settled {
                outcome,
                position: position.clone(),
            }
        } else {
            Phase::Open(outcome)
        };
        // Rows still pending in the data, whether or not discovery shows them now (an older
        // projection may hide the bundle for a while; it would show again).
        let still_pending = self
            .sessions
            .get(&*session)
            .is_some_and(|e| e.request_pending(&pending_id, permission));
        let applied = settles_now(outcome, still_pending);
        if applied {
            let summary = self
                .sessions
                .get(&*session)
                .and_then(|e| e.task_id.as_deref())
                .and_then(|t| self.tasks.get(t))
                .and_then(|t| t.summary.as_ref())
                .and_then(super::tasks::HeldSummary::revision);
            if let Some(entry) = self.sessions.get_mut(&*session) {
                let settled = &mut entry.settled;
                settled.retain(|s| s.pending_id != pending_id);
                if settled.len() >= MAX_SETTLED {
                    settled.remove(0);
                }
                settled.push(Settled {
                    pending_id,
                    position,
                    summary,
                });
            }
        }
        self.touch_session_with(&session, applied);
        Replied {
            outcome,
            applied,
            stale: None,
        }
    }

    /// Where the respond of a bundle stands: its newest attempt, `None` when none was started
    /// (or it was forgotten).
    pub fn respond_state(&self, session_id: &str, pending_id: &str) -> Option<AttemptState<'_>> {
        self.attempt_of(session_id, pending_id, None)
            .map(|a| AttemptState {
                attempt: a.id,
                phase: &a.phase,
            })
    }

    /// What the user may do in a session now (SPEC §13, [`offered`]): `None` while its live
    /// question or its state is not known. A bundle is detached when a member row says
    /// `agent_disconnected`.
    pub fn offered_actions(&self, session_id: &str) -> Option<Offered> {
        let entry = self.sessions.get(session_id)?;
        let state = entry.state?;
        let (bundle, _) = self.pending_clarification(session_id);
        let live = bundle?.map(|b| {
            let detached =
                entry.messages.discovery_candidates().iter().any(|r| {
                    r.pending_id_str() == b.pending_id && MessageRecord::flags(r).detached()
                });
            let in_flight = b.pending_id.is_some_and(|p| {
                matches!(
                    self.attempt_of(session_id, p, Some(false))
                        .map(|a| &a.phase),
                    Some(Phase::InFlight)
                )
            });
            (detached, in_flight)
        });
        Some(offered(
            state == SessionState::Running,
            live.map(|(detached, _)| detached),
            live.is_some_and(|(_, in_flight)| in_flight),
            !state.is_terminal(),
        ))
    }

    /// The bundles of a session the user's replies settled.
    pub fn settled_bundles(&self, session_id: &str) -> &[Settled] {
        self.sessions
            .get(session_id)
            .map_or(&[], |e| e.settled.as_slice())
    }
}
