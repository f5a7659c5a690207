//! The server's configuration: the command line ([`parse_args`], [`USAGE`]), [`Config`], and
//! why a start failed ([`StartError`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, SystemClock};
use crate::ServerError;

use super::guard;

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
            stall_threshold: task_projection::rules::stall::DEFAULT_STALL_THRESHOLD,
            clock: Arc::new(SystemClock),
            ws_buffer: 8192,
            ws_buffer_bytes: 64 << 20,
            outbox_retention: crate::outbox::DEFAULT_RETENTION,
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
    Startup(#[from] ServerError),
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
