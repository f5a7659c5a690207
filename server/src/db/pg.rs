//! PostgreSQL connections: typed sqlx `PgConnection`s in a `bb8` pool.
//!
//! Why not sqlx's pool: sqlx 0.8 returns a released connection to its pool through a spawned
//! task that first **pings** the server (a `Sync` round trip, `PoolConnection::return_to_pool`),
//! so every statement run on the pool cost two round trips and a task. bb8 is configured to send
//! nothing of its own: no test on checkout (`test_on_check_out(false)`), and on release only
//! [`Manager::has_broken`], a check of what this module recorded about the connection (no round
//! trip). It brings what a pool of our own lacked: connections older than [`PG_MAX_LIFETIME`] are
//! closed when released or idle, idle ones are reaped after [`PG_IDLE_TIMEOUT`], a connection
//! that cannot be opened is retried until the checkout times out ([`PG_ACQUIRE_TIMEOUT`]), its
//! error logged.
//!
//! A released connection goes back to the idle list only in a known state: its last statement
//! ran to completion (a result or a database error: the server answered and is ready) and no
//! transaction is open. A transaction dropped uncommitted is rolled back on a task first (the
//! connection counts as checked out until then). Anything else, a connection dropped
//! mid-statement (a cancelled future) or a rollback that failed, is broken: bb8 closes it, which
//! makes the server roll back whatever it held, and the next checkout opens a fresh one.
//!
//! [`PG_MAX_LIFETIME`]: super::PG_MAX_LIFETIME
//! [`PG_IDLE_TIMEOUT`]: super::PG_IDLE_TIMEOUT
//! [`PG_ACQUIRE_TIMEOUT`]: super::PG_ACQUIRE_TIMEOUT

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bb8::{ErrorSink, ManageConnection, PooledConnection, QueueStrategy, RunError};
use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{ConnectOptions, Connection, Executor};

use super::{PG_ACQUIRE_TIMEOUT, PG_IDLE_TIMEOUT, PG_MAX_LIFETIME};

/// Whether a statement that ended with `result` left its connection clean: a result or a
/// database error (an answer: the server is ready for the next statement).
pub(super) fn answered<T>(result: &sqlx::Result<T>) -> bool {
    matches!(result, Ok(_) | Err(sqlx::Error::Database(_)))
}

/// A pooled connection and what is known of its state.
#[derive(Debug)]
pub(super) struct Tracked {
    /// `None` once closed by [`Pool::close`].
    conn: Option<PgConnection>,
    /// The last statement ran to completion.
    clean: bool,
    /// Inside a transaction (`BEGIN` sent, no `COMMIT`/`ROLLBACK` answered yet).
    in_transaction: bool,
}

/// Opens connections for bb8 and tells it which released ones to close.
#[derive(Debug)]
pub(super) struct Manager {
    options: PgConnectOptions,
    closed: Arc<AtomicBool>,
}

impl ManageConnection for Manager {
    type Connection = Tracked;
    type Error = sqlx::Error;

    async fn connect(&self) -> sqlx::Result<Tracked> {
        Ok(Tracked {
            conn: Some(PgConnection::connect_with(&self.options).await?),
            clean: true,
            in_transaction: false,
        })
    }

    /// A ping; bb8 asks only on checkout, which this pool does not test.
    async fn is_valid(&self, conn: &mut Tracked) -> sqlx::Result<()> {
        conn.conn
            .as_mut()
            .ok_or(sqlx::Error::PoolClosed)?
            .ping()
            .await
    }

    /// The health check on release, with no round trip: broken unless the last statement was
    /// answered and no transaction is open (or the pool is closing).
    fn has_broken(&self, conn: &mut Tracked) -> bool {
        conn.conn.is_none()
            || !conn.clean
            || conn.in_transaction
            || self.closed.load(Ordering::Acquire)
    }
}

/// Logs what bb8 cannot hand to a caller: a connection it failed to open in the background.
#[derive(Debug, Clone, Copy)]
struct LogErrors;

impl ErrorSink<sqlx::Error> for LogErrors {
    fn sink(&self, error: sqlx::Error) {
        tracing::warn!(%error, "PostgreSQL pool: could not open a connection");
    }

    fn boxed_clone(&self) -> Box<dyn ErrorSink<sqlx::Error>> {
        Box::new(*self)
    }
}

/// The pool: at most `size` connections, opened on demand, idle ones kept for reuse (the most
/// recently released first, so the surplus goes idle and is reaped).
#[derive(Debug)]
pub(super) struct Pool {
    pool: bb8::Pool<Manager>,
    closed: Arc<AtomicBool>,
}

/// A checked-out connection; returned to the pool when dropped (see the module docs).
#[derive(Debug)]
pub(super) struct Held {
    conn: Option<PooledConnection<'static, Manager>>,
}

impl Pool {
    /// A pool of at most `size` connections to `url` (none opened yet). Needs a Tokio runtime
    /// (bb8's reaper is a task).
    pub(super) fn new(url: &str, size: usize) -> sqlx::Result<Pool> {
        let options: PgConnectOptions = url.parse()?;
        let closed = Arc::new(AtomicBool::new(false));
        let manager = Manager {
            // Statements are counted and logged by the db layer, not sqlx.
            options: options.disable_statement_logging(),
            closed: closed.clone(),
        };
        let pool = bb8::Pool::builder()
            .max_size(u32::try_from(size.max(1)).unwrap_or(u32::MAX))
            .test_on_check_out(false)
            .max_lifetime(Some(PG_MAX_LIFETIME))
            .idle_timeout(Some(PG_IDLE_TIMEOUT))
            .connection_timeout(PG_ACQUIRE_TIMEOUT)
            .queue_strategy(QueueStrategy::Lifo)
            .error_sink(Box::new(LogErrors))
            .build_unchecked(manager);
        Ok(Pool { pool, closed })
    }

