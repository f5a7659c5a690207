//! The reference server's HTTP and WebSocket adapter (docs/server-api.md is the contract).
//!
//! It decides nothing: REST answers are the services' ([`Projector::task_sessions`],
//! [`SummaryRepair::task_answer`], [`RespondService::respond`], storage reads), WebSocket frames
//! are the events the services publish, and the simulator performs an agent's writes through the
//! same storage and publishes the events a real agent would cause.
//!
//! | module | what |
//! |---|---|
//! | [`app`] | shared state: the services of the current start (swapped by a simulated restart), errors |
//! | [`routes`] | REST routes, static files, the route table |
//! | [`hub`] | the WebSocket hub: one pre-serialized frame per event, `server.hello` first |
//! | [`sim`] | the in-memory simulated agent (waiters, resumes, executions) and the simulator API |
//! | [`seed`] | the demo tasks of `--seed-demo` |
//! | [`client`] | a loopback HTTP/WebSocket client and a native-store mirror (tests, load benchmark) |
//!
//! Start it in process with [`serve`]; the `task-projection-server` binary is [`parse_args`] +
//! [`serve`] + a signal handler.
//!
//! [`Projector::task_sessions`]: crate::server::projection::Projector::task_sessions
//! [`SummaryRepair::task_answer`]: crate::server::summary::SummaryRepair::task_answer
//! [`RespondService::respond`]: crate::server::respond::RespondService::respond

pub mod app;
pub mod client;
pub mod guard;
pub mod hub;
pub mod routes;
pub mod seed;
pub mod sim;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::clock::{Clock, SystemClock};
use super::Db;
use app::App;

/// How long startup waits for the database before giving up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The usage text of the binary.
pub const USAGE: &str = "\
usage: task-projection-server [--database URL] [--port N] [--host ADDR] [--seed-demo] [--simulator]
                              [--www DIR] [--pkg DIR] [--allow-origin URL]... [--access-token TOKEN]
                              [--stall-interval SECS] [--stall-threshold SECS] [--outbox-retention SECS]

  --database URL          sqlite:<path> (default sqlite:task-projection.db, created when missing)
                          or postgres://user@host:port/db
  --port N                TCP port (default 8080; 0 picks a free port)
  --host ADDR             address to bind (default 127.0.0.1; any other than loopback needs an
                          access token)
  --seed-demo             create the demo tasks when the database has no tasks
  --simulator             mount the simulator endpoints under /api/dev/sim/
  --www DIR               static files served at / (default www/dist)
  --pkg DIR               static files served at /pkg/ (default pkg)
  --allow-origin URL      also accept the WebSocket and writes from this page origin
                          (repeatable; the server's own origin is always accepted)
  --access-token TOKEN    every request and socket must present it (Authorization: Bearer, or
                          open the page once with ?access_token=TOKEN); required off loopback.
                          Prefer the environment: TASK_PROJECTION_ACCESS_TOKEN
  --stall-interval SECS   seconds between stall sweeps (default 60; 0 disables the timer)
  --stall-threshold SECS  stall threshold in seconds (default 7200)
  --outbox-retention SECS PostgreSQL: how long events stay resumable (default 900)
  -h, --help              this text";

/// The server's configuration.
#[derive(Clone)]
pub struct Config {
    /// A sqlx URL (see [`database_url`]).
    pub database: String,
    pub host: String,
    pub port: u16,
    pub seed_demo: bool,
    pub simulator: bool,
    pub www: PathBuf,
    pub pkg: PathBuf,
    /// `Duration::ZERO`: no periodic sweep (the simulator can still run one).
    pub stall_interval: Duration,
    pub stall_threshold: Duration,
    /// The wall clock of the services and the simulator (not a flag: tests inject one).
    pub clock: Arc<dyn Clock>,
    /// Frames a WebSocket may fall behind before it is closed (code 1013; the client
    /// reconnects and refetches).
    pub ws_buffer: usize,
    /// Bytes of frames not yet written to every socket the hub holds before it closes the
    /// sockets that are behind (the total bound; `ws_buffer` is the per-socket one).
    pub ws_buffer_bytes: usize,
    /// How long the outbox keeps events (PostgreSQL): how far back a reconnecting client can
    /// resume (`--outbox-retention`).
    pub outbox_retention: Duration,
    /// Origins allowed besides the server's own (`--allow-origin`, repeatable): the WebSocket
    /// and state-changing requests from any other page are refused ([`guard`]).
    pub allow_origins: Vec<String>,
    /// The access token every request must present (`--access-token`,
    /// `TASK_PROJECTION_ACCESS_TOKEN`); required to bind a non-loopback address ([`guard`]).
    pub access_token: Option<String>,
}

/// The environment variable the binary reads the access token from (a flag shows in `ps`).
pub const ACCESS_TOKEN_ENV: &str = "TASK_PROJECTION_ACCESS_TOKEN";

impl Default for Config {
    fn default() -> Self {
        Config {
            database: "sqlite:task-projection.db?mode=rwc".into(),
            host: "127.0.0.1".into(),
            port: 8080,
            seed_demo: false,
            simulator: false,
            www: PathBuf::from("www/dist"),
            pkg: PathBuf::from("pkg"),
            stall_interval: Duration::from_secs(60),
            stall_threshold: crate::rules::stall::DEFAULT_STALL_THRESHOLD,
            clock: Arc::new(SystemClock),
            ws_buffer: 8192,
            ws_buffer_bytes: 64 << 20,
            outbox_retention: crate::server::outbox::DEFAULT_RETENTION,
            allow_origins: Vec::new(),
            access_token: None,
        }
    }
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("database", &self.database)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("seed_demo", &self.seed_demo)
            .field("simulator", &self.simulator)
            .field("www", &self.www)
            .field("pkg", &self.pkg)
            .field("stall_interval", &self.stall_interval)
            .field("stall_threshold", &self.stall_threshold)
            .field("allow_origins", &self.allow_origins)
            .field("access_token", &self.access_token.as_ref().map(|_| "…"))
            .finish_non_exhaustive()
    }
}

