//! The user's actions in the store (SPEC §13): the attempts of responds, and the bundles their
//! replies settled. Every step is a [`crate::rules::action`] call; this module holds the state.

use crate::rules::action::{
    classify, may_start, reply_counts, session_action_source, settles_now, ActionSource, Outcome,
    Phase, Refusal, Stale, Start, Transport,
};
use crate::rules::model::Revision;

use super::{ProjectionStore, SessionId};

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
    fn attempt_of(&self, session_id: &str, pending_id: &str) -> Option<&Attempt> {
        self.attempts
            .iter()
            .rev()
            .find(|a| &*a.session == session_id && &*a.pending_id == pending_id)
    }

    /// The session's live bundle as discovery finds it (settled bundles hidden); `Err` while
    /// unknown.
    #[inline(never)]
    fn live_bundle(&self, session_id: &str) -> Result<Option<&str>, ()> {
        match self.pending_clarification(session_id) {
            (Some(bundle), _) => Ok(bundle.and_then(|b| b.pending_id)),
            (None, _) => Err(()),
        }
    }

    /// The user answers or skips bundle `pending_id` of a session (SPEC §13). A new attempt, or
    /// the one already in flight for the bundle (`fresh: false`: send nothing).
    #[inline(never)]
    pub fn respond_start(
        &mut self,
        session_id: &str,
        pending_id: &str,
    ) -> Result<Started, Refusal> {
        let held = self.attempt_of(session_id, pending_id);
        match may_start(
            self.live_bundle(session_id),
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
            let current = self.attempt_of(&a.session, &a.pending_id)?;
            Some((current.id, &a.phase))
        });
        if let Err(stale) = reply_counts(attempt, held) {
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
        let (session, pending_id) = (entry.session.clone(), entry.pending_id.clone());
        entry.phase = if outcome.settles() {
            Phase::Settled {
                outcome,
                position: position.clone(),
            }
        } else {
            Phase::Open(outcome)
        };
        let still_live = self.live_bundle(&session) == Ok(Some(&*pending_id));
        let applied = settles_now(outcome, still_live);
        if applied {
            if let Some(entry) = self.sessions.get_mut(&*session) {
                let settled = &mut entry.settled;
                settled.retain(|s| s.pending_id != pending_id);
                if settled.len() >= MAX_SETTLED {
                    settled.remove(0);
                }
                settled.push(Settled {
                    pending_id,
                    position,
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
        self.attempt_of(session_id, pending_id)
            .map(|a| AttemptState {
                attempt: a.id,
                phase: &a.phase,
            })
    }

    /// The bundles of a session the user's replies settled.
    pub fn settled_bundles(&self, session_id: &str) -> &[Settled] {
        self.sessions
            .get(session_id)
            .map_or(&[], |e| e.settled.as_slice())
    }

    /// Whether a session's settled bundles make its rows, not its held projection, decide its
    /// pending action ([`session_action_source`]).
    pub(super) fn rows_decide(entry: &super::session::SessionEntry) -> bool {
        entry.settled.iter().any(|s| {
            session_action_source(s.position.as_ref(), entry.projection.revision.as_ref())
                == ActionSource::Rows
        })
    }
}
