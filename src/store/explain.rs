//! Explanations: why the store answers what it does about a session ([`SessionExplanation`]) or
//! a task's pending owner ([`OwnerExplanation`]), with the recent inputs it rejected
//! (`rejections`). Every "why" here is a rule's own answer ([`turn_standing`],
//! [`request_standing`], [`crate::rules::revision::can_replace`], the queries' reasons); this module only gathers them
//! and writes them as JSON for the binding.

use super::messages::RowView;
use super::queries::Discovery;
use super::rejections::{Rejection, Rev};
use super::session::{SessionEntry, SessionRef};
use super::{ProjectionStore, Reason};
use crate::json::Json;
use crate::rules::clarification::{request_standing, RequestStanding};
use crate::rules::knowledge::{self, Awaiting};
use crate::rules::model::{
    MessageKind, MessageRecord, PendingAction, Revision, SessionRecord, SessionState, TurnRecord,
};
use crate::rules::revision::ReplaceReason;
use crate::rules::turn::{turn_standing, CurrentTurn, TurnStanding};

/// How many turns and requests an explanation lists (the most relevant first).
const LINES: usize = 20;

/// One turn in a [`SessionExplanation`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnLine<'a> {
    pub id: &'a str,
    pub open: bool,
    pub standing: TurnStanding,
}

/// One pending clarification request in a [`SessionExplanation`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestLine<'a> {
    pub id: &'a str,
    pub turn_id: Option<&'a str>,
    pub pending_id: Option<&'a str>,
    pub standing: RequestStanding,
}

