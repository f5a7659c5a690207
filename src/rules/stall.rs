//! Stall detection and orphan healing (SPEC §9, design `spec/004` "Session stall visibility").
//!
//! A sweep evaluates each unarchived task from plain facts ([`SessionActivity`] per session, a
//! threshold and the current time) with [`evaluate_task`]; an [`EpisodeTracker`] (a value the
//! service keeps in memory) turns the stalled sessions into reports at most once per session per
//! episode; the heal plan lists the sessions to cancel with [`ORPHANED_SESSION_REASON`];
//! [`confirm_heal`] re-checks the plan as a whole and [`confirm_cancel`] each session with fresh
//! facts at cancel time.
//!
//! Times are integer nanoseconds since the Unix epoch ([`UnixNanos`]); silences are
//! [`Duration`]s. Clock skew never panics: a `now` earlier than the last activity is silence 0.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::model::SessionState;

/// The default stall threshold: 2 hours.
pub const DEFAULT_STALL_THRESHOLD: Duration = Duration::from_secs(2 * 60 * 60);

/// The cancellation reason of a healed session.
pub const ORPHANED_SESSION_REASON: &str = "orphaned session";

/// An instant as integer nanoseconds since the Unix epoch (negative before it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnixNanos(pub i128);

impl UnixNanos {
    /// Converts a wall-clock time without loss (before the epoch is negative).
    pub fn from_system_time(time: SystemTime) -> UnixNanos {
        match time.duration_since(UNIX_EPOCH) {
            Ok(after) => UnixNanos(i128::try_from(after.as_nanos()).unwrap_or(i128::MAX)),
            Err(before) => UnixNanos(
                i128::try_from(before.duration().as_nanos())
                    .map_or(i128::MIN, |n| n.saturating_neg()),
            ),
        }
    }

    /// `self − earlier` as a duration; zero when `earlier` is not before `self` (clock skew),
    /// saturating at [`Duration::MAX`]-ish lengths (`u64::MAX` nanoseconds).
    pub fn since(self, earlier: UnixNanos) -> Duration {
        let nanos = self.0.saturating_sub(earlier.0);
        if nanos <= 0 {
            return Duration::ZERO;
        }
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }
}

/// The newest persisted message time of a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageClock {
    /// The session has no persisted message.
    NoMessages,
    /// The newest persisted message's time.
    At(UnixNanos),
    /// Reading it failed (for example a transient database error).
    Unreadable,
}

/// Whether a session has a live execution in the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Execution {
    Live,
    Absent,
    /// The registry could not be verified.
    Unverifiable,
}

/// The facts of one session of the task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionActivity<'a> {
    pub id: &'a str,
    pub state: SessionState,
    /// The session row's last update.
    pub row_updated_at: UnixNanos,
    pub newest_message: MessageClock,
    pub execution: Execution,
}

impl SessionActivity<'_> {
    /// The newest persisted activity: the newer of the row update and the newest message;
    /// `None` when the message clock is unreadable.
    pub fn last_activity(&self) -> Option<UnixNanos> {
        match self.newest_message {
            MessageClock::NoMessages => Some(self.row_updated_at),
            MessageClock::At(at) => Some(at.max(self.row_updated_at)),
            MessageClock::Unreadable => None,
        }
    }
}

/// One stalled session (an index into the task's sessions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stalled {
    pub index: usize,
    /// now − last activity.
    pub silence: Duration,
    /// The last activity the silence is measured from (identifies the episode).
    pub last_activity: UnixNanos,
}

/// Why a task evaluation did or did not classify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskVerdict {
    /// Every clock was read and the registry verified: `stalled` and `heal` are meaningful.
    Evaluated,
    /// Some session's activity clock is unreadable: no report, no heal for this task.
    UnreadableClock,
    /// The execution registry could not be verified: the sweep does nothing (the service stops
    /// the whole sweep).
    UnverifiableRegistry,
}