/// What the command line asked for.
#[derive(Debug)]
pub enum Args {
    Run(Box<Config>),
    Help,
}

/// The `--database` flag as a sqlx URL: `postgres://…` / `postgresql://…` as given;
/// `sqlite:<path>` gains `mode=rwc` (create when missing) unless it names a mode or is
/// in-memory. Anything else is a flag error.
pub fn database_url(flag: &str) -> Result<String, String> {
    if flag.starts_with("postgres://") || flag.starts_with("postgresql://") {
        return Ok(flag.to_owned());
    }
    let Some(rest) = flag.strip_prefix("sqlite:") else {
        return Err(format!(
            "--database: expected sqlite:<path> or postgres://…, got {flag:?}"
        ));
    };
    if rest.trim_start_matches('/').is_empty() {
        return Err("--database: sqlite: needs a path".into());
    }
    if flag.contains(":memory:") || flag.contains("mode=") {
        return Ok(flag.to_owned());
    }
    let separator = if flag.contains('?') { '&' } else { '?' };
    Ok(format!("{flag}{separator}mode=rwc"))
}

fn seconds(flag: &str, value: &str) -> Result<Duration, String> {
    value
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("{flag}: expected a number of seconds, got {value:?}"))
}

/// Parses the command line (without the program name). `Err` is a one-line message for a bad
/// flag (the binary prints it with [`USAGE`] and exits with code 2).
pub fn parse_args<I>(args: I) -> Result<Args, String>
where
    I: IntoIterator<Item = String>,
{
    let mut config = Config::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag.to_owned(), Some(value.into())),
            _ => (arg.clone(), None),
        };
        let mut value = |flag: &str| -> Result<String, String> {
            match inline.clone() {
                Some(value) => Ok(value),
                None => args
                    .next()
                    .filter(|v| !v.starts_with("--"))
                    .ok_or_else(|| format!("{flag} needs a value")),
            }
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Args::Help),
            "--database" => config.database = database_url(&value("--database")?)?,
            "--port" => {
                let text = value("--port")?;
                config.port = text
                    .parse()
                    .map_err(|_| format!("--port: expected 0..65535, got {text:?}"))?;
            }
            "--host" => config.host = value("--host")?,
            "--www" => config.www = PathBuf::from(value("--www")?),
            "--allow-origin" => {
                let origin = value("--allow-origin")?;
                if !(origin.starts_with("http://") || origin.starts_with("https://")) {
                    return Err(format!(
                        "--allow-origin: expected http(s)://host[:port], got {origin:?}"
                    ));
                }
                config.allow_origins.push(origin);
            }
            "--pkg" => config.pkg = PathBuf::from(value("--pkg")?),
            "--access-token" => {
                let token = value("--access-token")?;
                if let Some(problem) = guard::token_problem(&token) {
                    return Err(format!("--access-token {problem}"));
                }
                config.access_token = Some(token);
            }
            "--stall-interval" => {
                config.stall_interval = seconds("--stall-interval", &value("--stall-interval")?)?;
            }
            "--outbox-retention" => {
                let keep = seconds("--outbox-retention", &value("--outbox-retention")?)?;
                if keep.is_zero() {
                    return Err("--outbox-retention must be more than 0".into());
                }
                config.outbox_retention = keep;
            }
            "--stall-threshold" => {
                let threshold = seconds("--stall-threshold", &value("--stall-threshold")?)?;
                if threshold.is_zero() {
                    return Err("--stall-threshold must be more than 0".into());
                }
                config.stall_threshold = threshold;
            }
            "--seed-demo" | "--simulator" if inline.is_some() => {
                return Err(format!("{flag} takes no value"));
            }
            "--seed-demo" => config.seed_demo = true,
            "--simulator" => config.simulator = true,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Args::Run(Box::new(config)))
}

