//! Workflow profile-session lifecycle (SPEC §10, design `spec/001`): policy normalization, the
//! transition plan (keep, or reuse/create a destination and complete/park the source), the order
//! of its effects, and stop intents with their consumption rule.

use super::model::SessionState;
use super::time::Timestamp;

/// `profile_session_start_policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartPolicy {
    Reuse,
    New,
}

/// `profile_session_end_policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndPolicy {
    Complete,
    Park,
}

impl StartPolicy {
    pub const fn as_str(self) -> &'static str {
        match self {
            StartPolicy::Reuse => "reuse",
            StartPolicy::New => "new",
        }
    }
}

impl EndPolicy {
    pub const fn as_str(self) -> &'static str {
        match self {
            EndPolicy::Complete => "complete",
            EndPolicy::Park => "park",
        }
    }
}

/// Trimmed `new` → new; anything else (including a non-string, `None`) → reuse.
pub fn normalize_start_policy(value: Option<&str>) -> StartPolicy {
    match value.map(str::trim) {
        Some("new") => StartPolicy::New,
        _ => StartPolicy::Reuse,
    }
}

/// Trimmed `park` → park; anything else → complete.
pub fn normalize_end_policy(value: Option<&str>) -> EndPolicy {
    match value.map(str::trim) {
        Some("park") => EndPolicy::Park,
        _ => EndPolicy::Complete,
    }
}

/// The session that is active when a workflow transition happens (the source step's session).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActiveSession<'a> {
    pub id: &'a str,
    /// The session's agent profile id (`None` or empty when it has none).
    pub profile: Option<&'a str>,
    pub state: SessionState,
}

/// A session of the task that could be reused as the destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CandidateSession<'a> {
    pub id: &'a str,
    pub profile: Option<&'a str>,
    pub state: SessionState,
    pub started_at: &'a Timestamp,
    pub created_at: &'a Timestamp,
}

/// Why the transition keeps the current session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeepReason {
    /// The destination step resolves no profile.
    NoDestinationProfile,
    /// The destination profile equals the active session's profile.
    SameProfile,
}

/// The destination session of a profile switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Destination<'a> {
    /// Promote this existing session.
    Reuse(&'a str),
    /// Create a session with a fresh provider conversation.
    CreateNew,
}

/// How the source session is retired (the source step's end policy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retirement {
    /// Mark the source `COMPLETED`, then stop its runtime.
    Complete,
    /// Persist a stop intent, set the source `WAITING_FOR_INPUT`, clear `completed_at`, then
    /// stop its runtime.
    Park,
}

impl From<EndPolicy> for Retirement {
    fn from(policy: EndPolicy) -> Retirement {
        match policy {
            EndPolicy::Complete => Retirement::Complete,
            EndPolicy::Park => Retirement::Park,
        }
    }
}

/// Why the destination is what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DestinationReason {
    /// `reuse`: the newest eligible non-terminal session of the profile.
    ReusedNewestEligible,
    /// `reuse`, but no eligible session exists.
    NoEligibleSession,
    /// `new`: always a new session, no lookup.
    StartPolicyNew,
}

/// Why the source is (not) retired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetireReason {
    /// The source step's end policy applies.
    EndPolicy,
    /// There is no active session to retire.
    NoSource,
    /// The source is already terminal: a historical endpoint is never revived or re-completed.
    SourceTerminal,
}

/// A profile switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Switch<'a> {
    /// The destination profile (trimmed).
    pub profile: &'a str,
    pub destination: Destination<'a>,
    pub destination_reason: DestinationReason,
    /// `None` when there is no source to retire.
    pub retire_source: Option<Retirement>,
    pub retire_reason: RetireReason,
}

/// The plan of a workflow transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransitionPlan<'a> {
    /// Keep the current session; apply neither policy.
    Keep(KeepReason),
    Switch(Switch<'a>),
}

fn profile_of(profile: Option<&str>) -> &str {
    profile.map_or("", str::trim)
}

