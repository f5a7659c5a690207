//! The reference server's HTTP and WebSocket adapter (docs/server-api.md is the contract).
//!
//! It decides nothing: REST answers are the services' ([`Projector::task_sessions`],
//! [`SummaryRepair::task_answer`], [`RespondService::respond`], storage reads), WebSocket frames
//! are the events the services publish (their names: [`crate::events`]), and the
//! simulator performs an agent's writes through the same storage and publishes the events a real
//! agent would cause.
//!
//! | module | what |
//! |---|---|
//! | [`error`] | the API's error answer (`ApiError`, `ApiResult`) and the reply helpers (`ok`, `done`, `one`) |
//! | [`wire`] | request bodies as JSON (`body_json`, `opt_str`, `opt_bool`) and the task as the task list returns it (`task_wire`) |
//! | [`guard`] | the request guard in front of every route: Host, access token, Origin, JSON-only writes, static roots, security headers |
//! | [`config`] | the command line ([`parse_args`], [`USAGE`]), [`Config`], [`StartError`] |
//! | [`hub`] | the WebSocket hub: one pre-serialized frame per event, `server.hello` first, bounded buffers |
//! | [`agent`] | the simulated agent's runtime ([`agent::SimAgent`]: waiters, resumes, executions), held by `app` |
//! | [`app`] | shared state: the services of the current start (swapped by a simulated restart) |
//! | [`sim`] | the simulator: its writes ([`sim::sessions`], [`sim::turns`], [`sim::questions`]), the demo data ([`sim::seed`]: `--seed-demo`, the simulator's `reset`), the simulator API ([`sim::routes`]) |
//! | [`actions`] | the user's actions: clarification respond (the `success` / `claimed` envelope), permission respond, session delete; each reply with the server's position after it |
//! | [`inbox`] | the needs-you inbox (`/api/v1/clarification-inbox`): list, hidden list, sidecar write and restore, boot seed; the requester cookie |
//! | [`routes`] | REST routes, the WebSocket upgrade, static files, the route table |
//! | `client` | feature `test-client`: a loopback HTTP/WebSocket client and a native-store mirror (tests, load benchmark) |
//!
//! Start it in process with [`serve`]; the `task-projection-server` binary is [`parse_args`] +
//! [`serve`] + a signal handler.
//!
//! # Dependency order
//!
//! No two modules import each other, directly or through others: each imports (`use`, or a path
//! in the code) only modules listed before it, leaves first, and none imports this file's items
//! or `sim`'s (`sim/mod.rs` only declares its modules). Every module's direct imports of
//! `http` follow the colon; the workspace's `tests/layout.rs` reads the sources and checks this
//! list (order, and each module's imports exactly as listed).
//!
//! 1. `error`: —
//! 2. `hub`: —
//! 3. `agent`: —
//! 4. `client`: — (feature `test-client`)
//! 5. `wire`: error
//! 6. `guard`: error
//! 7. `config`: guard
//! 8. `app`: config, hub, agent
//! 9. `sim::sessions`: error, wire, app
//! 10. `sim::turns`: error, app, sim::sessions
//! 11. `sim::questions`: error, agent, app, sim::sessions, sim::turns
//! 12. `sim::seed`: error, config, app, sim::sessions, sim::turns, sim::questions
//! 13. `sim::routes`: error, wire, hub, agent, app, sim::sessions, sim::turns, sim::questions, sim::seed
//! 14. `actions`: error, wire, app, sim::questions
//! 15. `inbox`: error, wire, app
//! 16. `routes`: error, wire, config, hub, app, actions, inbox, sim::routes
//!
//! This file (`http`) comes last: it starts the server ([`serve`], [`serve_db`], [`connect`])
//! and re-exports the configuration.
//!
//! [`Projector::task_sessions`]: crate::projection::Projector::task_sessions
//! [`SummaryRepair::task_answer`]: crate::summary::SummaryRepair::task_answer
//! [`RespondService::respond`]: crate::respond::RespondService::respond

pub mod actions;
pub mod agent;
pub mod app;
#[cfg(feature = "test-client")]
pub mod client;
pub mod config;
pub mod error;
pub mod guard;
pub mod hub;
pub mod inbox;
pub mod routes;
pub mod sim;
pub mod wire;

pub use config::{database_url, parse_args, Args, Config, StartError, ACCESS_TOKEN_ENV, USAGE};

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::Db;
use app::App;

/// How long startup waits for the database before giving up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// A URL without its password, for messages.
fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    match rest.split_once('@') {
        Some((user, host)) => {
            let user = user.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}@{host}")
        }
        None => url.to_owned(),
    }
}

