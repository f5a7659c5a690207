//! The server's shared state: storage, the WebSocket hub, the simulated agent, and the services of
//! the current start ([`Core`]), which a simulated restart replaces as a whole. It imports
//! [`config`](super::config), [`hub`](super::hub) and the agent runtime
//! ([`agent`](super::agent)), nothing that imports it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::{OwnedMutexGuard, RwLock, RwLockReadGuard};
use tokio::task::JoinHandle;

use crate::clock::{wire_time, Clock};
use crate::error::ServerError;
use crate::events::{Event, EventSink, PublishError, SESSION_STATE_CHANGED};
use crate::outbox::{self, OutboxWriter};
use crate::projection::{action_json, revision_json, Projector};
use crate::respond::{IntentReconciliation, RespondService};
use crate::revision::RevisionClock;
use crate::stall::{StallService, SweepReport};
use crate::storage::Storage;
use crate::summary::SummaryRepair;
use crate::{Backend, Db};

use super::agent::SimAgent;
use super::config::{Config, StartError};
use super::hub::Hub;

/// How often an instance deletes the outbox rows older than the retention.
const OUTBOX_PRUNE_EVERY: Duration = Duration::from_secs(60);

/// The services of one start: they share its revision clock (epoch).
pub struct Core {
    pub projector: Projector,
    pub summaries: SummaryRepair,
    pub respond: RespondService<SimAgent, SimAgent>,
    pub stall: StallService<SimAgent>,
    stall_sink: Arc<HeldStateChanges>,
}

/// The sink of the stall service: `task.stalled` goes straight to the hub; the
/// `session.state_changed` of a heal is held until the sweep ends, then published with the
/// session's projection keys (a cancelled session's projection is clean, and a client that held
/// another action must learn it).
struct HeldStateChanges {
    events: Arc<dyn EventSink>,
    held: Mutex<Vec<Event>>,
}

impl EventSink for HeldStateChanges {
    fn publish(&self, event: Event) -> Result<(), PublishError> {
        if event.name == SESSION_STATE_CHANGED {
            self.held
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(event);
            Ok(())
        } else {
            self.events.publish(event)
        }
    }
}

impl Core {
    fn new(
        db: &Db,
        clock: RevisionClock,
        events: &Arc<dyn EventSink>,
        agent: &Arc<SimAgent>,
        wall: &Arc<dyn Clock>,
        stall_threshold: Duration,
    ) -> Core {
        let storage = Storage::new(db.clone());
        let projector = Projector::new(storage.clone(), clock);
        let summaries = SummaryRepair::new(projector.clone(), events.clone(), wall.clone());
        let respond = RespondService::new(
            projector.clone(),
            agent.clone(),
            agent.clone(),
            events.clone(),
            wall.clone(),
        )
        .with_summary_repair(summaries.clone());
        let stall_sink = Arc::new(HeldStateChanges {
            events: events.clone(),
            held: Mutex::new(Vec::new()),
        });
        let stall = StallService::new(storage, agent.clone(), wall.clone(), stall_sink.clone())
            .with_threshold(stall_threshold);
        Core {
            projector,
            summaries,
            respond,
            stall,
            stall_sink,
        }
    }

    /// This start's revision epoch.
    pub fn epoch(&self) -> &str {
        self.projector.clock().started_epoch()
    }
}

