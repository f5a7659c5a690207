//! The reference server (docs/server-api.md): flag parsing, logging, startup, signals. Everything
//! else is `task_projection_server::http`.
//!
//! ```text
//! cargo run -p task-projection-server --bin task-projection-server -- \
//!     --simulator --seed-demo --port 8080
//! ```

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use task_projection_server::http::{self, Args, USAGE};

fn main() -> ExitCode {
    let config = match http::parse_args(std::env::args().skip(1)) {
        Ok(Args::Run(mut config)) => {
            if config.access_token.is_none() {
                config.access_token = std::env::var(http::ACCESS_TOKEN_ENV)
                    .ok()
                    .filter(|token| !token.is_empty());
            }
            config
        }
        Ok(Args::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("task-projection-server: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("task-projection-server: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let running = match http::serve(*config).await {
            Ok(running) => running,
            Err(error) => {
                eprintln!("task-projection-server: {error}");
                return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(1));
            }
        };
        let mut stdout = std::io::stdout();
        let _ = writeln!(
            stdout,
            "task-projection-server listening on {}",
            running.url()
        );
        let _ = stdout.flush();
        running.run_until(shutdown_signal()).await;
        tracing::info!("stopped");
        ExitCode::SUCCESS
    })
}

/// Ctrl-C, or SIGTERM on Unix.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