/// Why the heal plan is what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HealReason {
    /// Every active session is orphaned and silent ≥ 2 × threshold.
    AllActiveOrphaned,
    /// The task has no active session.
    NoActiveSession,
    /// An active session has a live execution.
    ActiveSessionLive,
    /// An active session is not yet silent for 2 × threshold (or not stalled).
    ActiveSessionNotSilentEnough,
    /// The evaluation did not classify (see [`TaskVerdict`]).
    NotEvaluated,
}

/// What one task's evaluation found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskEvaluation {
    pub verdict: TaskVerdict,
    /// Active, no live execution, silence > threshold; in input order.
    pub stalled: Vec<Stalled>,
    /// The sessions to cancel with [`ORPHANED_SESSION_REASON`] (a subset of `stalled`); empty
    /// unless every active session of the task is orphaned and silent ≥ 2 × threshold.
    pub heal: Vec<Stalled>,
    pub heal_reason: HealReason,
}

impl TaskEvaluation {
    fn skipped(verdict: TaskVerdict) -> TaskEvaluation {
        TaskEvaluation {
            verdict,
            stalled: Vec::new(),
            heal: Vec::new(),
            heal_reason: HealReason::NotEvaluated,
        }
    }
}

/// Evaluates one unarchived task's sessions (SPEC §9).
///
/// * Any session (active or not) with an unverifiable execution → [`TaskVerdict::UnverifiableRegistry`].
/// * Any session with an unreadable message clock → [`TaskVerdict::UnreadableClock`].
/// * Stalled: active, [`Execution::Absent`], silence > `threshold`.
/// * Heal: when every active session is stalled with silence ≥ 2 × `threshold`, all of them;
///   otherwise none.
pub fn evaluate_task(
    sessions: &[SessionActivity<'_>],
    threshold: Duration,
    now: UnixNanos,
) -> TaskEvaluation {
    if sessions
        .iter()
        .any(|s| s.execution == Execution::Unverifiable)
    {
        return TaskEvaluation::skipped(TaskVerdict::UnverifiableRegistry);
    }
    let mut activity = Vec::with_capacity(sessions.len());
    for session in sessions {
        let Some(last) = session.last_activity() else {
            return TaskEvaluation::skipped(TaskVerdict::UnreadableClock);
        };
        activity.push(last);
    }
    let heal_after = threshold.saturating_mul(2);
    let mut stalled = Vec::new();
    let mut heal = Vec::new();
    let mut heal_reason = HealReason::NoActiveSession;
    let mut heal_blocked = false;
    for (index, (session, &last_activity)) in sessions.iter().zip(&activity).enumerate() {
        if !session.state.is_active() {
            continue;
        }
        let silence = now.since(last_activity);
        let is_stalled = session.execution == Execution::Absent && silence > threshold;
        let entry = Stalled {
            index,
            silence,
            last_activity,
        };
        if is_stalled {
            stalled.push(entry);
        }
        if heal_blocked {
            continue;
        }
        if session.execution == Execution::Live {
            heal_blocked = true;
            heal_reason = HealReason::ActiveSessionLive;
        } else if !is_stalled || silence < heal_after {
            heal_blocked = true;
            heal_reason = HealReason::ActiveSessionNotSilentEnough;
        } else {
            heal.push(entry);
            heal_reason = HealReason::AllActiveOrphaned;
        }
    }
    if heal_blocked {
        heal.clear();
    }
    TaskEvaluation {
        verdict: TaskVerdict::Evaluated,
        stalled,
        heal,
        heal_reason,
    }
}

/// A session the heal plan classified as orphaned, kept for the cancel-time re-check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealTarget {
    pub session_id: String,
    /// The last activity at classification time.
    pub last_activity: UnixNanos,
}

