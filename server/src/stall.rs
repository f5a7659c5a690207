//! Stall detection and orphan healing (SPEC §9): a sweep over unarchived tasks.
//!
//! The service reads the facts (session rows, newest persisted message time, the execution
//! registry, an injectable clock) and the rules decide: [`evaluate_task`] classifies,
//! [`EpisodeTracker`] reports once per episode, [`confirm_heal`] re-checks the heal plan against
//! fresh facts, and each cancel is a compare-and-set on the session version preceded by one more
//! live-execution check ([`confirm_cancel`]). An unverifiable registry anywhere makes the whole
//! sweep do nothing (facts are gathered for every task before anything is reported or healed);
//! an unreadable activity clock skips that task for this sweep.
//!
//! An execution that registers must touch its session row (any write bumps the version), so a
//! registration racing the final compare-and-set makes it fail: a session that gained a live
//! execution during the sweep is never cancelled.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::Mutex;

use task_projection::rules::stall::{
    confirm_cancel, confirm_heal, evaluate_task, EpisodeTracker, Execution, HealTarget,
    MessageClock, SessionActivity, StallReport, TaskEvaluation, TaskVerdict, UnixNanos,
    DEFAULT_STALL_THRESHOLD, ORPHANED_SESSION_REASON,
};

use super::clock::{parse_wire_time, unix_nanos, wire_time, Clock};
use super::error::Result;
use super::events::{Event, EventSink, SESSION_STATE_CHANGED, TASK_STALLED};
use super::storage::{SessionRow, StateChange, Storage, TaskRow};

/// The backend's in-memory execution store, as the sweep sees it.
pub trait ExecutionRegistry: Send + Sync {
    /// `Live`, `Absent`, or `Unverifiable` when the registry cannot answer.
    fn execution(&self, session_id: &str) -> Execution;
}

/// A synchronous test hook (task id or session id).
pub type Hook = Arc<dyn Fn(&str) + Send + Sync>;

/// What one sweep did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// The registry could not be verified: nothing was reported or healed.
    pub registry_unverifiable: bool,
    /// `task.stalled` reports, per task.
    pub stalled: Vec<(String, Vec<StallReport>)>,
    /// Tasks skipped because an activity clock was unreadable.
    pub unreadable: Vec<String>,
    /// Sessions cancelled as orphaned.
    pub cancelled: Vec<String>,
}

/// The facts of one session, owned (the rules borrow them as [`SessionActivity`]).
#[derive(Clone, Debug)]
struct Facts {
    row: SessionRow,
    row_updated_at: UnixNanos,
    newest_message: MessageClock,
    execution: Execution,
}

impl Facts {
    fn activity(&self) -> SessionActivity<'_> {
        SessionActivity {
            id: &self.row.id,
            state: self.row.state(),
            row_updated_at: self.row_updated_at,
            newest_message: self.newest_message,
            execution: self.execution,
        }
    }
}

fn activities(facts: &[Facts]) -> Vec<SessionActivity<'_>> {
    facts.iter().map(Facts::activity).collect()
}

/// The stall sweeper. Keep one per process: it holds the episode memory.
pub struct StallService<X> {
    storage: Storage,
    registry: Arc<X>,
    clock: Arc<dyn Clock>,
    events: Arc<dyn EventSink>,
    threshold: Duration,
    tracker: Mutex<EpisodeTracker>,
    after_classify: Option<Hook>,
    before_cancel: Option<Hook>,
}

impl<X: ExecutionRegistry> StallService<X> {
    pub fn new(
        storage: Storage,
        registry: Arc<X>,
        clock: Arc<dyn Clock>,
        events: Arc<dyn EventSink>,
    ) -> Self {
        StallService {
            storage,
            registry,
            clock,
            events,
            threshold: DEFAULT_STALL_THRESHOLD,
            tracker: Mutex::new(EpisodeTracker::new()),
            after_classify: None,
            before_cancel: None,
        }
    }

    pub fn with_threshold(mut self, threshold: Duration) -> Self {
        self.threshold = threshold;
        self
    }

    /// Test hook: runs after a task was classified, before its heal re-check.
    pub fn with_after_classify(mut self, hook: Hook) -> Self {
        self.after_classify = Some(hook);
        self
    }

    /// Test hook: runs right before a session's cancel-time execution check.
    pub fn with_before_cancel(mut self, hook: Hook) -> Self {
        self.before_cancel = Some(hook);
        self
    }

    /// The newest persisted message time of a session; unreadable on a read failure or a
    /// timestamp that does not parse.
    async fn message_clock(&self, session_id: &str) -> MessageClock {
        let times = match self.storage.message_times_of_session(session_id).await {
            Ok(times) => times,
            Err(error) => {
                tracing::warn!(session_id, %error, "activity clock unreadable");
                return MessageClock::Unreadable;
            }
        };
        let mut newest: Option<UnixNanos> = None;
        for text in &times {
            let Some(at) = parse_wire_time(text).map(unix_nanos) else {
                return MessageClock::Unreadable;
            };
            newest = Some(newest.map_or(at, |held| held.max(at)));
        }
        newest.map_or(MessageClock::NoMessages, MessageClock::At)
    }

    async fn facts(&self, task_id: &str) -> Result<Vec<Facts>> {
        let mut facts = Vec::new();
        for row in self.storage.sessions_of_task(task_id).await? {
            let (row_updated_at, newest_message) = match parse_wire_time(&row.updated_at) {
                Some(at) => (unix_nanos(at), self.message_clock(&row.id).await),
                // An unreadable row clock makes the whole activity clock unreadable.
                None => (UnixNanos::default(), MessageClock::Unreadable),
            };
            let execution = self.registry.execution(&row.id);
            facts.push(Facts {
                row,
                row_updated_at,
                newest_message,
                execution,
            });
        }
        Ok(facts)
    }