/// Why the store answers what it does about one session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionExplanation<'a> {
    pub session_id: &'a str,
    /// The store holds anything about the session.
    pub known: bool,
    /// The session belongs to a removed task: its answers are known and clean.
    pub removed: bool,
    /// The inputs the session's answers still wait for (SPEC §11), in the order a client loads
    /// them.
    pub missing: Vec<Awaiting>,
    pub task_id: Option<&'a str>,
    /// Present in its task's loaded session list.
    pub listed: bool,
    pub state: Option<SessionState>,
    pub current_turn: (CurrentTurn<&'a str>, Reason),
    /// How many turns are held (`None`: the turn history is not loaded).
    pub turn_count: Option<usize>,
    /// The current turn first, then the others last held first; at most [`LINES`].
    pub turns: Vec<TurnLine<'a>>,
    /// The session's pending action (`None`: not known yet).
    pub pending_action: (Option<Option<PendingAction>>, Reason),
    /// The authoritative projection held: its action (`None` unknown, `Some(None)` clean) and
    /// revision.
    pub projection: (Option<Option<PendingAction>>, Option<&'a Revision>),
    /// Whether the clarification answer is known, the query's reason and its bundle's pending
    /// id.
    pub clarification: (bool, Reason, Option<&'a str>),
    /// The pending clarification requests held, newest first, at most [`LINES`].
    pub requests: Vec<RequestLine<'a>>,
    /// Whether the session waits for a permission (`None`: not known yet).
    pub permission: (Option<bool>, Reason),
    /// Recent inputs about the session that the store rejected, newest first.
    pub rejected: Vec<&'a Rejection>,
}

/// One session of the task in an [`OwnerExplanation`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionLine<'a> {
    pub id: &'a str,
    pub state: Option<SessionState>,
    pub is_primary: bool,
    pub pending_action: Option<PendingAction>,
}

/// Why the store answers what it does about a task's pending owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerExplanation<'a> {
    pub task_id: &'a str,
    /// The store holds anything about the task.
    pub known: bool,
    pub removed: bool,
    /// The inputs the owner still waits for (SPEC §11).
    pub missing: Vec<Awaiting>,
    /// The session to open (`Some(None)`: task-only; `None`: not known yet).
    pub owner: (Option<Option<&'a str>>, Reason),
    /// The task's effective action (`None`: not known yet).
    pub pending_action: (Option<Option<PendingAction>>, Reason),
    /// The held status summary's revision (`None`: none held, or it has none).
    pub summary_revision: Option<u64>,
    /// The preferred session asked about, and whether it may count (not another task's).
    pub preferred: Option<(&'a str, bool)>,
    /// The task's listed sessions, newest first (`None`: the list is not loaded).
    pub sessions: Option<Vec<SessionLine<'a>>>,
    /// Recent inputs about the task or its sessions that the store rejected, newest first.
    pub rejected: Vec<&'a Rejection>,
}

impl<P: Clone> ProjectionStore<P> {
    /// Why the store answers what it does about `session_id`.
    pub fn explain<'s>(&'s self, session_id: &'s str) -> SessionExplanation<'s> {
        let entry = self.sessions.get_key_value(session_id);
        let id = entry.map_or(session_id, |(k, _)| &**k);
        // The queries' answers, as the app sees them.
        let current_turn = self.current_turn_id(session_id);
        let pending_action = self.session_pending_action(session_id);
        let permission = self.has_pending_permission(session_id);
        let rejected = self
            .rejected
            .select(|r| r.session_id.as_deref() == Some(session_id));
        let inputs = self.session_inputs(session_id);
        let missing = knowledge::session_missing(inputs);
        let Some((_, entry)) = entry else {
            let (bundle, clarification_reason) = self.pending_clarification(session_id);
            return SessionExplanation {
                session_id,
                known: false,
                removed: inputs.removed,
                missing,
                task_id: None,
                listed: false,
                state: None,
                current_turn,
                turn_count: None,
                turns: Vec::new(),
                pending_action,
                projection: (None, None),
                clarification: (bundle.is_some(), clarification_reason, None),
                requests: Vec::new(),
                permission,
                rejected,
            };
        };
        // One discovery pass: the clarification answer and every request's standing.
        let discovery = Self::discover(entry);
        // Until the rows are known, the clarification answer is unknown: the input it awaits.
        let clarification = match knowledge::session_discovery(inputs) {
            knowledge::Knowledge::Awaiting(input) => (false, Reason::Awaiting(input), None),
            _ => (
                true,
                discovery.reason,
                discovery.bundle().and_then(|b| b.pending_id),
            ),
        };
        SessionExplanation {
            session_id: id,
            known: true,
            removed: false,
            missing,
            task_id: entry.task_id.as_deref(),
            listed: entry.listed,
            state: entry.state,
            current_turn,
            turn_count: entry.turns.as_ref().map(Vec::len),
            turns: Self::turn_lines(entry),
            pending_action,
            projection: (entry.projection.action, entry.projection.revision.as_ref()),
            clarification,
            requests: Self::request_lines(entry, &discovery),
            permission,
            rejected,
        }
    }

    /// The session's turns, the current one first and then the others last held first, each
    /// with its standing.
    fn turn_lines(entry: &SessionEntry) -> Vec<TurnLine<'_>> {
        let Some(turns) = entry.turns.as_deref() else {
            return Vec::new();
        };
        let current = Self::current_turn_of(entry).0.turn();
        let mut lines: Vec<(bool, TurnLine<'_>)> = Vec::with_capacity(turns.len());
        for turn in turns.iter().rev() {
            let is_current = current == Some(turn.id.as_str());
            let standing = turn_standing(turn, entry.state, is_current, |t| {
                entry.messages.references(t)
            });
            let line = TurnLine {
                id: &turn.id,
                open: turn.is_open(),
                standing,
            };
            lines.push((!is_current, line));
        }
        // The current turn first (a stable partition: `false` sorts first).
        if let Some(head) = lines
            .iter()
            .position(|(other, _)| !*other)
            .and_then(|at| lines.get_mut(..=at))
        {
            head.rotate_right(1);
        }
        lines.truncate(LINES);
        lines.into_iter().map(|(_, l)| l).collect()
    }

    /// The session's pending clarification requests, newest first, each with its standing.
    fn request_lines<'e>(
        entry: &'e SessionEntry,
        discovery: &Discovery<'e>,
    ) -> Vec<RequestLine<'e>> {
        let chosen = discovery.request.and_then(|i| discovery.candidates.get(i));
        let in_bundle = |row: &RowView<'_>| {
            discovery
                .members
                .iter()
                .filter_map(|&i| discovery.candidates.get(i))
                .any(|m| m.id_str() == row.id_str())
        };
        // `rows()` is in creation order: the newest last.
        let mut pending: Vec<RowView<'_>> = entry
            .messages
            .rows()
            .filter(|r| r.kind() == MessageKind::ClarificationRequest && r.status().is_pending())
            .collect();
        pending.reverse();
        pending
            .into_iter()
            .take(LINES)
            .map(|row| RequestLine {
                id: row.id_str(),
                turn_id: row.turn_id_str(),
                pending_id: row.pending_id_str(),
                standing: request_standing(&row, discovery.considered, chosen, in_bundle(&row)),
            })
            .collect()
    }

    /// Why the store answers what it does about `task_id`'s pending owner (with the same
    /// `preferred` session [`Self::pending_owner`] takes).
    pub fn explain_owner<'s>(
        &'s self,
        task_id: &'s str,
        preferred: Option<&'s str>,
    ) -> OwnerExplanation<'s> {
        let owner = self.pending_owner(task_id, preferred);
        let pending_action = self.task_pending_action(task_id);
        let inputs = self.task_inputs(task_id);
        let missing = knowledge::task_missing(inputs);
        let task = self.tasks.get_key_value(task_id);
        let sessions = task.and_then(|(_, t)| {
            t.sessions.as_ref()?;
            Some(
                self.listed_sessions(t)
                    .into_iter()
                    .map(|s: SessionRef<'_>| SessionLine {
                        id: s.id,
                        state: s.state(),
                        is_primary: s.is_primary(),
                        pending_action: s.action(),
                    })
                    .collect(),
            )
        });
        let listed = |session: &str| {
            task.and_then(|(_, t)| t.sessions.as_ref())
                .is_some_and(|list| list.iter().any(|s| &**s == session))
        };
        let rejected = self.rejected.select(|r| {
            r.task_id.as_deref() == Some(task_id) || r.session_id.as_deref().is_some_and(listed)
        });
        OwnerExplanation {
            task_id: task.map_or(task_id, |(k, _)| &**k),
            known: task.is_some(),
            removed: inputs.removed,
            missing,
            owner,
            pending_action,
            summary_revision: task
                .and_then(|(_, t)| t.summary.as_ref())
                .and_then(|s| s.revision()),
            preferred: preferred.map(|p| (p, self.eligible_preferred(task_id, Some(p)).is_some())),
            sessions,
            rejected,
        }
    }
}

