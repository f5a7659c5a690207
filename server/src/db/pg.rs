//! PostgreSQL connections: a small pool of typed `PgConnection`s.
//!
//! Why not sqlx's pool: sqlx 0.8 returns a released connection to its pool through a spawned
//! task that first **pings** the server (a `Sync` round trip, `PoolConnection::return_to_pool`),
//! so every statement run on the pool cost two round trips and a task; and its `Any` driver
//! copied every row into an `AnyRow`. Here a released connection goes straight back to the idle
//! list when it is known to be in a clean state: its last statement ran to completion (a result
//! or a database error: the server answered and is ready). A transaction dropped uncommitted is
//! rolled back on a task first. A connection dropped mid-statement (a cancelled future) is closed
//! instead, which rolls back whatever it held; the next checkout opens a fresh one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{ConnectOptions, Connection, Executor};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Whether a statement that ended with `result` left its connection clean: a result or a
/// database error (an answer: the server is ready for the next statement).
pub(super) fn answered<T>(result: &sqlx::Result<T>) -> bool {
    matches!(result, Ok(_) | Err(sqlx::Error::Database(_)))
}

/// The pool: at most `size` connections, idle ones kept for reuse.
#[derive(Debug)]
pub(super) struct Pool {
    options: PgConnectOptions,
    idle: Mutex<Vec<PgConnection>>,
    permits: Arc<Semaphore>,
    acquire_timeout: Duration,
    closed: AtomicBool,
}

/// A checked-out connection; returned to the pool when dropped (see the module docs).
#[derive(Debug)]
pub(super) struct Held {
    conn: Option<PgConnection>,
    pool: Arc<Pool>,
    /// Released when the connection is back (or closed).
    permit: Option<OwnedSemaphorePermit>,
    /// The last statement ran to completion.
    clean: bool,
    /// Inside a transaction (`BEGIN` sent, no `COMMIT`/`ROLLBACK` yet).
    in_transaction: bool,
}

impl Pool {
    pub(super) fn new(url: &str, size: usize, acquire_timeout: Duration) -> sqlx::Result<Pool> {
        let options: PgConnectOptions = url.parse()?;
        Ok(Pool {
            // Statements are counted and logged by the db layer, not sqlx.
            options: options.disable_statement_logging(),
            idle: Mutex::new(Vec::new()),
            permits: Arc::new(Semaphore::new(size.max(1))),
            acquire_timeout,
            closed: AtomicBool::new(false),
        })
    }

    /// Checks a connection out: an idle one, or a new one while fewer than `size` are out.
    pub(super) async fn acquire(self: &Arc<Pool>) -> sqlx::Result<Held> {
        if self.closed.load(Ordering::Acquire) {
            return Err(sqlx::Error::PoolClosed);
        }
        let permit =
            tokio::time::timeout(self.acquire_timeout, self.permits.clone().acquire_owned())
                .await
                .map_err(|_| sqlx::Error::PoolTimedOut)?
                .map_err(|_| sqlx::Error::PoolClosed)?;
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match idle {
            Some(conn) => conn,
            None => PgConnection::connect_with(&self.options).await?,
        };
        Ok(Held {
            conn: Some(conn),
            pool: self.clone(),
            permit: Some(permit),
            clean: true,
            in_transaction: false,
        })
    }

    /// Checks a connection out and opens a transaction on it with `begin` (a `BEGIN` statement).
    pub(super) async fn begin(self: &Arc<Pool>, begin: &'static str) -> sqlx::Result<Held> {
        let mut held = self.acquire().await?;
        held.begin(begin).await?;
        Ok(held)
    }

    /// Closes the idle connections; connections still out are closed when released.
    pub(super) async fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.permits.close();
        let idle = std::mem::take(&mut *self.idle.lock().unwrap_or_else(PoisonError::into_inner));
        for conn in idle {
            let _ = conn.close().await;
        }
    }
}

impl Held {
    /// The connection, for one statement: it counts as unclean until [`Held::finished`].
    pub(super) fn start(&mut self) -> sqlx::Result<&mut PgConnection> {
        self.clean = false;
        self.conn.as_mut().ok_or(sqlx::Error::PoolClosed)
    }

    /// Records how the statement begun with [`Held::start`] ended ([`answered`]).
    pub(super) fn finished(&mut self, clean: bool) {
        self.clean = clean;
    }

    /// Inside a transaction.
    pub(super) fn in_transaction(&self) -> bool {
        self.in_transaction
    }

    /// Sends a transaction-control statement (`BEGIN …`, `COMMIT`, `ROLLBACK`).
    async fn control(&mut self, sql: &'static str) -> sqlx::Result<()> {
        let result = self.start()?.execute(sql).await.map(|_| ());
        self.finished(answered(&result));
        result
    }

    /// Opens a transaction with `begin` (a `BEGIN` statement).
    async fn begin(&mut self, begin: &'static str) -> sqlx::Result<()> {
        self.in_transaction = true;
        self.control(begin).await
    }

    pub(super) async fn commit(&mut self) -> sqlx::Result<()> {
        self.control("COMMIT").await?;
        self.in_transaction = false;
        Ok(())
    }

    pub(super) async fn rollback(&mut self) -> sqlx::Result<()> {
        self.control("ROLLBACK").await?;
        self.in_transaction = false;
        Ok(())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(mut conn) = self.conn.take() else {
            return;
        };
        if !self.clean || self.pool.closed.load(Ordering::Acquire) {
            // Dropped mid-statement (or the pool is closing): closing the socket makes the
            // server roll back an open transaction and discard a half-read result.
            return;
        }
        if !self.in_transaction {
            self.pool
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(conn);
            return;
        }
        // A transaction dropped uncommitted (an early return): rolled back on a task, then the
        // connection is reused; without a runtime it is closed instead.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let pool = self.pool.clone();
            let permit = self.permit.take();
            runtime.spawn(async move {
                let _permit = permit;
                if conn.execute("ROLLBACK").await.is_ok() && !pool.closed.load(Ordering::Acquire) {
                    pool.idle
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(conn);
                }
            });
        }
    }
}