    /// One sweep over the unarchived tasks.
    pub async fn sweep(&self) -> Result<SweepReport> {
        let now = unix_nanos(self.clock.now());
        let tasks = self.storage.unarchived_tasks().await?;
        // Phase 1: classify every task; an unverifiable registry anywhere stops the sweep.
        let mut classified: Vec<(TaskRow, Vec<Facts>, TaskEvaluation)> = Vec::new();
        for task in tasks {
            let facts = self.facts(&task.id).await?;
            let evaluation = evaluate_task(&activities(&facts), self.threshold, now);
            if evaluation.verdict == TaskVerdict::UnverifiableRegistry {
                tracing::warn!(task_id = %task.id, "execution registry unverifiable: sweep skipped");
                return Ok(SweepReport {
                    registry_unverifiable: true,
                    ..SweepReport::default()
                });
            }
            classified.push((task, facts, evaluation));
        }
        // Phase 2: report and heal.
        let mut report = SweepReport::default();
        let mut tracker = self.tracker.lock().await;
        for (task, facts, evaluation) in &classified {
            if evaluation.verdict == TaskVerdict::UnreadableClock {
                tracing::warn!(task_id = %task.id, "activity clock unreadable: no stall report or heal");
                report.unreadable.push(task.id.clone());
                continue;
            }
            let sessions = activities(facts);
            let reports = tracker.observe(&task.id, &sessions, evaluation);
            if !reports.is_empty() {
                self.publish_stalled(task, &reports);
                report.stalled.push((task.id.clone(), reports));
            }
            let targets = HealTarget::from_evaluation(&sessions, evaluation);
            if targets.is_empty() {
                continue;
            }
            if let Some(hook) = &self.after_classify {
                hook(&task.id);
            }
            for session_id in self.heal(task, &targets).await? {
                tracker.end_episode(&task.id, &session_id);
                report.cancelled.push(session_id);
            }
        }
        tracker.retain_tasks(|id| classified.iter().any(|(task, _, _)| task.id == id));
        Ok(report)
    }

    fn publish_stalled(&self, task: &TaskRow, reports: &[StallReport]) {
        let sessions: Vec<Value> = reports
            .iter()
            .map(|r| {
                tracing::warn!(
                    task_id = %task.id,
                    session_id = %r.session_id,
                    silence_seconds = r.silence.as_secs(),
                    "session stalled: active, no live execution, silent past the threshold"
                );
                json!({ "session_id": r.session_id, "silence_seconds": r.silence.as_secs() })
            })
            .collect();
        let event = Event {
            name: TASK_STALLED,
            payload: json!({
                "task_id": task.id,
                "workspace_id": task.workspace_id,
                "sessions": sessions,
                "threshold_seconds": self.threshold.as_secs(),
            }),
        };
        if let Err(error) = self.events.publish(event) {
            tracing::warn!(task_id = %task.id, %error, "task.stalled publication failed");
        }
    }

    /// Heals one task: re-reads its facts, re-checks the plan as a whole, then cancels each
    /// confirmed session by compare-and-set after one more live-execution check.
    async fn heal(&self, task: &TaskRow, targets: &[HealTarget]) -> Result<Vec<String>> {
        let fresh = self.facts(&task.id).await?;
        let (indices, reason) = confirm_heal(targets, &activities(&fresh));
        if indices.is_empty() {
            tracing::info!(task_id = %task.id, ?reason, "orphan heal abandoned at re-check");
            return Ok(Vec::new());
        }
        let mut cancelled = Vec::new();
        for index in indices {
            let Some(facts) = fresh.get(index) else {
                continue;
            };
            let Some(target) = targets.iter().find(|t| t.session_id == facts.row.id) else {
                continue;
            };
            if let Some(hook) = &self.before_cancel {
                hook(&facts.row.id);
            }
            // The cancel-time re-check: the registry again, then the row version.
            let mut now_facts = facts.clone();
            now_facts.execution = self.registry.execution(&facts.row.id);
            let (confirmed, why) = confirm_cancel(target, &now_facts.activity());
            if !confirmed {
                tracing::info!(session_id = %facts.row.id, ?why, "orphan cancel skipped");
                continue;
            }
            let now = wire_time(self.clock.now());
            let change = StateChange {
                state: "CANCELLED",
                updated_at: &now,
                completed_at: Some(&now),
                reason: Some(ORPHANED_SESSION_REASON),
            };
            if !self
                .storage
                .cas_session_state(&facts.row.id, facts.row.version, &change)
                .await?
            {
                tracing::info!(session_id = %facts.row.id, "orphan cancel lost its compare-and-set");
                continue;
            }
            tracing::warn!(task_id = %task.id, session_id = %facts.row.id, "cancelled orphaned session");
            let event = Event {
                name: SESSION_STATE_CHANGED,
                payload: json!({
                    "session_id": facts.row.id,
                    "task_id": task.id,
                    "workspace_id": task.workspace_id,
                    "state": "CANCELLED",
                    "previous_state": facts.row.state_text,
                    "reason": ORPHANED_SESSION_REASON,
                    "updated_at": now,
                }),
            };
            if let Err(error) = self.events.publish(event) {
                tracing::warn!(session_id = %facts.row.id, %error, "state change publication failed");
            }
            cancelled.push(facts.row.id.clone());
        }
        Ok(cancelled)
    }
}
