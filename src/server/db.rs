//! The database handle: one `sqlx` Any pool over SQLite (default) or PostgreSQL, with the
//! versioned migrations of `migrations/` embedded in the binary.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use sqlx::AnyPool;

use super::error::Result;

/// Which database a [`Db`] talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The versioned migrations, in order. Each file runs once per database (sqlx's
/// `_sqlx_migrations` table records it); a released file is never edited, a change is a new file.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        "schema",
        include_str!("../../migrations/0001_schema.sql"),
    ),
    (
        2,
        "task title",
        include_str!("../../migrations/0002_task_title.sql"),
    ),
];

/// The embedded migrations as an sqlx migration source.
#[derive(Debug)]
struct Embedded;

type BoxDynError = Box<dyn std::error::Error + Send + Sync>;

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = std::result::Result<Vec<Migration>, BoxDynError>> + Send + 's>>
    {
        Box::pin(async move {
            Ok(MIGRATIONS
                .iter()
                .map(|&(version, description, sql)| {
                    Migration::new(
                        version,
                        Cow::Borrowed(description),
                        MigrationType::Simple,
                        Cow::Borrowed(sql),
                        false,
                    )
                })
                .collect())
        })
    }
}

/// A connection pool plus the backend it talks to. Cheap to clone.
#[derive(Clone)]
pub struct Db {
    pool: AnyPool,
    backend: Backend,
}

impl fmt::Debug for Db {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Db")
            .field("backend", &self.backend)
            .finish()
    }
}

impl Db {
    /// Connects to `url` and runs the migrations. URLs: `sqlite://path/to/file.db?mode=rwc`,
    /// `sqlite::memory:` (one connection, kept open for the pool's life), or
    /// `postgres://user@host:port/db`.
    pub async fn connect(url: &str) -> Result<Db> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else {
            Backend::Sqlite
        };
        let memory = backend == Backend::Sqlite && url.contains(":memory:");
        let options = if memory {
            // An in-memory SQLite database lives as long as its one connection.
            AnyPoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
        } else {
            AnyPoolOptions::new()
                .max_connections(8)
                .acquire_timeout(Duration::from_secs(30))
        };
        let pool = options.connect(url).await?;
        let db = Db { pool, backend };
        db.migrate().await?;
        Ok(db)
    }

    /// A fresh in-memory SQLite database (tests, the reference server).
    pub async fn memory() -> Result<Db> {
        Db::connect("sqlite::memory:").await
    }

    /// Runs the pending migrations (idempotent; PostgreSQL serializes concurrent runners with an
    /// advisory lock).
    pub async fn migrate(&self) -> Result<()> {
        let migrator = Migrator::new(Embedded).await?;
        migrator.run(&self.pool).await?;
        Ok(())
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Closes the pool (a restart in tests).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Reads a column, mapping a decode failure to a corrupt-row error.
pub(crate) fn col<'r, T>(row: &'r AnyRow, table: &'static str, name: &str) -> Result<T>
where
    T: sqlx::Decode<'r, sqlx::Any> + sqlx::Type<sqlx::Any>,
{
    use sqlx::Row;
    row.try_get::<T, _>(name)
        .map_err(|e| super::error::ServerError::corrupt(table, name, e))
}