/// A session may be reused for `profile`: non-terminal, in a known state (a state outside SPEC's
/// list fails closed), of that profile, and not the source.
pub fn is_reusable(candidate: &CandidateSession<'_>, profile: &str, source: Option<&str>) -> bool {
    !candidate.state.is_terminal()
        && candidate.state != SessionState::Other
        && profile_of(candidate.profile) == profile
        && Some(candidate.id) != source
}

/// The newest eligible session (by `started_at`, then `created_at`, then `id`, descending; a
/// complete tie keeps the first listed). Returns an index into `candidates`.
pub fn newest_reusable(
    candidates: &[CandidateSession<'_>],
    profile: &str,
    source: Option<&str>,
) -> Option<usize> {
    let mut best: Option<(usize, &CandidateSession<'_>)> = None;
    for (index, candidate) in candidates.iter().enumerate() {
        if !is_reusable(candidate, profile, source) {
            continue;
        }
        let newer = best.is_none_or(|(_, held)| {
            (candidate.started_at, candidate.created_at, candidate.id)
                > (held.started_at, held.created_at, held.id)
        });
        if newer {
            best = Some((index, candidate));
        }
    }
    best.map(|(index, _)| index)
}

/// Plans a workflow transition (SPEC §10).
///
/// * `destination_profile` is the destination step's effective profile (its override, else the
///   workflow default); empty (after trimming) or equal to the active session's profile → keep
///   the current session and apply neither policy.
/// * Otherwise the **destination** step's `start` policy picks the session (`reuse`: newest
///   eligible non-terminal session of the profile, never the source, none → new; `new`: always
///   new) and the **source** step's `end` policy retires the source (unless there is none or it
///   is already terminal).
///
/// `candidates` are the task's sessions (the source may be among them; it is never chosen).
pub fn plan_transition<'a>(
    destination_profile: Option<&'a str>,
    active: Option<&ActiveSession<'a>>,
    candidates: &[CandidateSession<'a>],
    start: StartPolicy,
    end: EndPolicy,
) -> TransitionPlan<'a> {
    let profile = profile_of(destination_profile);
    if profile.is_empty() {
        return TransitionPlan::Keep(KeepReason::NoDestinationProfile);
    }
    if active.is_some_and(|a| profile_of(a.profile) == profile) {
        return TransitionPlan::Keep(KeepReason::SameProfile);
    }
    let source = active.map(|a| a.id);
    let (destination, destination_reason) = match start {
        StartPolicy::New => (Destination::CreateNew, DestinationReason::StartPolicyNew),
        StartPolicy::Reuse => match newest_reusable(candidates, profile, source)
            .and_then(|index| candidates.get(index))
        {
            Some(candidate) => (
                Destination::Reuse(candidate.id),
                DestinationReason::ReusedNewestEligible,
            ),
            None => (Destination::CreateNew, DestinationReason::NoEligibleSession),
        },
    };
    let (retire_source, retire_reason) = match active {
        None => (None, RetireReason::NoSource),
        Some(a) if a.state.is_terminal() => (None, RetireReason::SourceTerminal),
        Some(_) => (Some(Retirement::from(end)), RetireReason::EndPolicy),
    };
    TransitionPlan::Switch(Switch {
        profile,
        destination,
        destination_reason,
        retire_source,
        retire_reason,
    })
}

/// One effect of a profile switch, in the order the service performs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Preflight managed Git credentials and prepare the destination (load the reused session or
    /// create the new one). Fails before any source mutation.
    PrepareDestination,
    /// Promote the destination to primary (the source becomes non-primary).
    PromoteDestination,
    /// Park: persist the stop intent `{execution id, unique stamp}` on the source.
    PersistStopIntent,
    /// Complete: set the source `COMPLETED`.
    MarkSourceCompleted,
    /// Park: set the source `WAITING_FOR_INPUT` and clear `completed_at`.
    MarkSourceWaitingForInput,
    /// Release the source lifecycle guard, then stop the source runtime (scheduled after the
    /// lifecycle operation returns when the caller owns the guard).
    StopSourceRuntime,
}