/// Why the server did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The database is unreachable or its migrations failed (the binary exits with code 2).
    #[error("cannot open database {url}: {detail}")]
    Database { url: String, detail: String },
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {detail}")]
    Bind { addr: String, detail: String },
    /// A non-loopback address without an access token, or an unusable token (exit code 2).
    #[error("refusing to listen on {addr}: {reason}")]
    Insecure { addr: String, reason: String },
    /// Epoch allocation, startup reconciliation or seeding failed.
    #[error("startup failed: {0}")]
    Startup(#[from] super::ServerError),
}

impl StartError {
    /// The process exit code for this failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            StartError::Database { .. } | StartError::Insecure { .. } => 2,
            StartError::Bind { .. } | StartError::Startup(_) => 1,
        }
    }
}

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

/// Connects to the database (with a bounded wait) and runs the migrations.
pub async fn connect(url: &str) -> Result<Db, StartError> {
    let failed = |detail: String| StartError::Database {
        url: redacted(url),
        detail,
    };
    // One direct connection first: the pool retries a refused connection until its acquire
    // timeout, a single connection fails at once with the real reason.
    sqlx::any::install_default_drivers();
    let probe = tokio::time::timeout(
        CONNECT_TIMEOUT,
        <sqlx::AnyConnection as sqlx::Connection>::connect(url),
    )
    .await;
    match probe {
        Ok(Ok(mut conn)) => {
            if url.starts_with("sqlite:") && !url.contains(":memory:") {
                // Write-ahead logging: one sync per commit instead of a rollback journal's
                // several, and readers do not block the writer. Persistent in the file.
                if let Err(error) = sqlx::query("PRAGMA journal_mode = WAL")
                    .execute(&mut conn)
                    .await
                {
                    tracing::warn!(%error, "could not switch SQLite to WAL; keeping its journal");
                }
            }
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
    match tokio::time::timeout(CONNECT_TIMEOUT, Db::connect(url)).await {
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
        seed::seed_if_empty(&app).await?;
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
