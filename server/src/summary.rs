//! Server-side status-summary repair (SPEC §7): a persisted summary whose `pending_action`
//! differs from the authoritative task action is repaired by compare-and-set (revision + 1, every
//! other field kept, one `task.status_summary.updated`), at most [`MAX_ATTEMPTS`] attempts with
//! 1 ms / 2 ms backoff; on exhaustion or write failure the task is answered with
//! `status_summary_invalidated: true` and no summary. A repeat of a correct repair writes and
//! publishes nothing.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use task_projection::rules::model::PendingAction;
use task_projection::wire::{self, Json, Path};

use super::clock::{wire_time, Clock};
use super::error::Result;
use super::events::{Event, EventSink, TASK_STATUS_SUMMARY_UPDATED};
use super::projection::{action_json, Projector};
use super::storage::SummaryRow;

/// Compare-and-set attempts per repair.
pub const MAX_ATTEMPTS: u32 = 3;
/// Backoff before the 2nd and 3rd attempts.
pub const BACKOFF: [Duration; 2] = [Duration::from_millis(1), Duration::from_millis(2)];

/// A test hook run before each compare-and-set attempt (attempt number from 1).
pub type BeforeWrite = Arc<dyn Fn(u32) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// What a repair did.
#[derive(Clone, Debug, PartialEq)]
pub enum RepairOutcome {
    /// The task has no persisted summary: nothing to repair.
    NoSummary,
    /// The summary already carries the authoritative action: nothing written or published.
    Unchanged(Value),
    /// The summary was rewritten (and `task.status_summary.updated` published).
    Repaired(Value),
    /// Every attempt lost its race, or a write failed: answer the task as invalidated.
    Invalidated { attempts: u32 },
}

/// The summary repairer.
#[derive(Clone)]
pub struct SummaryRepair {
    projector: Projector,
    events: Arc<dyn EventSink>,
    clock: Arc<dyn Clock>,
    before_write: Option<BeforeWrite>,
}

/// The `pending_action` a stored summary carries: `Some(action)` when readable (omitted = clean),
/// `None` when the stored object does not decode (it is then repaired like a stale one).
fn stored_action(summary: &Value) -> Option<Option<PendingAction>> {
    wire::summary(&Json::new(summary), &Path::Root("status_summary"))
        .ok()
        .flatten()
        .map(|s| s.pending_action)
}

/// The summary with only `pending_action`, `revision` and `updated_at` replaced.
fn with_action(summary: &Value, action: Option<PendingAction>, revision: i64, now: &str) -> Value {
    let mut object = match summary {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    match action {
        Some(_) => {
            object.insert("pending_action".into(), action_json(action));
        }
        None => {
            object.remove("pending_action");
        }
    }
    object.insert("revision".into(), Value::from(revision));
    object.insert("updated_at".into(), Value::from(now));
    Value::Object(object)
}

impl SummaryRepair {
    pub fn new(projector: Projector, events: Arc<dyn EventSink>, clock: Arc<dyn Clock>) -> Self {
        SummaryRepair {
            projector,
            events,
            clock,
            before_write: None,
        }
    }

    /// Installs a hook run before each compare-and-set (tests: lose races on purpose).
    pub fn with_before_write(mut self, hook: BeforeWrite) -> Self {
        self.before_write = Some(hook);
        self
    }

    /// Repairs the task's summary against its authoritative action. A projection (read) failure
    /// is an error: nothing is repaired or invalidated on a guess.
    pub async fn repair(&self, task_id: &str) -> Result<RepairOutcome> {
        let mut attempt: u32 = 0;
        loop {
            attempt = attempt.saturating_add(1);
            // Re-derive the authority on every attempt (a racing projector may have moved it),
            // read no earlier than the summary it is compared with.
            let Some((row, action)) = self.projector.summary_with_action(task_id).await? else {
                return Ok(RepairOutcome::NoSummary);
            };
            if stored_action(&row.summary) == Some(action) {
                return Ok(RepairOutcome::Unchanged(row.summary));
            }
            if let Some(hook) = &self.before_write {
                hook(attempt).await;
            }
            match self.write(&row, action).await {
                Ok(Some((summary, workspace_id))) => {
                    self.publish(task_id, workspace_id, &summary);
                    return Ok(RepairOutcome::Repaired(summary));
                }
                Ok(None) => {
                    tracing::debug!(task_id, attempt, "summary compare-and-set lost; reloading");
                }
                Err(error) => {
                    tracing::warn!(task_id, attempt, %error, "summary repair write failed; invalidating");
                    return Ok(RepairOutcome::Invalidated { attempts: attempt });
                }
            }
            let Some(delay) = usize::try_from(attempt)
                .ok()
                .and_then(|a| a.checked_sub(1))
                .and_then(|i| BACKOFF.get(i))
                .filter(|_| attempt < MAX_ATTEMPTS)
            else {
                tracing::warn!(
                    task_id,
                    attempts = attempt,
                    last_revision = row.revision,
                    "summary repair exhausted its compare-and-set budget; invalidating"
                );
                return Ok(RepairOutcome::Invalidated { attempts: attempt });
            };
            tokio::time::sleep(*delay).await;
        }
    }

    /// One compare-and-set: `Some(new summary, the task's workspace id)` when it won, `None`
    /// when it lost.
    async fn write(
        &self,
        row: &SummaryRow,
        action: Option<PendingAction>,
    ) -> Result<Option<(Value, Option<String>)>> {
        let Some(revision) = row.revision.checked_add(1) else {
            return Ok(None);
        };
        let now = wire_time(self.clock.now());
        let summary = with_action(&row.summary, action, revision, &now);
        let won = self
            .projector
            .storage()
            .cas_summary_returning(&row.task_id, row.revision, revision, &summary, &now)
            .await?;
        Ok(won.map(|workspace_id| (summary, workspace_id)))
    }

    fn publish(&self, task_id: &str, workspace_id: Option<String>, summary: &Value) {
        let workspace_id = workspace_id.unwrap_or_else(|| {
            tracing::warn!(
                task_id,
                "summary event without workspace id: the task row is gone"
            );
            String::new()
        });
        let event = Event {
            name: TASK_STATUS_SUMMARY_UPDATED,
            payload: json!({
                "task_id": task_id,
                "workspace_id": workspace_id,
                "status_summary": summary,
            }),
        };
        if let Err(error) = self.events.publish(event) {
            // The repair is durable; other clients converge on their next event or read.
            tracing::warn!(task_id, %error, "summary event publication failed");
        }
    }

    /// The task as task-list and boot reads return it: the repaired summary, or
    /// `status_summary_invalidated: true` and no summary when the repair could not be persisted;
    /// plus the legacy `task_pending_action` from the authoritative projection.
    pub async fn task_answer(&self, task_id: &str) -> Result<Value> {
        let task = self.projector.storage().task(task_id).await?;
        let outcome = self.repair(task_id).await?;
        let action = self.projector.task_action(task_id).await?;
        let mut object = Map::new();
        object.insert("id".into(), Value::from(task.id));
        object.insert("workspace_id".into(), Value::from(task.workspace_id));
        object.insert("task_pending_action".into(), action_json(action));
        match outcome {
            RepairOutcome::NoSummary => {}
            RepairOutcome::Unchanged(summary) | RepairOutcome::Repaired(summary) => {
                object.insert("status_summary".into(), summary);
            }
            RepairOutcome::Invalidated { .. } => {
                object.insert("status_summary_invalidated".into(), Value::Bool(true));
            }
        }
        Ok(Value::Object(object))
    }
}
