//! Load benchmark of the reference server (a command, not a test):
//!
//! ```text
//! cargo run --profile server -p task-projection-server --features test-client \
//!     --bin task-projection-load -- \
//!     --clients 20 --events 2000 [--drivers 4] [--database URL] [--instances N]
//! ```
//!
//! `--instances N` (PostgreSQL only) starts N server instances on the database, in process, each
//! with its own pool and outbox follower: clients and drivers are spread over them round-robin,
//! so every client sees events written through the other instances (docs/server-api.md,
//! "Several instances").
//!
//! Starts the server in process on loopback (SQLite in a temporary file unless `--database` says
//! otherwise), connects `--clients` WebSocket clients, each feeding a native `ProjectionStore`
//! exactly as the browser feeds the wasm one (REST boot, then every frame), and drives events
//! through the simulator API with `--drivers` concurrent agents (each on its own task: turns,
//! messages, live clarifications answered through the respond endpoint, permissions) until at
//! least `--events` frames were published. Reports the publication rate, the delivery latency
//! (publication → a client read the frame; p50/p99/max over every client and frame), the SQL
//! statements, CPU and fan-out per event (outbox inserts, each a notification to every instance;
//! socket writes), the store's cost per frame, and checks that every client's store answers
//! equal the server's REST answers (exit code 1 otherwise).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use task_projection_server::http::client::{check_converged, HttpClient, Mirror, WsClient};
use task_projection_server::http::{self, Config};
use tokio::sync::watch;

struct Options {
    clients: usize,
    events: usize,
    drivers: usize,
    database: Option<String>,
    instances: usize,
}

const USAGE: &str = "usage: task-projection-load [--clients N] [--events M] [--drivers D] \
                     [--database URL] [--instances N]";

fn parse() -> Result<Options, String> {
    let mut options = Options {
        clients: 20,
        events: 2000,
        drivers: 4,
        database: None,
        instances: 1,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |text: String| -> Result<usize, String> {
            text.parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("expected a positive number, got {text:?}"))
        };
        match flag.as_str() {
            "--clients" => options.clients = number(value()?)?,
            "--events" => options.events = number(value()?)?,
            "--drivers" => options.drivers = number(value()?)?,
            "--database" => options.database = Some(http::database_url(&value()?)?),
            "--instances" => options.instances = number(value()?)?,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let postgres = options
        .database
        .as_deref()
        .is_some_and(|url| url.starts_with("postgres"));
    if options.instances > 1 && !postgres {
        return Err(
            "--instances above 1 needs --database postgres://… (SQLite is one instance)".into(),
        );
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse() {
        Ok(options) => options,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("task-projection-load: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    // The server's warnings (a failed insert, a skipped offset) go to stderr: a run that hit
    // one says so.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("task-projection-load: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(options)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("task-projection-load: {error}");
            ExitCode::FAILURE
        }
    }
}

type AnyError = Box<dyn std::error::Error + Send + Sync>;

/// One client: its receive instants (frame k ↔ the k-th published frame), its store, and the
/// time its store spent applying frames.
struct ClientRun {
    received: Vec<Instant>,
    mirror: Mirror,
    apply_time: Duration,
}

async fn read_client(
    mut ws: WsClient,
    mut mirror: Mirror,
    mut target: watch::Receiver<Option<usize>>,
) -> Result<ClientRun, String> {
    let mut received = Vec::new();
    let mut apply_time = Duration::ZERO;
    loop {
        if let Some(target) = *target.borrow() {
            if received.len() >= target {
                break;
            }
        }
        tokio::select! {
            frame = ws.next() => {
                let frame = frame.map_err(|e| e.to_string())?.ok_or("socket closed early")?;
                received.push(Instant::now());
                let start = Instant::now();
                mirror.apply(&frame).map_err(|e| format!("{e}: {frame}"))?;
                apply_time += start.elapsed();
            }
            changed = target.changed() => {
                if changed.is_err() {
                    return Err("driver gone".into());
                }
            }
        }
    }
    ws.close().await;
    Ok(ClientRun {
        received,
        mirror,
        apply_time,
    })
}

async fn post(http: &HttpClient, path: &str, body: Value) -> Result<Value, AnyError> {
    Ok(http.post_ok(path, &body).await?)
}

fn text(value: &Value, key: &str) -> Result<String, AnyError> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("no {key} in {value}").into())
}