impl HealTarget {
    /// The heal targets of an evaluation (`sessions` is the slice that was evaluated).
    pub fn from_evaluation(
        sessions: &[SessionActivity<'_>],
        evaluation: &TaskEvaluation,
    ) -> Vec<HealTarget> {
        evaluation
            .heal
            .iter()
            .filter_map(|entry| {
                sessions.get(entry.index).map(|s| HealTarget {
                    session_id: s.id.to_owned(),
                    last_activity: entry.last_activity,
                })
            })
            .collect()
    }
}

/// Why [`confirm_cancel`] decided what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelReason {
    /// Still active, no live execution, no newer activity: cancel.
    StillOrphaned,
    /// The fresh facts are for another session (outside the classified set).
    NotClassified,
    /// A live execution registered (or the registry cannot tell) since classification.
    ExecutionAppeared,
    /// The session left the active states (terminal, idle, ...).
    NoLongerActive,
    /// Newer activity was persisted, or the clock is unreadable.
    ActivityChanged,
}

/// The cancel-time re-check (SPEC §9): cancel `target` only if the `fresh` facts (read at
/// cancel time, ideally under the same compare-and-set) are the same session, still active,
/// still without a live execution (an unverifiable registry counts as live), and show no
/// activity newer than at classification.
pub fn confirm_cancel(target: &HealTarget, fresh: &SessionActivity<'_>) -> (bool, CancelReason) {
    if fresh.id != target.session_id {
        return (false, CancelReason::NotClassified);
    }
    if fresh.execution != Execution::Absent {
        return (false, CancelReason::ExecutionAppeared);
    }
    if !fresh.state.is_active() {
        return (false, CancelReason::NoLongerActive);
    }
    match fresh.last_activity() {
        Some(last) if last <= target.last_activity => (true, CancelReason::StillOrphaned),
        _ => (false, CancelReason::ActivityChanged),
    }
}

/// Why [`confirm_heal`] decided what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HealCheckReason {
    /// Every active session is still a classified, orphaned, silent target.
    PlanHolds,
    /// An active session is not in the classified set (it appeared or was not orphaned).
    UnclassifiedActiveSession,
    /// A classified session failed its re-check (execution appeared, new activity, ...).
    TargetChanged(CancelReason),
    /// No classified session is still active: nothing to cancel.
    NothingLeft,
}

/// The heal plan re-checked as a whole against fresh facts of the task's sessions (read just
/// before cancelling): the premise "every active session is equally orphaned" must still hold,
/// so if any fresh active session is outside the classified `targets` or fails
/// [`confirm_cancel`], nothing is cancelled. Returns indices into `fresh` to cancel (each one
/// still confirmed again by the per-session compare-and-set at cancel time). Targets that left
/// the active states meanwhile are skipped.
pub fn confirm_heal(
    targets: &[HealTarget],
    fresh: &[SessionActivity<'_>],
) -> (Vec<usize>, HealCheckReason) {
    let mut cancel = Vec::new();
    for (index, session) in fresh.iter().enumerate() {
        if !session.state.is_active() {
            continue;
        }
        let Some(target) = targets.iter().find(|t| t.session_id == session.id) else {
            return (Vec::new(), HealCheckReason::UnclassifiedActiveSession);
        };
        match confirm_cancel(target, session) {
            (true, _) => cancel.push(index),
            (false, reason) => return (Vec::new(), HealCheckReason::TargetChanged(reason)),
        }
    }
    if cancel.is_empty() {
        (cancel, HealCheckReason::NothingLeft)
    } else {
        (cancel, HealCheckReason::PlanHolds)
    }
}

/// One session to report in a `task.stalled` event (and a warning log).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StallReport {
    /// Index into the evaluated sessions.
    pub index: usize,
    pub session_id: String,
    pub silence: Duration,
}

/// Stall episodes, per task and session: the service keeps one value in memory across sweeps.
///
/// An episode is identified by the session and the last activity its silence is measured from.
/// It ends when the session leaves the stalled condition (terminal, healed, live execution, new
/// activity); a later stall, or a stall measured from newer activity, is a new episode and is
/// reported again. A task evaluation that did not classify (unreadable clock, unverifiable
/// registry) changes nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EpisodeTracker {
    /// task id → session id → last activity of the reported episode.
    open: BTreeMap<String, BTreeMap<String, UnixNanos>>,
}

impl EpisodeTracker {
    pub fn new() -> EpisodeTracker {
        EpisodeTracker::default()
    }