    /// Checks a connection out: an idle one, or a new one while fewer than `size` are open.
    pub(super) async fn acquire(&self) -> sqlx::Result<Held> {
        if self.closed.load(Ordering::Acquire) {
            return Err(sqlx::Error::PoolClosed);
        }
        let conn = self.pool.get_owned().await.map_err(|error| match error {
            RunError::User(error) => error,
            RunError::TimedOut => sqlx::Error::PoolTimedOut,
        })?;
        Ok(Held { conn: Some(conn) })
    }

    /// Checks a connection out and opens a transaction on it with `begin` (a `BEGIN` statement).
    pub(super) async fn begin(&self, begin: &'static str) -> sqlx::Result<Held> {
        let mut held = self.acquire().await?;
        held.begin(begin).await?;
        Ok(held)
    }

    /// Closes the idle connections (each says goodbye to the server); connections still out are
    /// closed when released, and no more are checked out.
    pub(super) async fn close(&self) {
        self.closed.store(true, Ordering::Release);
        for _ in 0..self.pool.state().idle_connections {
            let Ok(Ok(mut idle)) =
                tokio::time::timeout(Duration::from_secs(1), self.pool.get()).await
            else {
                break;
            };
            let tracked: &mut Tracked = &mut idle;
            if let Some(conn) = tracked.conn.take() {
                let _ = conn.close().await;
            }
        }
    }
}

impl Held {
    fn tracked(&mut self) -> sqlx::Result<&mut Tracked> {
        self.conn.as_deref_mut().ok_or(sqlx::Error::PoolClosed)
    }

    /// The connection, for one statement: it counts as unclean until [`Held::finished`].
    pub(super) fn start(&mut self) -> sqlx::Result<&mut PgConnection> {
        let tracked = self.tracked()?;
        tracked.clean = false;
        tracked.conn.as_mut().ok_or(sqlx::Error::PoolClosed)
    }

    /// Records how the statement begun with [`Held::start`] ended ([`answered`]).
    pub(super) fn finished(&mut self, clean: bool) {
        if let Ok(tracked) = self.tracked() {
            tracked.clean = clean;
        }
    }

    /// Inside a transaction.
    pub(super) fn in_transaction(&self) -> bool {
        self.conn
            .as_ref()
            .is_some_and(|tracked| tracked.in_transaction)
    }

    /// Sends a transaction-control statement (`BEGIN …`, `COMMIT`, `ROLLBACK`).
    async fn control(&mut self, sql: &'static str) -> sqlx::Result<()> {
        let result = self.start()?.execute(sql).await.map(|_| ());
        self.finished(answered(&result));
        result
    }

    /// Opens a transaction with `begin` (a `BEGIN` statement).
    async fn begin(&mut self, begin: &'static str) -> sqlx::Result<()> {
        self.tracked()?.in_transaction = true;
        self.control(begin).await
    }

    pub(super) async fn commit(&mut self) -> sqlx::Result<()> {
        self.control("COMMIT").await?;
        self.tracked()?.in_transaction = false;
        Ok(())
    }

    pub(super) async fn rollback(&mut self) -> sqlx::Result<()> {
        self.control("ROLLBACK").await?;
        self.tracked()?.in_transaction = false;
        Ok(())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(mut held) = self.conn.take() else {
            return;
        };
        if !held.clean || !held.in_transaction {
            // Dropping it releases it: idle again when clean, else closed (`has_broken`).
            return;
        }
        // A transaction dropped uncommitted (an early return): rolled back on a task, then
        // released; without a runtime it is released as it is, so closed.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let tracked: &mut Tracked = &mut held;
                let Some(conn) = tracked.conn.as_mut() else {
                    return;
                };
                let result = conn.execute("ROLLBACK").await.map(|_| ());
                tracked.clean = answered(&result);
                tracked.in_transaction = result.is_err();
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::PG_CONNECTIONS;

    /// The configuration the module docs promise, without a server (nothing is opened before a
    /// checkout); a closed pool checks nothing out.
    #[tokio::test]
    async fn the_pool_never_tests_a_checkout_and_bounds_lifetimes() {
        let pool = Pool::new("postgres://tp@127.0.0.1:1/none", PG_CONNECTIONS).unwrap();
        let config = pool.pool.config();
        assert_eq!(usize::try_from(config.max_size).unwrap(), PG_CONNECTIONS);
        assert!(!config.test_on_check_out, "no ping on checkout");
        assert_eq!(config.max_lifetime, Some(PG_MAX_LIFETIME));
        assert_eq!(config.idle_timeout, Some(PG_IDLE_TIMEOUT));
        assert_eq!(config.connection_timeout, PG_ACQUIRE_TIMEOUT);
        assert_eq!(config.min_idle, None, "opened on demand");
        assert_eq!(pool.pool.state().connections, 0);
        pool.close().await;
        assert!(matches!(pool.acquire().await, Err(sqlx::Error::PoolClosed)));
    }
}