/// One simulated agent: its own task and session, cycles of turns until the hub published
/// `events` frames. Returns the number of simulator/respond calls it made.
async fn drive(
    addr: SocketAddr,
    app: Arc<http::app::App>,
    index: usize,
    events: usize,
) -> Result<usize, AnyError> {
    let http = HttpClient::new(addr);
    let mut calls = 0usize;
    let task = text(
        &post(
            &http,
            "/api/dev/sim/tasks",
            json!({ "title": format!("load {index}") }),
        )
        .await?,
        "task_id",
    )?;
    let session = text(
        &post(
            &http,
            &format!("/api/dev/sim/tasks/{task}/sessions"),
            json!({ "primary": true }),
        )
        .await?,
        "session_id",
    )?;
    calls += 2;
    while app.hub.recorded_count() < events {
        // A turn: a message, a live clarification answered through the respond endpoint (the
        // agent then completes the turn).
        post(
            &http,
            &format!("/api/dev/sim/sessions/{session}/turns"),
            json!({}),
        )
        .await?;
        post(
            &http,
            &format!("/api/dev/sim/sessions/{session}/messages"),
            json!({ "type": "message", "text": "working on it" }),
        )
        .await?;
        let asked = post(
            &http,
            &format!("/api/dev/sim/sessions/{session}/clarification"),
            json!({ "questions": ["Which option?", "Any constraint?"] }),
        )
        .await?;
        let pending = text(&asked, "pending_id")?;
        let answers = json!({ "answers": [
            { "question_id": "q1", "answer": "the first" },
            { "question_id": "q2", "answer": "none" },
        ] });
        let (status, body) = http
            .post(
                &format!("/api/v1/clarification/{pending}/respond"),
                &answers,
            )
            .await?;
        if status != 200 {
            return Err(format!("respond: HTTP {status}: {body}").into());
        }
        // A second turn asks a permission.
        let turn = text(
            &post(
                &http,
                &format!("/api/dev/sim/sessions/{session}/turns"),
                json!({}),
            )
            .await?,
            "turn_id",
        )?;
        let permission = text(
            &post(
                &http,
                &format!("/api/dev/sim/sessions/{session}/permission"),
                json!({}),
            )
            .await?,
            "message_id",
        )?;
        post(
            &http,
            &format!("/api/dev/sim/permissions/{permission}/resolve"),
            json!({ "status": "approved" }),
        )
        .await?;
        post(
            &http,
            &format!("/api/dev/sim/turns/{turn}/complete"),
            json!({}),
        )
        .await?;
        calls += 8;
    }
    Ok(calls)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// This process's CPU time (user + system) so far, from `/proc/self/stat` (Linux; `None`
/// elsewhere). Clock ticks are taken as 100 per second (`getconf CLK_TCK` on Linux).
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.get(stat.rfind(')')?.checked_add(2)?..)?;
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of stat(5), 12 and 13 after the name and state.
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

async fn run(options: Options) -> Result<bool, AnyError> {
    let temp = std::env::temp_dir().join(format!(
        "task-projection-load-{}.db",
        uuid::Uuid::new_v4().simple()
    ));
    let database = options
        .database
        .clone()
        .unwrap_or(http::database_url(&format!("sqlite:{}", temp.display()))?);
    let config = Config {
        database: database.clone(),
        port: 0,
        simulator: true,
        stall_interval: Duration::ZERO,
        ws_buffer: options.events.saturating_mul(2).max(8192),
        ..Config::default()
    };
    let mut instances = Vec::with_capacity(options.instances);
    for _ in 0..options.instances {
        instances.push(http::serve(config.clone()).await?);
    }
    let addrs: Vec<SocketAddr> = instances.iter().map(|r| r.addr).collect();
    let apps: Vec<Arc<http::app::App>> = instances.iter().map(|r| r.app.clone()).collect();
    let app = apps[0].clone();
    println!(
        "server on {} ({}{}), {} clients, {} drivers, target {} events",
        instances[0].url(),
        if database.starts_with("sqlite") {
            "SQLite"
        } else {
            "PostgreSQL"
        },
        if options.instances > 1 {
            format!(", {} instances", options.instances)
        } else {
            String::new()
        },
        options.clients,
        options.drivers,
        options.events
    );

    // Clients: WebSocket first, then the REST boot; client c on instance c mod N.
    let (target_tx, target_rx) = watch::channel(None);
    let mut readers = Vec::with_capacity(options.clients);
    for c in 0..options.clients {
        let on = c % addrs.len();
        let boot_http = HttpClient::new(addrs[on]);
        let mut ws = WsClient::connect(addrs[on]).await?;
        let hello = ws.next().await?.ok_or("no hello")?;
        let mut mirror = Mirror::new();
        mirror.apply(&hello)?;
        mirror.boot(&boot_http).await?;
        readers.push((on, ws, mirror));
    }
    for app in &apps {
        app.settle().await;
        app.hub.record();
        if let Some(writer) = app.outbox_writer() {
            writer.record();
        }
    }
    let readers: Vec<_> = readers
        .into_iter()
        .map(|(on, ws, mirror)| (on, tokio::spawn(read_client(ws, mirror, target_rx.clone()))))
        .collect();

    // Drivers.
    let statements_before = task_projection_server::db::statements_run();
    let fan_out = |apps: &[Arc<http::app::App>]| {
        apps.iter().fold((0u64, 0u64), |(inserts, writes), app| {
            (
                inserts + app.outbox_writer().map_or(0, |w| w.inserts()),
                writes + app.hub.socket_writes(),
            )
        })
    };
    let fan_out_before = fan_out(&apps);
    let cpu_before = cpu_time();
    let started = Instant::now();
    let drivers: Vec<_> = (0..options.drivers)
        .map(|i| {
            tokio::spawn(drive(
                addrs[i % addrs.len()],
                app.clone(),
                i,
                options.events,
            ))
        })
        .collect();
    let mut calls = 0usize;
    for driver in drivers {
        calls += driver.await??;
    }
    let driven = started.elapsed();
    // Every instance delivers every event (PostgreSQL: once the outbox caught up).
    for app in &apps {
        app.settle().await;
    }
    let statements_run =
        task_projection_server::db::statements_run().saturating_sub(statements_before);
    let (inserts, socket_writes) = {
        let (inserts, writes) = fan_out(&apps);
        (
            inserts.saturating_sub(fan_out_before.0),
            writes.saturating_sub(fan_out_before.1),
        )
    };
    let cpu = cpu_time()
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
    let published: Vec<Vec<Instant>> = apps.iter().map(|app| app.hub.recorded()).collect();
    let total = published[0].len();
    if let Some(other) = published.iter().find(|p| p.len() != total) {
        return Err(format!(
            "instances delivered different numbers of events: {total} and {}",
            other.len()
        )
        .into());
    }
    target_tx.send_replace(Some(total));

    let mut runs = Vec::with_capacity(readers.len());
    for (on, reader) in readers {
        match tokio::time::timeout(Duration::from_secs(120), reader).await {
            Ok(Ok(Ok(run))) => runs.push((on, run)),
            Ok(Ok(Err(error))) => return Err(format!("client failed: {error}").into()),
            Ok(Err(error)) => return Err(error.into()),
            Err(_) => return Err("a client did not receive every frame within 120 s".into()),
        }
    }
    let delivered_all = started.elapsed();

    let mut latencies = Vec::with_capacity(total.saturating_mul(runs.len()));
    let mut apply_time = Duration::ZERO;
    for (on, run) in &runs {
        for (k, at) in run.received.iter().enumerate() {
            latencies.push(at.saturating_duration_since(published[*on][k]));
        }
        apply_time += run.apply_time;
    }
    latencies.sort();
    // One instance on PostgreSQL: its events reach the outbox in publication order and come back
    // in that order, so the k-th frame is the k-th publication: the whole trip, outbox included.
    let mut trips = Vec::new();
    if let (1, Some(writer)) = (apps.len(), app.outbox_writer()) {
        let handed = writer.recorded();
        for (_, run) in &runs {
            for (k, at) in run.received.iter().enumerate() {
                if let Some(handed) = handed.get(k) {
                    trips.push(at.saturating_duration_since(*handed));
                }
            }
        }
        trips.sort();
    }
    let first = published[0].first().copied().unwrap_or(started);
    let last = published[0].last().copied().unwrap_or(started);
    let span = last
        .saturating_duration_since(first)
        .as_secs_f64()
        .max(1e-9);
    println!(
        "published {total} events in {:.2} s ({calls} HTTP calls): {:.0} events/s, {:.0} deliveries/s",
        driven.as_secs_f64(),
        total as f64 / span,
        (total * runs.len()) as f64 / delivered_all.as_secs_f64().max(1e-9),
    );
    println!(
        "delivery latency (the client's instance sends -> client read) over {} deliveries: p50 {}, p99 {}, max {}",
        latencies.len(),
        ms(percentile(&latencies, 0.50)),
        ms(percentile(&latencies, 0.99)),
        ms(latencies.last().copied().unwrap_or_default()),
    );
    if !trips.is_empty() {
        println!(
            "delivery latency (publication -> outbox -> client read) over {} deliveries: p50 {}, p99 {}, max {}",
            trips.len(),
            ms(percentile(&trips, 0.50)),
            ms(percentile(&trips, 0.99)),
            ms(trips.last().copied().unwrap_or_default()),
        );
    }
    let per_event = |n: f64| n / (total.max(1)) as f64;
    println!(
        "cost per event: {:.1} SQL statements ({:.1} per HTTP call){}",
        per_event(statements_run as f64),
        statements_run as f64 / (calls.max(1)) as f64,
        cpu.map_or(String::new(), |cpu| format!(
            ", {:.2} ms CPU (the whole process: server, drivers and {} clients)",
            per_event(cpu.as_secs_f64() * 1e3),
            options.clients
        )),
    );
    println!(
        "fan-out per event: {}{:.2} socket writes ({} sockets, a write per batch of queued frames)",
        match apps[0].outbox_writer() {
            Some(_) => format!(
                "{:.2} outbox inserts (a notification to each of {} instance{}), ",
                per_event(inserts as f64),
                apps.len(),
                if apps.len() == 1 { "" } else { "s" }
            ),
            None => String::new(),
        },
        per_event(socket_writes as f64),
        runs.len(),
    );
    println!(
        "native store: {:.2} us per frame (apply, mean over all clients)",
        apply_time.as_secs_f64() * 1e6 / (latencies.len().max(1)) as f64
    );

    let mut failures = 0usize;
    for (i, (on, run)) in runs.iter().enumerate() {
        // Equal to the REST answers of its own instance and of the first.
        for at in [*on, 0] {
            if let Err(error) = check_converged(&run.mirror, &HttpClient::new(addrs[at])).await {
                failures += 1;
                eprintln!("client {i} (instance {on}) against instance {at}: {error}");
                break;
            }
        }
    }
    println!(
        "convergence: {}/{} clients equal the server's REST answers",
        runs.len() - failures,
        runs.len()
    );
    for running in instances {
        running.shutdown().await;
    }
    if options.database.is_none() {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", temp.display()));
        }
    }
    Ok(failures == 0)
}
