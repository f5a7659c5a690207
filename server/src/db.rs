//! The database handle: SQLite (default) or PostgreSQL, one SQL text for both, with the versioned
//! migrations of `server/migrations/` embedded in the binary (run by maintained runners:
//! sqlx's migrator on PostgreSQL, `rusqlite_migration` on SQLite).
//!
//! **SQLite** is one `rusqlite` connection behind an async mutex, run on the calling task: a
//! statement costs what SQLite itself costs (a few microseconds for an indexed read), with no
//! worker thread to hand it to and no pool to check a connection out of. SQLite has one writer
//! anyway, and one connection keeps its page cache warm (in WAL mode every write by another
//! connection would discard it). Statements are prepared once per text and kept
//! ([`SQLITE_STATEMENT_CACHE`]). **PostgreSQL** is typed sqlx connections in a `bb8` pool
//! (`db/pg.rs`; sqlx's own pool pinged the server on every release, a second round trip per
//! statement): at most [`PG_CONNECTIONS`], none pinged on checkout or release, a connection back
//! only in a known state, each closed after [`PG_MAX_LIFETIME`] or [`PG_IDLE_TIMEOUT`] idle;
//! several instances share the database.
//!
//! Statements are built with [`query()`] / [`query_scalar`] (`$n` parameters, as sqlx writes them)
//! and run on a [`Db`] (one statement) or a held [`Conn`] (several statements; a transaction with
//! [`Db::begin`]).
//!
//! | module | what |
//! |---|---|
//! | this file | [`Db`] and [`Conn`]: the connection handles, transactions |
//! | `migrate` | the embedded migration list, fed to sqlx's migrator (PostgreSQL) and `rusqlite_migration` (SQLite) |
//! | `sqlite` | opening the SQLite connection |
//! | `pg` | PostgreSQL: typed connections in a `bb8` pool, what state each was left in |
//! | `args` | arguments, rows and columns |
//! | `query` | statements ([`query()`], [`query_scalar`]) and the statement counter |

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use sqlx::migrate::Migrator;
use tokio::sync::{Mutex, OwnedMutexGuard};

use super::error::Result;

mod args;
mod migrate;
mod pg;
mod query;
mod sqlite;

pub(crate) use args::col;
pub use args::{Arg, Column, Columns, On, Row, Section, SqliteRow};
use migrate::{migrate_sqlite, Embedded};
pub use query::{query, query_scalar, statements_run, Done, Query, Scalar};
use sqlite::open_sqlite;

/// Which database a [`Db`] talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Connections one instance keeps to PostgreSQL at most.
pub const PG_CONNECTIONS: usize = 8;
/// How long a checkout waits for a PostgreSQL connection (a free one, or a new one opened).
pub const PG_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);
/// A PostgreSQL connection older than this is closed when released or idle (the server frees
/// what a long-lived session accumulated; a restarted or failed-over server is reconnected to).
pub const PG_MAX_LIFETIME: Duration = Duration::from_secs(30 * 60);
/// A PostgreSQL connection idle this long is closed (after a burst, the pool shrinks back).
pub const PG_IDLE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// Prepared statements an SQLite connection keeps (the server has about fifty distinct texts).
pub const SQLITE_STATEMENT_CACHE: usize = 256;
/// How long an SQLite statement waits for another connection's write lock (only several
/// handles on one file ever wait: one server holds one connection).
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

enum Handle {
    Sqlite(Arc<Mutex<rusqlite::Connection>>),
    Postgres(pg::Pool),
}

/// A database handle. Cheap to clone.
#[derive(Clone)]
pub struct Db {
    handle: Arc<Handle>,
    /// The URL it was opened with (PostgreSQL's `LISTEN` connection opens its own).
    url: Arc<str>,
}

impl fmt::Debug for Db {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Db")
            .field("backend", &self.backend())
            .finish()
    }
}