/// What the service does when an effect fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnFailure {
    /// Abort the switch: the source is untouched and stays primary and recoverable.
    AbortSourceUntouched,
    /// Abort the switch before retiring the source (a failed park never falls back to complete).
    AbortBeforeRetirement,
    /// Report the error; committed state stays (a retry can stop the same execution, the stamped
    /// intent suppresses a delayed callback).
    ReportAndKeep,
}

impl Effect {
    /// How a failure of this effect is handled (design "Failure and recovery").
    pub const fn on_failure(self) -> OnFailure {
        match self {
            Effect::PrepareDestination | Effect::PromoteDestination => {
                OnFailure::AbortSourceUntouched
            }
            Effect::PersistStopIntent => OnFailure::AbortBeforeRetirement,
            Effect::MarkSourceCompleted
            | Effect::MarkSourceWaitingForInput
            | Effect::StopSourceRuntime => OnFailure::ReportAndKeep,
        }
    }
}

impl Switch<'_> {
    /// The effects of this switch in order: the destination is prepared and promoted before the
    /// source is mutated; the runtime stop comes last.
    pub fn effects(&self) -> Vec<Effect> {
        let mut effects = vec![Effect::PrepareDestination, Effect::PromoteDestination];
        match self.retire_source {
            None => {}
            Some(Retirement::Complete) => {
                effects.extend([Effect::MarkSourceCompleted, Effect::StopSourceRuntime]);
            }
            Some(Retirement::Park) => effects.extend([
                Effect::PersistStopIntent,
                Effect::MarkSourceWaitingForInput,
                Effect::StopSourceRuntime,
            ]),
        }
        effects
    }
}

/// Re-check of a reuse destination just before promotion: a candidate that became terminal (or
/// left the known states) is never revived; the service creates a new session instead.
pub fn recheck_reuse(session_id: &str, fresh_state: SessionState) -> Destination<'_> {
    if fresh_state.is_terminal() || fresh_state == SessionState::Other {
        Destination::CreateNew
    } else {
        Destination::Reuse(session_id)
    }
}

/// A workflow-switch stop intent stored on the parked session's metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StopIntent {
    /// The exact agent execution being stopped.
    pub execution_id: String,
    /// A unique stamp per park operation (a newer park writes a new execution id and stamp).
    pub stamp: String,
    /// Consumed by a matching callback; the consumed intent stays as a durable tombstone.
    pub consumed: bool,
}

impl StopIntent {
    /// A fresh, unconsumed intent.
    pub fn new(execution_id: impl Into<String>, stamp: impl Into<String>) -> StopIntent {
        StopIntent {
            execution_id: execution_id.into(),
            stamp: stamp.into(),
            consumed: false,
        }
    }

    /// The intent after consumption: the same identity, marked consumed (the tombstone).
    pub fn consumed(&self) -> StopIntent {
        StopIntent {
            consumed: true,
            ..self.clone()
        }
    }
}

/// A stop/completion callback of an execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopCallback<'a> {
    pub execution_id: &'a str,
    /// The stamp the stop request carried. When the runtime does not echo one, the service passes
    /// the stamp it read with the intent, and its compare-and-set on that stamp guarantees the
    /// intent it consumes is the one it checked.
    pub stamp: &'a str,
}

/// How the service handles a callback against the session's stop intent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallbackHandling {
    /// Consume the intent by compare-and-set on its stamp (write [`StopIntent::consumed`]), and
    /// skip turn completion, transition evaluation and task-state reconciliation.
    ConsumeAndSuppress,
    /// The intent is already a consumed tombstone for this execution and stamp (a delayed or
    /// repeated delivery): write nothing and still suppress.
    Suppress,
    /// No matching intent: handle the callback normally.
    Ordinary,
}