    /// Records one task's evaluation and returns the sessions to report now (new episodes only),
    /// in input order. Sessions of the task that are no longer stalled end their episode.
    pub fn observe(
        &mut self,
        task_id: &str,
        sessions: &[SessionActivity<'_>],
        evaluation: &TaskEvaluation,
    ) -> Vec<StallReport> {
        if evaluation.verdict != TaskVerdict::Evaluated {
            return Vec::new();
        }
        let previous = self.open.remove(task_id).unwrap_or_default();
        let mut current = BTreeMap::new();
        let mut reports = Vec::new();
        for entry in &evaluation.stalled {
            let Some(session) = sessions.get(entry.index) else {
                continue;
            };
            if previous.get(session.id) != Some(&entry.last_activity) {
                reports.push(StallReport {
                    index: entry.index,
                    session_id: session.id.to_owned(),
                    silence: entry.silence,
                });
            }
            current.insert(session.id.to_owned(), entry.last_activity);
        }
        if !current.is_empty() {
            self.open.insert(task_id.to_owned(), current);
        }
        reports
    }

    /// Ends the episode of one session (for example right after healing cancelled it).
    pub fn end_episode(&mut self, task_id: &str, session_id: &str) {
        if let Some(sessions) = self.open.get_mut(task_id) {
            sessions.remove(session_id);
            if sessions.is_empty() {
                self.open.remove(task_id);
            }
        }
    }

    /// Forgets tasks for which `keep` is false (archived or deleted tasks, after a full sweep).
    pub fn retain_tasks(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.open.retain(|task_id, _| keep(task_id));
    }

    /// Whether a session is inside a reported episode.
    pub fn is_reported(&self, task_id: &str, session_id: &str) -> bool {
        self.open
            .get(task_id)
            .is_some_and(|sessions| sessions.contains_key(session_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i128 = 3_600_000_000_000;
    const MINUTE: i128 = 60_000_000_000;
    const T: Duration = DEFAULT_STALL_THRESHOLD;

    fn at(nanos: i128) -> UnixNanos {
        UnixNanos(nanos)
    }

    fn session(id: &str, last: i128) -> SessionActivity<'_> {
        SessionActivity {
            id,
            state: SessionState::WaitingForInput,
            row_updated_at: at(last),
            newest_message: MessageClock::NoMessages,
            execution: Execution::Absent,
        }
    }

    fn indices(entries: &[Stalled]) -> Vec<usize> {
        entries.iter().map(|e| e.index).collect()
    }

    #[test]
    fn default_threshold_is_two_hours() {
        assert_eq!(DEFAULT_STALL_THRESHOLD, Duration::from_secs(7200));
        assert_eq!(ORPHANED_SESSION_REASON, "orphaned session");
    }

    #[test]
    fn silence_is_measured_from_the_newest_activity_and_never_negative() {
        let mut s = session("s", 0);
        s.newest_message = MessageClock::At(at(HOUR));
        assert_eq!(s.last_activity(), Some(at(HOUR)));
        s.newest_message = MessageClock::At(at(-HOUR));
        assert_eq!(s.last_activity(), Some(at(0)));
        s.newest_message = MessageClock::Unreadable;
        assert_eq!(s.last_activity(), None);
        assert_eq!(at(HOUR).since(at(0)), Duration::from_secs(3600));
        assert_eq!(at(0).since(at(HOUR)), Duration::ZERO);
        assert_eq!(
            at(i128::MAX).since(at(i128::MIN)),
            Duration::from_nanos(u64::MAX)
        );
        assert_eq!(at(i128::MIN).since(at(i128::MAX)), Duration::ZERO);
        assert_eq!(at(7).since(at(6)), Duration::from_nanos(1));
    }

    #[test]
    fn system_time_conversion_keeps_nanoseconds() {
        let t = UNIX_EPOCH + Duration::new(5, 7);
        assert_eq!(UnixNanos::from_system_time(t), at(5_000_000_007));
        if let Some(before) = UNIX_EPOCH.checked_sub(Duration::new(1, 1)) {
            assert_eq!(UnixNanos::from_system_time(before), at(-1_000_000_001));
        }
    }

    #[test]
    fn scenario_58_reported_once_per_episode_then_again_after_new_activity() {
        let mut tracker = EpisodeTracker::new();
        let sessions = [session("s1", 0)];
        let now = at(2 * HOUR + MINUTE);
        let eval = evaluate_task(&sessions, T, now);
        assert_eq!(eval.verdict, TaskVerdict::Evaluated);
        assert_eq!(indices(&eval.stalled), vec![0]);
        assert_eq!(
            eval.stalled.first().map(|s| s.silence),
            Some(Duration::from_secs(2 * 3600 + 60))
        );
        let reports = tracker.observe("task", &sessions, &eval);
        assert_eq!(
            reports,
            vec![StallReport {
                index: 0,
                session_id: "s1".into(),
                silence: Duration::from_secs(7260)
            }]
        );
        assert!(tracker.is_reported("task", "s1"));
        // Next sweep, same episode: nothing.
        let eval = evaluate_task(&sessions, T, at(2 * HOUR + 6 * MINUTE));
        assert!(tracker.observe("task", &sessions, &eval).is_empty());
        // New activity at 3h, another 2h01m of silence: reported again, even without a sweep in
        // between that saw the session active.
        let sessions = [session("s1", 3 * HOUR)];
        let eval = evaluate_task(&sessions, T, at(5 * HOUR + MINUTE));
        assert_eq!(tracker.observe("task", &sessions, &eval).len(), 1);
    }

    #[test]
    fn new_activity_seen_by_a_sweep_ends_the_episode() {
        let mut tracker = EpisodeTracker::new();
        let stale = [session("s1", 0)];
        let eval = evaluate_task(&stale, T, at(3 * HOUR));
        assert_eq!(tracker.observe("task", &stale, &eval).len(), 1);
        // A message arrives: the session is not silent any more.
        let mut active = session("s1", 0);
        active.newest_message = MessageClock::At(at(3 * HOUR));
        let eval = evaluate_task(&[active], T, at(3 * HOUR + MINUTE));
        assert!(eval.stalled.is_empty());
        assert!(tracker.observe("task", &[active], &eval).is_empty());
        assert!(!tracker.is_reported("task", "s1"));
        assert_eq!(tracker, EpisodeTracker::new());
        let eval = evaluate_task(&[active], T, at(5 * HOUR + MINUTE));
        assert_eq!(tracker.observe("task", &[active], &eval).len(), 1);
    }

    #[test]
    fn live_execution_and_terminal_state_end_the_episode() {
        let mut tracker = EpisodeTracker::new();
        let sessions = [session("s1", 0)];
        let now = at(3 * HOUR);
        let eval = evaluate_task(&sessions, T, now);
        assert_eq!(tracker.observe("task", &sessions, &eval).len(), 1);
        let mut live = session("s1", 0);
        live.execution = Execution::Live;
        let eval = evaluate_task(&[live], T, now);
        assert!(eval.stalled.is_empty());
        tracker.observe("task", &[live], &eval);
        assert!(!tracker.is_reported("task", "s1"));
        // Execution gone again: a new episode, reported again.
        let eval = evaluate_task(&sessions, T, now);
        assert_eq!(tracker.observe("task", &sessions, &eval).len(), 1);
        let mut done = session("s1", 0);
        done.state = SessionState::Completed;
        let eval = evaluate_task(&[done], T, now);
        assert!(eval.stalled.is_empty());
        tracker.observe("task", &[done], &eval);
        assert!(!tracker.is_reported("task", "s1"));
    }

    #[test]
    fn only_active_execution_less_sessions_past_the_threshold_stall() {
        let now = at(3 * HOUR);
        let mut idle = session("idle", 0);
        idle.state = SessionState::Idle;
        let mut other = session("other", 0);
        other.state = SessionState::Other;
        let mut cancelled = session("cancelled", 0);
        cancelled.state = SessionState::Cancelled;
        let mut live = session("live", 0);
        live.execution = Execution::Live;
        let exactly = session("exactly", HOUR); // silence == threshold: not stalled
        let mut states = vec![];
        for state in [
            SessionState::Created,
            SessionState::Starting,
            SessionState::Running,
            SessionState::WaitingForInput,
        ] {
            let mut s = session("x", 0);
            s.state = state;
            states.push(s);
        }
        let sessions = [idle, other, cancelled, live, exactly];
        let eval = evaluate_task(&sessions, T, now);
        assert!(eval.stalled.is_empty());
        let eval = evaluate_task(&states, T, now);
        assert_eq!(indices(&eval.stalled), vec![0, 1, 2, 3]);
        // One nanosecond past the threshold is stalled.
        let s = [session("s", 0)];
        let eval = evaluate_task(&s, T, at(2 * HOUR + 1));
        assert_eq!(indices(&eval.stalled), vec![0]);
    }

    #[test]
    fn clock_skew_is_silence_zero() {
        let sessions = [session("s", 10 * HOUR)];
        let eval = evaluate_task(&sessions, T, at(0));
        assert_eq!(eval.verdict, TaskVerdict::Evaluated);
        assert!(eval.stalled.is_empty() && eval.heal.is_empty());
    }

    #[test]
    fn scenario_59_heal_all_orphaned_or_nothing() {
        let sessions = [session("a", 0), session("b", 0)];
        let now = at(4 * HOUR + MINUTE);
        let eval = evaluate_task(&sessions, T, now);
        assert_eq!(indices(&eval.heal), vec![0, 1]);
        assert_eq!(eval.heal_reason, HealReason::AllActiveOrphaned);
        let targets = HealTarget::from_evaluation(&sessions, &eval);
        assert_eq!(
            targets
                .iter()
                .map(|t| t.session_id.as_str())
                .collect::<Vec<_>>(),
            vec!["a", "b"]
        );
        // One with a live execution: nothing is cancelled (the other is still reported stalled).
        let mut live = session("b", 0);
        live.execution = Execution::Live;
        let sessions = [session("a", 0), live];
        let eval = evaluate_task(&sessions, T, now);
        assert!(eval.heal.is_empty());
        assert_eq!(eval.heal_reason, HealReason::ActiveSessionLive);
        assert_eq!(indices(&eval.stalled), vec![0]);
    }

    #[test]
    fn heal_needs_every_active_session_silent_twice_the_threshold() {
        let now = at(4 * HOUR + MINUTE);
        // b is stalled but only 2h01m silent.
        let sessions = [session("a", 0), session("b", 2 * HOUR)];
        let eval = evaluate_task(&sessions, T, now);
        assert_eq!(indices(&eval.stalled), vec![0, 1]);
        assert!(eval.heal.is_empty());
        assert_eq!(eval.heal_reason, HealReason::ActiveSessionNotSilentEnough);
        // Exactly 2 × threshold heals (≥).
        let sessions = [session("a", 0)];
        assert_eq!(
            indices(&evaluate_task(&sessions, T, at(4 * HOUR)).heal),
            vec![0]
        );
        assert!(evaluate_task(&sessions, T, at(4 * HOUR - 1))
            .heal
            .is_empty());
        // Terminal and idle sessions do not block healing and are never in the plan.
        let mut done = session("done", 0);
        done.state = SessionState::Completed;
        let mut idle = session("idle", 0);
        idle.state = SessionState::Idle;
        idle.execution = Execution::Live;
        let sessions = [done, session("a", 0), idle];
        let eval = evaluate_task(&sessions, T, now);
        assert_eq!(indices(&eval.heal), vec![1]);
        // No active session at all.
        let eval = evaluate_task(&[done], T, now);
        assert!(eval.heal.is_empty());
        assert_eq!(eval.heal_reason, HealReason::NoActiveSession);
        let eval = evaluate_task(&[], T, now);
        assert_eq!(eval.heal_reason, HealReason::NoActiveSession);
    }

    #[test]
    fn zero_threshold_never_heals_a_just_active_session() {
        let sessions = [session("a", 5)];
        let eval = evaluate_task(&sessions, Duration::ZERO, at(5));
        assert!(eval.stalled.is_empty() && eval.heal.is_empty());
        let huge = Duration::MAX;
        let eval = evaluate_task(&sessions, huge, at(i128::MAX));
        assert!(eval.stalled.is_empty() && eval.heal.is_empty());
    }

    #[test]
    fn scenario_60_unreadable_clock_blocks_report_and_heal_for_the_task() {
        let mut tracker = EpisodeTracker::new();
        let mut unreadable = session("b", 0);
        unreadable.newest_message = MessageClock::Unreadable;
        let sessions = [session("a", 0), unreadable];
        let eval = evaluate_task(&sessions, T, at(5 * HOUR));
        assert_eq!(eval.verdict, TaskVerdict::UnreadableClock);
        assert!(eval.stalled.is_empty() && eval.heal.is_empty());
        assert!(tracker.observe("task", &sessions, &eval).is_empty());
        assert_eq!(tracker, EpisodeTracker::new());
        // Even an unreadable clock on a terminal session blocks the task (fail safe).
        let mut done = unreadable;
        done.state = SessionState::Completed;
        let eval = evaluate_task(&[session("a", 0), done], T, at(5 * HOUR));
        assert_eq!(eval.verdict, TaskVerdict::UnreadableClock);
    }

    #[test]
    fn unreadable_evaluation_keeps_the_open_episode() {
        let mut tracker = EpisodeTracker::new();
        let sessions = [session("a", 0)];
        let eval = evaluate_task(&sessions, T, at(3 * HOUR));
        assert_eq!(tracker.observe("task", &sessions, &eval).len(), 1);
        let mut unreadable = session("a", 0);
        unreadable.newest_message = MessageClock::Unreadable;
        let eval = evaluate_task(&[unreadable], T, at(3 * HOUR));
        tracker.observe("task", &[unreadable], &eval);
        assert!(tracker.is_reported("task", "a"));
        // The clock reads again, same episode: not re-reported.
        let eval = evaluate_task(&sessions, T, at(3 * HOUR + MINUTE));
        assert!(tracker.observe("task", &sessions, &eval).is_empty());
    }

    #[test]
    fn unverifiable_registry_does_nothing() {
        let mut unknown = session("b", 0);
        unknown.execution = Execution::Unverifiable;
        let sessions = [session("a", 0), unknown];
        let eval = evaluate_task(&sessions, T, at(5 * HOUR));
        assert_eq!(eval.verdict, TaskVerdict::UnverifiableRegistry);
        assert!(eval.stalled.is_empty() && eval.heal.is_empty());
        assert_eq!(eval.heal_reason, HealReason::NotEvaluated);
        let mut tracker = EpisodeTracker::new();
        assert!(tracker.observe("task", &sessions, &eval).is_empty());
    }

    #[test]
    fn reports_only_new_episodes_when_another_session_stalls() {
        let mut tracker = EpisodeTracker::new();
        let now = at(3 * HOUR);
        let sessions = [session("a", 0), session("b", 2 * HOUR)];
        let eval = evaluate_task(&sessions, T, now);
        let reports = tracker.observe("task", &sessions, &eval);
        assert_eq!(reports.len(), 1);
        assert_eq!(reports.first().map(|r| r.session_id.as_str()), Some("a"));
        let eval = evaluate_task(&sessions, T, at(4 * HOUR + MINUTE));
        let reports = tracker.observe("task", &sessions, &eval);
        assert_eq!(reports.iter().map(|r| r.index).collect::<Vec<_>>(), vec![1]);
        // Episodes are per task: the same session id under another task is separate.
        assert_eq!(tracker.observe("other", &sessions, &eval).len(), 2);
    }

    #[test]
    fn tracker_maintenance() {
        let mut tracker = EpisodeTracker::new();
        let sessions = [session("a", 0), session("b", 0)];
        let eval = evaluate_task(&sessions, T, at(5 * HOUR));
        tracker.observe("t1", &sessions, &eval);
        tracker.observe("t2", &sessions, &eval);
        tracker.end_episode("t1", "a");
        assert!(!tracker.is_reported("t1", "a") && tracker.is_reported("t1", "b"));
        tracker.end_episode("t1", "b");
        tracker.end_episode("missing", "b");
        assert!(!tracker.is_reported("t1", "b"));
        tracker.retain_tasks(|task| task != "t2");
        assert_eq!(tracker, EpisodeTracker::new());
    }

    #[test]
    fn confirm_cancel_rechecks_fresh_facts() {
        let target = HealTarget {
            session_id: "a".into(),
            last_activity: at(0),
        };
        let fresh = session("a", 0);
        assert_eq!(
            confirm_cancel(&target, &fresh),
            (true, CancelReason::StillOrphaned)
        );
        assert_eq!(
            confirm_cancel(&target, &session("z", 0)),
            (false, CancelReason::NotClassified)
        );
        for execution in [Execution::Live, Execution::Unverifiable] {
            let mut gained = fresh;
            gained.execution = execution;
            assert_eq!(
                confirm_cancel(&target, &gained),
                (false, CancelReason::ExecutionAppeared)
            );
        }
        let mut done = fresh;
        done.state = SessionState::Cancelled;
        assert_eq!(
            confirm_cancel(&target, &done),
            (false, CancelReason::NoLongerActive)
        );
        let mut newer = fresh;
        newer.newest_message = MessageClock::At(at(1));
        assert_eq!(
            confirm_cancel(&target, &newer),
            (false, CancelReason::ActivityChanged)
        );
        let mut unreadable = fresh;
        unreadable.newest_message = MessageClock::Unreadable;
        assert_eq!(
            confirm_cancel(&target, &unreadable),
            (false, CancelReason::ActivityChanged)
        );
    }

    #[test]
    fn execution_registered_during_the_sweep_is_never_cancelled() {
        let sessions = [session("a", 0), session("b", 0)];
        let eval = evaluate_task(&sessions, T, at(5 * HOUR));
        let targets = HealTarget::from_evaluation(&sessions, &eval);
        let mut b_now = session("b", 0);
        b_now.execution = Execution::Live;
        let fresh = [session("a", 0), b_now];
        let decisions: Vec<bool> = targets
            .iter()
            .zip(&fresh)
            .map(|(target, fresh)| confirm_cancel(target, fresh).0)
            .collect();
        assert_eq!(decisions, vec![true, false]);
        // The plan as a whole no longer holds: nothing is cancelled.
        assert_eq!(
            confirm_heal(&targets, &fresh),
            (
                vec![],
                HealCheckReason::TargetChanged(CancelReason::ExecutionAppeared)
            )
        );
    }

    #[test]
    fn confirm_heal_plan() {
        let sessions = [session("a", 0), session("b", 0)];
        let eval = evaluate_task(&sessions, T, at(5 * HOUR));
        let targets = HealTarget::from_evaluation(&sessions, &eval);
        assert_eq!(
            confirm_heal(&targets, &sessions),
            (vec![0, 1], HealCheckReason::PlanHolds)
        );
        // A session created during the sweep is outside the classified set.
        let fresh = [session("a", 0), session("b", 0), session("c", 5 * HOUR)];
        assert_eq!(
            confirm_heal(&targets, &fresh),
            (vec![], HealCheckReason::UnclassifiedActiveSession)
        );
        // A target that completed meanwhile is skipped; the rest still heals.
        let mut done = session("a", 0);
        done.state = SessionState::Completed;
        let fresh = [done, session("b", 0)];
        assert_eq!(
            confirm_heal(&targets, &fresh),
            (vec![1], HealCheckReason::PlanHolds)
        );
        let mut b_done = session("b", 0);
        b_done.state = SessionState::Cancelled;
        assert_eq!(
            confirm_heal(&targets, &[done, b_done]),
            (vec![], HealCheckReason::NothingLeft)
        );
        assert_eq!(
            confirm_heal(&[], &sessions),
            (vec![], HealCheckReason::UnclassifiedActiveSession)
        );
    }
}