// ---- JSON ------------------------------------------------------------------------------------

impl Json {
    /// `{ value, known, reason }` of a pending-action answer (`value` null while unknown).
    pub(super) fn answer(
        &mut self,
        key: &str,
        (action, why): (Option<Option<PendingAction>>, Reason),
    ) {
        self.open(key, '{');
        self.action("value", action.flatten());
        self.bool("known", action.is_some());
        self.reason("reason", why);
        self.close('}');
    }

    /// The inputs still awaited, by their reason codes.
    pub(super) fn missing(&mut self, missing: &[Awaiting]) {
        self.open("missing", '[');
        for m in missing {
            self.sep();
            self.text(Reason::Awaiting(*m).code());
        }
        self.close(']');
    }

    pub(super) fn revision(&mut self, key: &str, revision: Option<&Rev>) {
        match revision {
            None => self.raw(key, "null"),
            Some(Rev::Summary(n)) => self.num(key, Some(*n)),
            Some(Rev::Pending(r)) => {
                self.open(key, '{');
                self.str("epoch", Some(&r.epoch));
                self.num("sequence", Some(r.sequence));
                self.close('}');
            }
        }
    }

    pub(super) fn rejected(&mut self, rejected: &[&Rejection]) {
        self.open("rejected", '[');
        for r in rejected {
            self.element();
            self.str("input", Some(r.input.as_str()));
            self.reason("reason", r.reason);
            self.str("detail", r.detail().and_then(replace_detail));
            self.str("task_id", r.task_id.as_deref());
            self.str("session_id", r.session_id.as_deref());
            self.str("message_id", r.message_id.as_deref());
            self.revision("revision", r.revision.as_ref());
            self.revision("held", r.held.as_ref());
            self.close('}');
        }
        self.close(']');
    }
}

/// The wire spelling of a session state (`OTHER` for one this version does not know).
const fn state_str(state: SessionState) -> &'static str {
    match state.as_wire() {
        Some(text) => text,
        None => "OTHER",
    }
}

/// The code of a rejecting revision comparison.
const fn replace_detail(reason: ReplaceReason) -> Option<&'static str> {
    match reason {
        ReplaceReason::OlderEpoch => Some("older_epoch"),
        ReplaceReason::OlderRevisionRejected => Some("older_sequence"),
        ReplaceReason::IncomingEpochMalformed => Some("malformed_epoch"),
        _ => None,
    }
}

pub const fn turn_standing_code(standing: TurnStanding) -> &'static str {
    match standing {
        TurnStanding::Current => "current",
        TurnStanding::LifecycleOnly => "lifecycle_skipped",
        TurnStanding::UnpublishedReservation => "unpublished_reservation",
        TurnStanding::Quarantined => "quarantined",
        TurnStanding::Outranked => "outranked",
    }
}