impl Db {
    /// Connects to `url` and runs the migrations. URLs: `sqlite://path/to/file.db?mode=rwc`,
    /// `sqlite::memory:` (a database that lives as long as the handle), or
    /// `postgres://user@host:port/db`.
    pub async fn connect(url: &str) -> Result<Db> {
        let handle = if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Handle::Postgres(pg::Pool::new(url, PG_CONNECTIONS)?)
        } else {
            Handle::Sqlite(Arc::new(Mutex::new(open_sqlite(url)?)))
        };
        let db = Db {
            handle: Arc::new(handle),
            url: url.into(),
        };
        db.migrate().await?;
        Ok(db)
    }

    /// A fresh in-memory SQLite database (tests, the reference server).
    pub async fn memory() -> Result<Db> {
        Db::connect("sqlite::memory:").await
    }

    /// Runs the pending migrations (idempotent). PostgreSQL: sqlx's migrator (its
    /// `_sqlx_migrations` table, checksums; concurrent runners serialized by an advisory lock).
    /// SQLite: `rusqlite_migration` (the version in `user_version`; an earlier build's
    /// `_sqlx_migrations` was taken over in place when the file was opened, and a database it
    /// cannot take over, or a newer build's, refused untouched: `db/migrate.rs`).
    pub async fn migrate(&self) -> Result<()> {
        match self.handle.as_ref() {
            Handle::Postgres(pool) => {
                let migrator = Migrator::new(Embedded).await?;
                let mut held = pool.acquire().await?;
                let ran = migrator.run_direct(held.start()?).await;
                held.finished(ran.is_ok());
                ran?;
            }
            Handle::Sqlite(conn) => {
                let mut conn = conn.clone().lock_owned().await;
                migrate_sqlite(&mut conn)?;
            }
        }
        Ok(())
    }

    pub fn backend(&self) -> Backend {
        match self.handle.as_ref() {
            Handle::Sqlite(_) => Backend::Sqlite,
            Handle::Postgres(_) => Backend::Postgres,
        }
    }

    /// The URL it was opened with.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Holds one connection for several statements (no transaction).
    pub async fn conn(&self) -> Result<Conn> {
        Ok(Conn {
            held: Some(match self.handle.as_ref() {
                Handle::Sqlite(conn) => Held::Sqlite {
                    conn: conn.clone().lock_owned().await,
                    open: false,
                },
                Handle::Postgres(pool) => Held::Postgres(pool.acquire().await?),
            }),
        })
    }

    /// A transaction on a held connection (SQLite: deferred, so a transaction that writes first
    /// takes the write lock before it reads). Rolled back when dropped uncommitted.
    pub async fn begin(&self) -> Result<Conn> {
        let held = match self.handle.as_ref() {
            Handle::Sqlite(conn) => {
                let conn = conn.clone().lock_owned().await;
                conn.execute_batch("BEGIN")?;
                Held::Sqlite { conn, open: true }
            }
            Handle::Postgres(pool) => Held::Postgres(pool.begin("BEGIN").await?),
        };
        Ok(Conn { held: Some(held) })
    }

    /// A read-only snapshot transaction: on PostgreSQL `REPEATABLE READ, READ ONLY`, opened in the
    /// one statement that begins it; on SQLite a deferred transaction (a snapshot from its first
    /// read). Rolled back when dropped uncommitted.
    pub async fn begin_read(&self) -> Result<Conn> {
        match self.handle.as_ref() {
            Handle::Sqlite(_) => self.begin().await,
            Handle::Postgres(pool) => Ok(Conn {
                held: Some(Held::Postgres(
                    pool.begin("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                        .await?,
                )),
            }),
        }
    }

    /// Closes the handle (a restart in tests): PostgreSQL's pool; SQLite's connection closes
    /// with the last clone.
    pub async fn close(&self) {
        if let Handle::Postgres(pool) = self.handle.as_ref() {
            pool.close().await;
        }
    }
}

enum Held {
    Sqlite {
        conn: OwnedMutexGuard<rusqlite::Connection>,
        /// In a transaction that was neither committed nor rolled back.
        open: bool,
    },
    /// A PostgreSQL connection, in a transaction when [`Db::begin`] opened it (dropped
    /// uncommitted, it is rolled back on a task before it goes back to the pool: `db/pg.rs`).
    Postgres(pg::Held),
}

/// A held connection, possibly in a transaction ([`Db::begin`]).
pub struct Conn {
    held: Option<Held>,
}

impl Conn {
    /// Commits the transaction (a connection without one: nothing to do).
    pub async fn commit(mut self) -> Result<()> {
        match self.held.take() {
            Some(Held::Sqlite { conn, open: true }) => conn.execute_batch("COMMIT")?,
            Some(Held::Postgres(mut held)) if held.in_transaction() => held.commit().await?,
            _ => {}
        }
        Ok(())
    }

    /// Rolls the transaction back.
    pub async fn rollback(mut self) -> Result<()> {
        match self.held.take() {
            Some(Held::Sqlite { conn, open: true }) => conn.execute_batch("ROLLBACK")?,
            Some(Held::Postgres(mut held)) if held.in_transaction() => held.rollback().await?,
            _ => {}
        }
        Ok(())
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        // A PostgreSQL connection rolls its own back when dropped (`db/pg.rs`); SQLite's
        // transaction is rolled back here.
        if let Some(Held::Sqlite { conn, open: true }) = &self.held {
            if let Err(error) = conn.execute_batch("ROLLBACK") {
                tracing::warn!(%error, "SQLite rollback failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn arguments_bind_by_number_and_rows_decode() {
        let db = Db::memory().await.unwrap();
        query("CREATE TABLE t (a TEXT, b BIGINT, c TEXT)")
            .execute(&db)
            .await
            .unwrap();
        let done = query("INSERT INTO t (b, a, c) VALUES ($2, $1, $3), ($2, $1, $3)")
            .bind("x")
            .bind(7_i64)
            .bind(Option::<&str>::None)
            .execute(&db)
            .await
            .unwrap();
        assert_eq!(done.rows_affected(), 2);
        let rows = query("SELECT a, b, c FROM t WHERE a = $1 AND b = $2")
            .bind("x")
            .bind(7_i64)
            .fetch_all(&db)
            .await
            .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].get::<String>("a").unwrap(), "x");
        assert_eq!(rows[0].get::<i64>("b").unwrap(), 7);
        assert_eq!(rows[0].get::<Option<String>>("c").unwrap(), None);
        assert!(rows[0].get::<i64>("a").is_err());
        assert!(rows[0].get::<String>("missing").is_err());
        let count: i64 = query_scalar("SELECT COUNT(*) FROM t")
            .fetch_one(&db)
            .await
            .unwrap();
        assert_eq!(count, 2);
    }

    #[tokio::test]
    async fn an_uncommitted_transaction_rolls_back() {
        let db = Db::memory().await.unwrap();
        query("CREATE TABLE t (a BIGINT)")
            .execute(&db)
            .await
            .unwrap();
        {
            let mut tx = db.begin().await.unwrap();
            query("INSERT INTO t VALUES (1)")
                .execute(&mut tx)
                .await
                .unwrap();
        }
        let tx = db.begin().await.unwrap();
        tx.rollback().await.unwrap();
        let mut tx = db.begin().await.unwrap();
        query("INSERT INTO t VALUES (2)")
            .execute(&mut tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        let values: Vec<i64> = query_scalar("SELECT a FROM t")
            .fetch_all(&db)
            .await
            .unwrap();
        assert_eq!(values, vec![2]);
    }
}