/// The application state shared by every handler.
pub struct App {
    pub db: Db,
    pub storage: Storage,
    pub clock: Arc<dyn Clock>,
    pub hub: Arc<Hub>,
    /// Where the services publish: the hub itself (SQLite) or the outbox (PostgreSQL), which
    /// every instance's hub follows.
    pub events: Arc<dyn EventSink>,
    /// The outbox writer, follower and pruner (PostgreSQL), stopped with the server.
    outbox: Option<OutboxTasks>,
    pub agent: Arc<SimAgent>,
    pub simulator: bool,
    stall_threshold: Duration,
    /// Handlers hold a read guard for their whole request; a restart takes the write guard, so
    /// no request straddles two starts.
    core: RwLock<Arc<Core>>,
    session_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// The background tasks of an instance on PostgreSQL.
struct OutboxTasks {
    writer: OutboxWriter,
    tasks: Vec<JoinHandle<()>>,
}

impl App {
    /// Allocates this start's epoch, reconciles outstanding delivery intents (before serving).
    pub async fn start(db: Db, config: &Config) -> Result<Arc<App>, StartError> {
        let revision_clock = RevisionClock::start(db.clone()).await?;
        let epoch = revision_clock.started_epoch().to_owned();
        let started_at = wire_time(config.clock.now());
        let (hub, events, outbox) = match db.backend() {
            Backend::Sqlite => {
                let hub = Arc::new(Hub::new(
                    config.ws_buffer,
                    config.ws_buffer_bytes,
                    &epoch,
                    &started_at,
                ));
                let events: Arc<dyn EventSink> = hub.clone();
                (hub, events, None)
            }
            Backend::Postgres => {
                let stream = outbox::stream_id(&db).await?;
                let latest = outbox::latest(&db).await?;
                let hub = Arc::new(Hub::following(
                    config.ws_buffer,
                    config.ws_buffer_bytes,
                    &epoch,
                    &started_at,
                    db.clone(),
                    stream,
                    latest,
                ));
                let (writer, write_task) = OutboxWriter::start(db.clone());
                let follower = {
                    let hub = hub.clone();
                    outbox::follow(db.clone(), db.url().to_owned(), latest, move |row| {
                        hub.deliver(row.offset, &row.name, &row.payload);
                    })
                };
                let pruner =
                    outbox::pruner(db.clone(), config.outbox_retention, OUTBOX_PRUNE_EVERY);
                let events: Arc<dyn EventSink> = Arc::new(writer.clone());
                let tasks = OutboxTasks {
                    writer,
                    tasks: vec![write_task, follower, pruner],
                };
                (hub, events, Some(tasks))
            }
        };
        let agent = Arc::new(SimAgent::default());
        let core = Core::new(
            &db,
            revision_clock,
            &events,
            &agent,
            &config.clock,
            config.stall_threshold,
        );
        let reconciled = core.respond.reconcile_intents().await?;
        if !reconciled.is_empty() {
            tracing::info!(count = reconciled.len(), "startup reconciliation done");
        }
        Ok(Arc::new(App {
            storage: Storage::new(db.clone()),
            db,
            clock: config.clock.clone(),
            hub,
            events,
            outbox,
            agent,
            simulator: config.simulator,
            stall_threshold: config.stall_threshold,
            core: RwLock::new(Arc::new(core)),
            session_locks: Mutex::new(HashMap::new()),
        }))
    }

    /// The services of the current start (hold the guard for the whole request).
    pub async fn core(&self) -> RwLockReadGuard<'_, Arc<Core>> {
        self.core.read().await
    }

    /// Serializes the requests that write a session (simulator calls, respond): each reserves
    /// its revisions after its writes and publishes in that order, so a session's events reach
    /// clients in revision order and a `session.state_changed` is never older than an event
    /// the client already applied (the store drops the state of an older one).
    pub async fn lock_session(&self, session_id: &str) -> OwnedMutexGuard<()> {
        let lock = {
            let mut locks = self
                .session_locks
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            locks.retain(|_, lock| Arc::strong_count(lock) > 1);
            locks.entry(session_id.to_owned()).or_default().clone()
        };
        lock.lock_owned().await
    }

    pub fn now(&self) -> String {
        wire_time(self.clock.now())
    }

    /// Publishes an event to every socket (of every instance).
    pub fn publish(&self, name: &'static str, payload: Value) {
        if let Err(error) = self.events.publish(Event { name, payload }) {
            tracing::warn!(name, %error, "event publication failed");
        }
    }