impl CallbackHandling {
    /// The callback must skip turn completion and workflow advancement.
    pub const fn suppresses(self) -> bool {
        !matches!(self, CallbackHandling::Ordinary)
    }
}

/// Why [`stop_callback_handling`] decided what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopIntentReason {
    NoIntent,
    ExecutionMismatch,
    StampMismatch,
    Matched,
    TombstoneMatched,
}

/// The consumption rule (SPEC §10): a callback matches the intent only when both its execution
/// id and its stamp equal the intent's. A match consumes an unconsumed intent (tombstone kept) or
/// meets the tombstone of a consumed one; either way turn completion and workflow advancement are
/// skipped. Anything else is an ordinary callback.
pub fn stop_callback_handling(
    intent: Option<&StopIntent>,
    callback: &StopCallback<'_>,
) -> (CallbackHandling, StopIntentReason) {
    let Some(intent) = intent else {
        return (CallbackHandling::Ordinary, StopIntentReason::NoIntent);
    };
    if intent.execution_id != callback.execution_id {
        return (
            CallbackHandling::Ordinary,
            StopIntentReason::ExecutionMismatch,
        );
    }
    if callback.stamp != intent.stamp {
        return (CallbackHandling::Ordinary, StopIntentReason::StampMismatch);
    }
    if intent.consumed {
        (
            CallbackHandling::Suppress,
            StopIntentReason::TombstoneMatched,
        )
    } else {
        (
            CallbackHandling::ConsumeAndSuppress,
            StopIntentReason::Matched,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(text: &str) -> Timestamp {
        Timestamp::parse(text)
    }

    struct Row {
        id: &'static str,
        profile: Option<&'static str>,
        state: SessionState,
        started: Timestamp,
        created: Timestamp,
    }

    fn row(id: &'static str, profile: &'static str, state: SessionState, started: &str) -> Row {
        Row {
            id,
            profile: Some(profile),
            state,
            started: ts(started),
            created: ts(started),
        }
    }

    fn candidates(rows: &[Row]) -> Vec<CandidateSession<'_>> {
        rows.iter()
            .map(|r| CandidateSession {
                id: r.id,
                profile: r.profile,
                state: r.state,
                started_at: &r.started,
                created_at: &r.created,
            })
            .collect()
    }

    const T0: &str = "2026-11-29T12:00:00Z";
    const T1: &str = "2026-11-29T12:00:01Z";
    const T2: &str = "2026-11-29T12:00:02Z";
    const T3: &str = "2026-11-29T12:00:03Z";

    use SessionState::{Cancelled, Completed, Failed, Idle, Running, WaitingForInput};

    fn source() -> ActiveSession<'static> {
        ActiveSession {
            id: "src",
            profile: Some("claude"),
            state: Running,
        }
    }

    fn switch(plan: TransitionPlan<'_>) -> Switch<'_> {
        match plan {
            TransitionPlan::Switch(switch) => switch,
            TransitionPlan::Keep(reason) => panic!("kept: {reason:?}"),
        }
    }

    #[test]
    fn scenario_61_policy_normalization() {
        assert_eq!(normalize_start_policy(Some(" new ")), StartPolicy::New);
        assert_eq!(normalize_start_policy(Some("new")), StartPolicy::New);
        for value in [Some(""), Some("retain"), Some("reuse"), Some("NEW"), None] {
            assert_eq!(
                normalize_start_policy(value),
                StartPolicy::Reuse,
                "{value:?}"
            );
        }
        assert_eq!(normalize_end_policy(Some(" park ")), EndPolicy::Park);
        for value in [
            Some(""),
            Some("retain"),
            Some("complete"),
            Some("Park"),
            None,
        ] {
            assert_eq!(
                normalize_end_policy(value),
                EndPolicy::Complete,
                "{value:?}"
            );
        }
        assert_eq!(StartPolicy::New.as_str(), "new");
        assert_eq!(EndPolicy::Park.as_str(), "park");
    }

    #[test]
    fn scenario_62_same_profile_keeps_the_session() {
        let rows = [row("other", "claude", WaitingForInput, T3)];
        for start in [StartPolicy::Reuse, StartPolicy::New] {
            for end in [EndPolicy::Complete, EndPolicy::Park] {
                assert_eq!(
                    plan_transition(
                        Some("claude"),
                        Some(&source()),
                        &candidates(&rows),
                        start,
                        end
                    ),
                    TransitionPlan::Keep(KeepReason::SameProfile)
                );
                assert_eq!(
                    plan_transition(Some(" claude "), Some(&source()), &[], start, end),
                    TransitionPlan::Keep(KeepReason::SameProfile)
                );
            }
        }
    }

    #[test]
    fn empty_destination_profile_keeps_the_session() {
        for profile in [None, Some(""), Some("   ")] {
            assert_eq!(
                plan_transition(
                    profile,
                    Some(&source()),
                    &[],
                    StartPolicy::New,
                    EndPolicy::Park
                ),
                TransitionPlan::Keep(KeepReason::NoDestinationProfile)
            );
            assert_eq!(
                plan_transition(profile, None, &[], StartPolicy::New, EndPolicy::Park),
                TransitionPlan::Keep(KeepReason::NoDestinationProfile)
            );
        }
    }

    #[test]
    fn four_policy_combinations() {
        let rows = [
            row("src", "claude", Running, T3),
            row("codex-old", "codex", WaitingForInput, T1),
        ];
        let c = candidates(&rows);
        let cases = [
            (
                StartPolicy::Reuse,
                EndPolicy::Complete,
                Destination::Reuse("codex-old"),
                Retirement::Complete,
            ),
            (
                StartPolicy::New,
                EndPolicy::Complete,
                Destination::CreateNew,
                Retirement::Complete,
            ),
            (
                StartPolicy::Reuse,
                EndPolicy::Park,
                Destination::Reuse("codex-old"),
                Retirement::Park,
            ),
            (
                StartPolicy::New,
                EndPolicy::Park,
                Destination::CreateNew,
                Retirement::Park,
            ),
        ];
        for (start, end, destination, retirement) in cases {
            let plan = switch(plan_transition(
                Some("codex"),
                Some(&source()),
                &c,
                start,
                end,
            ));
            assert_eq!(plan.profile, "codex");
            assert_eq!(plan.destination, destination, "{start:?}/{end:?}");
            assert_eq!(plan.retire_source, Some(retirement), "{start:?}/{end:?}");
            assert_eq!(plan.retire_reason, RetireReason::EndPolicy);
        }
        let reuse = switch(plan_transition(
            Some("codex"),
            Some(&source()),
            &c,
            StartPolicy::Reuse,
            EndPolicy::Complete,
        ));
        assert_eq!(
            reuse.destination_reason,
            DestinationReason::ReusedNewestEligible
        );
        let new = switch(plan_transition(
            Some("codex"),
            Some(&source()),
            &c,
            StartPolicy::New,
            EndPolicy::Complete,
        ));
        assert_eq!(new.destination_reason, DestinationReason::StartPolicyNew);
    }

    #[test]
    fn reuse_picks_the_newest_eligible_non_terminal_session() {
        let rows = [
            row("old", "codex", Idle, T0),
            row("newest-done", "codex", Completed, T3),
            row("failed", "codex", Failed, T3),
            row("cancelled", "codex", Cancelled, T3),
            row("other-profile", "gemini", Running, T3),
            row("unknown-state", "codex", SessionState::Other, T3),
            row("mid", "codex", WaitingForInput, T2),
            row("early", "codex", Running, T1),
        ];
        let c = candidates(&rows);
        let plan = switch(plan_transition(
            Some("codex"),
            Some(&source()),
            &c,
            StartPolicy::Reuse,
            EndPolicy::Park,
        ));
        assert_eq!(plan.destination, Destination::Reuse("mid"));
        assert_eq!(newest_reusable(&c, "codex", Some("src")), Some(6));
    }

    #[test]
    fn reuse_never_picks_the_source_and_falls_back_to_new() {
        // The source has the destination's profile only in the candidate list's eyes (a profile
        // change of the source row) — it is still never reused.
        let rows = [row("src", "codex", Running, T3)];
        let active = ActiveSession {
            id: "src",
            profile: Some("claude"),
            state: Running,
        };
        let plan = switch(plan_transition(
            Some("codex"),
            Some(&active),
            &candidates(&rows),
            StartPolicy::Reuse,
            EndPolicy::Complete,
        ));
        assert_eq!(plan.destination, Destination::CreateNew);
        assert_eq!(
            plan.destination_reason,
            DestinationReason::NoEligibleSession
        );
        let plan = switch(plan_transition(
            Some("codex"),
            Some(&active),
            &[],
            StartPolicy::Reuse,
            EndPolicy::Complete,
        ));
        assert_eq!(plan.destination, Destination::CreateNew);
    }

    #[test]
    fn reuse_tie_breaks_by_created_then_id_then_first() {
        let mut a = row("a", "codex", Running, T1);
        a.created = ts(T2);
        let b = row("b", "codex", Running, T1);
        let rows = [b, a];
        assert_eq!(newest_reusable(&candidates(&rows), "codex", None), Some(1));
        let rows = [
            row("a", "codex", Running, T1),
            row("b", "codex", Running, T1),
        ];
        assert_eq!(newest_reusable(&candidates(&rows), "codex", None), Some(1));
        let rows = [
            row("x", "codex", Running, T1),
            row("x", "codex", Running, T1),
        ];
        assert_eq!(newest_reusable(&candidates(&rows), "codex", None), Some(0));
        // Profiles compare trimmed; a session without a profile never matches.
        let mut none = row("none", "codex", Running, T3);
        none.profile = None;
        let rows = [row("spaced", " codex ", Running, T1), none];
        assert_eq!(newest_reusable(&candidates(&rows), "codex", None), Some(0));
    }

    #[test]
    fn no_or_terminal_source_is_not_retired() {
        let plan = switch(plan_transition(
            Some("codex"),
            None,
            &[],
            StartPolicy::New,
            EndPolicy::Park,
        ));
        assert_eq!(plan.retire_source, None);
        assert_eq!(plan.retire_reason, RetireReason::NoSource);
        assert_eq!(
            plan.effects(),
            vec![Effect::PrepareDestination, Effect::PromoteDestination]
        );
        let done = ActiveSession {
            state: Completed,
            ..source()
        };
        let plan = switch(plan_transition(
            Some("codex"),
            Some(&done),
            &[],
            StartPolicy::New,
            EndPolicy::Park,
        ));
        assert_eq!(plan.retire_source, None);
        assert_eq!(plan.retire_reason, RetireReason::SourceTerminal);
        // A source without a profile switches to any named profile.
        let bare = ActiveSession {
            profile: None,
            ..source()
        };
        assert!(matches!(
            plan_transition(
                Some("codex"),
                Some(&bare),
                &[],
                StartPolicy::New,
                EndPolicy::Complete
            ),
            TransitionPlan::Switch(_)
        ));
    }

    #[test]
    fn effects_prepare_the_destination_before_mutating_the_source() {
        let complete = switch(plan_transition(
            Some("codex"),
            Some(&source()),
            &[],
            StartPolicy::New,
            EndPolicy::Complete,
        ));
        assert_eq!(
            complete.effects(),
            vec![
                Effect::PrepareDestination,
                Effect::PromoteDestination,
                Effect::MarkSourceCompleted,
                Effect::StopSourceRuntime
            ]
        );
        let park = switch(plan_transition(
            Some("codex"),
            Some(&source()),
            &[],
            StartPolicy::New,
            EndPolicy::Park,
        ));
        assert_eq!(
            park.effects(),
            vec![
                Effect::PrepareDestination,
                Effect::PromoteDestination,
                Effect::PersistStopIntent,
                Effect::MarkSourceWaitingForInput,
                Effect::StopSourceRuntime
            ]
        );
    }

    #[test]
    fn failure_handling_per_effect() {
        assert_eq!(
            Effect::PrepareDestination.on_failure(),
            OnFailure::AbortSourceUntouched
        );
        assert_eq!(
            Effect::PromoteDestination.on_failure(),
            OnFailure::AbortSourceUntouched
        );
        assert_eq!(
            Effect::PersistStopIntent.on_failure(),
            OnFailure::AbortBeforeRetirement
        );
        assert_eq!(
            Effect::StopSourceRuntime.on_failure(),
            OnFailure::ReportAndKeep
        );
        assert_eq!(
            Effect::MarkSourceCompleted.on_failure(),
            OnFailure::ReportAndKeep
        );
        assert_eq!(
            Effect::MarkSourceWaitingForInput.on_failure(),
            OnFailure::ReportAndKeep
        );
    }

    #[test]
    fn reuse_candidate_turned_terminal_is_not_revived() {
        assert_eq!(recheck_reuse("s", WaitingForInput), Destination::Reuse("s"));
        assert_eq!(recheck_reuse("s", Idle), Destination::Reuse("s"));
        for state in [Completed, Failed, Cancelled, SessionState::Other] {
            assert_eq!(recheck_reuse("s", state), Destination::CreateNew);
        }
    }

    #[test]
    fn stop_intent_consumption() {
        let intent = StopIntent::new("exec-1", "stamp-1");
        assert!(!intent.consumed);
        let matching = StopCallback {
            execution_id: "exec-1",
            stamp: "stamp-1",
        };
        assert_eq!(
            stop_callback_handling(Some(&intent), &matching),
            (
                CallbackHandling::ConsumeAndSuppress,
                StopIntentReason::Matched
            )
        );
        let tombstone = intent.consumed();
        assert!(tombstone.consumed);
        assert_eq!(tombstone.execution_id, "exec-1");
        assert_eq!(tombstone.stamp, "stamp-1");
        // A delayed or repeated callback meets the tombstone: still suppressed, nothing written.
        assert_eq!(
            stop_callback_handling(Some(&tombstone), &matching),
            (
                CallbackHandling::Suppress,
                StopIntentReason::TombstoneMatched
            )
        );
        assert!(CallbackHandling::Suppress.suppresses());
        assert!(CallbackHandling::ConsumeAndSuppress.suppresses());
        assert!(!CallbackHandling::Ordinary.suppresses());
    }

    #[test]
    fn stop_intent_needs_execution_and_stamp() {
        let intent = StopIntent::new("exec-1", "stamp-1");
        let cases = [
            ("exec-2", "stamp-1", StopIntentReason::ExecutionMismatch),
            ("exec-1", "stamp-0", StopIntentReason::StampMismatch),
            ("exec-1", "", StopIntentReason::StampMismatch),
        ];
        for (execution_id, stamp, reason) in cases {
            let callback = StopCallback {
                execution_id,
                stamp,
            };
            assert_eq!(
                stop_callback_handling(Some(&intent), &callback),
                (CallbackHandling::Ordinary, reason)
            );
            assert_eq!(
                stop_callback_handling(Some(&intent.consumed()), &callback).0,
                CallbackHandling::Ordinary
            );
        }
        let callback = StopCallback {
            execution_id: "exec-1",
            stamp: "stamp-1",
        };
        assert_eq!(
            stop_callback_handling(None, &callback),
            (CallbackHandling::Ordinary, StopIntentReason::NoIntent)
        );
        // A newer park writes a new execution id and stamp: the old callback is ordinary.
        let newer = StopIntent::new("exec-2", "stamp-2");
        assert_eq!(
            stop_callback_handling(Some(&newer), &callback).0,
            CallbackHandling::Ordinary
        );
    }
}