pub const fn request_standing_code(standing: RequestStanding) -> &'static str {
    match standing {
        RequestStanding::InBundle => "in_bundle",
        RequestStanding::DiscoveryClosed => "discovery_closed",
        RequestStanding::NotCurrentTurn => "not_current_turn",
        RequestStanding::BundleIncomplete => "bundle_incomplete",
        RequestStanding::NewerRequestChosen => "newer_request_chosen",
    }
}

impl SessionExplanation<'_> {
    /// The explanation as JSON (the shape `SessionExplanation` in `types/store.d.ts` declares).
    pub fn to_json(&self) -> String {
        let mut j = Json::with_capacity(512);
        j.0.push('{');
        j.str("session_id", Some(self.session_id));
        j.bool("known", self.known);
        j.bool("removed", self.removed);
        j.missing(&self.missing);
        j.str("task_id", self.task_id);
        j.bool("listed", self.listed);
        j.str("state", self.state.map(state_str));

        let (current, why) = self.current_turn;
        j.open("current_turn", '{');
        j.str("id", current.turn());
        j.bool("known", current != CurrentTurn::Unknown);
        j.reason("reason", why);
        j.close('}');
        j.num(
            "turn_count",
            self.turn_count.and_then(|n| u64::try_from(n).ok()),
        );
        j.open("turns", '[');
        for t in &self.turns {
            j.element();
            j.str("id", Some(t.id));
            j.bool("open", t.open);
            j.str("standing", Some(turn_standing_code(t.standing)));
            j.close('}');
        }
        j.close(']');

        j.answer("pending_action", self.pending_action);

        let (held_action, held_revision) = self.projection;
        j.open("projection", '{');
        j.bool("known", held_action.is_some());
        j.action("action", held_action.flatten());
        let revision = held_revision.map(|r| Rev::Pending(r.clone()));
        j.revision("revision", revision.as_ref());
        j.close('}');

        let (known, why, pending_id) = self.clarification;
        j.open("clarification", '{');
        j.bool("known", known);
        j.reason("reason", why);
        j.str("pending_id", pending_id);
        j.close('}');
        j.open("requests", '[');
        for r in &self.requests {
            j.element();
            j.str("id", Some(r.id));
            j.str("turn_id", r.turn_id);
            j.str("pending_id", r.pending_id);
            j.str("standing", Some(request_standing_code(r.standing)));
            j.close('}');
        }
        j.close(']');

        let (blocked, why) = self.permission;
        j.open("permission", '{');
        match blocked {
            Some(blocked) => j.bool("pending", blocked),
            None => j.raw("pending", "null"),
        }
        j.bool("known", blocked.is_some());
        j.reason("reason", why);
        j.close('}');

        j.rejected(&self.rejected);
        j.close('}');
        j.0
    }
}

impl OwnerExplanation<'_> {
    /// The explanation as JSON (the shape `OwnerExplanation` in `types/store.d.ts` declares).
    pub fn to_json(&self) -> String {
        let mut j = Json::with_capacity(256);
        j.0.push('{');
        j.str("task_id", Some(self.task_id));
        j.bool("known", self.known);
        j.bool("removed", self.removed);
        j.missing(&self.missing);
        let (owner, why) = self.owner;
        j.open("owner", '{');
        j.str("session_id", owner.flatten());
        j.bool("known", owner.is_some());
        j.reason("reason", why);
        j.close('}');
        j.answer("pending_action", self.pending_action);
        j.num("summary_revision", self.summary_revision);
        match self.preferred {
            None => j.raw("preferred", "null"),
            Some((id, eligible)) => {
                j.open("preferred", '{');
                j.str("session_id", Some(id));
                j.bool("eligible", eligible);
                j.close('}');
            }
        }
        match &self.sessions {
            None => j.raw("sessions", "null"),
            Some(sessions) => {
                j.open("sessions", '[');
                for s in sessions {
                    j.element();
                    j.str("id", Some(s.id));
                    j.str("state", s.state.map(state_str));
                    j.bool("is_primary", s.is_primary);
                    j.action("pending_action", s.pending_action);
                    j.close('}');
                }
                j.close(']');
            }
        }
        j.rejected(&self.rejected);
        j.close('}');
        j.0
    }
}