    /// A simulated restart in process: waiters and executions are lost, a new revision epoch
    /// is allocated, outstanding delivery intents are reconciled, and every socket receives
    /// `server.hello` with the new epoch.
    pub async fn restart(&self) -> Result<(String, Vec<IntentReconciliation>), ServerError> {
        let mut core = self.core.write().await;
        self.agent.restart();
        let clock = RevisionClock::start(self.db.clone()).await?;
        let fresh = Core::new(
            &self.db,
            clock,
            &self.events,
            &self.agent,
            &self.clock,
            self.stall_threshold,
        );
        let epoch = fresh.epoch().to_owned();
        *core = Arc::new(fresh);
        let reconciled = core.respond.reconcile_intents().await?;
        drop(core);
        self.hub.hello(&epoch, &self.now());
        tracing::info!(%epoch, reconciled = reconciled.len(), "simulated restart");
        Ok((epoch, reconciled))
    }

    /// Waits until every event published before is on this instance's sockets (PostgreSQL: in
    /// the outbox and delivered by the follower; at most 5 s). The simulator's replay calls it,
    /// so a replayed frame comes after them (a test's marker).
    pub async fn settle(&self) {
        let Some(tasks) = &self.outbox else {
            return;
        };
        let settled = async {
            tasks.writer.flush().await;
            let Ok(latest) = outbox::latest(&self.db).await else {
                return;
            };
            while self.hub.latest() < latest {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        };
        if tokio::time::timeout(Duration::from_secs(5), settled)
            .await
            .is_err()
        {
            tracing::warn!("events not delivered within 5 s");
        }
    }

    /// The outbox writer (PostgreSQL).
    pub fn outbox_writer(&self) -> Option<&OutboxWriter> {
        self.outbox.as_ref().map(|o| &o.writer)
    }

    /// Writes what is still queued for the outbox and stops its tasks (shutdown).
    pub async fn stop_outbox(&self) {
        if let Some(outbox) = &self.outbox {
            let _ = tokio::time::timeout(Duration::from_secs(5), outbox.writer.flush()).await;
            for task in &outbox.tasks {
                task.abort();
            }
        }
    }

    /// One stall sweep; a healed session's state change is published with its projection and
    /// its task's summary is refreshed.
    pub async fn sweep(&self) -> Result<SweepReport, ServerError> {
        let core = self.core().await;
        let result = core.stall.sweep().await;
        let held: Vec<Event> = std::mem::take(
            &mut *core
                .stall_sink
                .held
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let mut tasks: Vec<String> = Vec::new();
        for event in held {
            let mut payload = event.payload;
            let session_id = payload
                .get("session_id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            if let Value::Object(map) = &mut payload {
                insert_projection(&core, &session_id, map).await;
                if let Some(task) = map.get("task_id").and_then(Value::as_str) {
                    if !tasks.iter().any(|t| t == task) {
                        tasks.push(task.to_owned());
                    }
                }
            }
            self.agent.detach(&session_id);
            self.publish(event.name, payload);
        }
        for task in tasks {
            if let Err(error) = core.summaries.repair(&task).await {
                tracing::warn!(task_id = %task, %error, "summary refresh after heal failed");
            }
        }
        result
    }
}

/// Adds the session's `pending_action` and `pending_action_revision` to an event payload; both
/// stay omitted when the projection fails (omitted = keep what you have).
pub async fn insert_projection(core: &Core, session_id: &str, map: &mut Map<String, Value>) {
    match core.projector.project_sessions(&[session_id]).await {
        Ok(projections) => {
            if let Some(p) = projections.first() {
                map.insert("pending_action".into(), action_json(p.pending_action));
                map.insert("pending_action_revision".into(), revision_json(&p.revision));
            }
        }
        Err(error) => {
            tracing::warn!(session_id, %error, "projection failed; event omits it");
        }
    }
}