/// Connects to the database (with a bounded wait), runs the migrations and fills the turns' order
/// keys ([`storage::connect`](crate::storage::connect)).
pub async fn connect(url: &str) -> Result<Db, StartError> {
    let failed = |detail: String| StartError::Database {
        url: redacted(url),
        detail,
    };
    // PostgreSQL: one direct connection first (the pool retries a refused connection until its
    // acquire timeout, a single connection fails at once with the real reason). SQLite opens
    // its one connection in `Db::connect` (and switches a file to WAL there).
    if !url.starts_with("sqlite:") {
        let probe = tokio::time::timeout(
            CONNECT_TIMEOUT,
            <sqlx::postgres::PgConnection as sqlx::Connection>::connect(url),
        )
        .await;
        match probe {
            Ok(Ok(conn)) => {
                let _ = sqlx::Connection::close(conn).await;
            }
            Ok(Err(error)) => return Err(failed(error.to_string())),
            Err(_) => {
                return Err(failed(format!(
                    "no answer within {} s",
                    CONNECT_TIMEOUT.as_secs()
                )))
            }
        }
    }
    match tokio::time::timeout(CONNECT_TIMEOUT, crate::storage::connect(url)).await {
        Ok(Ok(db)) => Ok(db),
        Ok(Err(error)) => Err(failed(error.to_string())),
        Err(_) => Err(failed(format!(
            "no answer within {} s",
            CONNECT_TIMEOUT.as_secs()
        ))),
    }
}

/// A running server.
pub struct Running {
    /// The bound address (the real port when the configuration asked for port 0).
    pub addr: SocketAddr,
    pub app: Arc<App>,
    shutdown: Option<oneshot::Sender<()>>,
    server: JoinHandle<std::io::Result<()>>,
    sweeper: Option<JoinHandle<()>>,
}

impl Running {
    /// `http://HOST:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Closes every WebSocket, stops accepting, and waits for in-flight requests.
    pub async fn shutdown(mut self) {
        self.stop().await;
    }

    async fn stop(&mut self) {
        if let Some(sweeper) = self.sweeper.take() {
            sweeper.abort();
        }
        self.app.hub.close();
        self.app.stop_outbox().await;
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match (&mut self.server).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(%error, "server stopped with an error"),
            Err(error) => tracing::warn!(%error, "server task failed"),
        }
    }

    /// Runs until `signal` resolves, then shuts down.
    pub async fn run_until(mut self, signal: impl std::future::Future<Output = ()>) {
        tokio::select! {
            () = signal => self.stop().await,
            result = &mut self.server => {
                if let Ok(Err(error)) = result {
                    tracing::error!(%error, "server stopped with an error");
                }
            }
        }
    }
}

/// Starts the server: database, this start's revision epoch, startup respond reconciliation,
/// demo seeding, then listens. Returns once the socket is bound.
pub async fn serve(config: Config) -> Result<Running, StartError> {
    let db = connect(&config.database).await?;
    serve_db(db, config).await
}

/// [`serve`] on an already connected database.
pub async fn serve_db(db: Db, config: Config) -> Result<Running, StartError> {
    let app = App::start(db, &config).await?;
    if config.seed_demo {
        sim::seed::seed_if_empty(&app).await?;
    }
    let bind = format!("{}:{}", config.host, config.port);
    let listener = TcpListener::bind((config.host.as_str(), config.port))
        .await
        .map_err(|e| StartError::Bind {
            addr: bind.clone(),
            detail: e.to_string(),
        })?;
    let addr = listener.local_addr().map_err(|e| StartError::Bind {
        addr: bind.clone(),
        detail: e.to_string(),
    })?;
    if let Some(problem) = config
        .access_token
        .as_deref()
        .and_then(guard::token_problem)
    {
        return Err(StartError::Insecure {
            addr: bind,
            reason: format!("the access token {problem}"),
        });
    }
    if !addr.ip().is_loopback() && config.access_token.is_none() {
        // Anyone on the network could read every event and answer every question.
        return Err(StartError::Insecure {
            addr: bind,
            reason: format!(
                "a non-loopback address needs an access token (--access-token or {ACCESS_TOKEN_ENV})"
            ),
        });
    }
    // No Nagle delay: WebSocket frames are small and latency is what clients see.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp: &mut tokio::net::TcpStream| {
        let _ = tcp.set_nodelay(true);
    });
    let guard = Arc::new(
        guard::Guard::new(addr, &config.allow_origins)
            .access_token(config.access_token.as_deref())
            .static_root("/pkg/", &config.pkg)
            .static_root("/", &config.www),
    );
    let router = routes::router(app.clone(), &config)
        .layer(axum::middleware::from_fn_with_state(guard, guard::guard));
    let (tx, rx) = oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                let _ = rx.await;
            })
            .await
    });
    let sweeper = (!config.stall_interval.is_zero()).then(|| {
        let app = app.clone();
        let interval = config.stall_interval;
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticks.tick().await; // the first tick is immediate
            loop {
                ticks.tick().await;
                if let Err(error) = app.sweep().await {
                    tracing::warn!(%error, "stall sweep failed");
                }
            }
        })
    });
    tracing::info!(%addr, epoch = %app.hub.epoch(), simulator = config.simulator, "listening");
    Ok(Running {
        addr,
        app,
        shutdown: Some(tx),
        server,
        sweeper,
    })
}
