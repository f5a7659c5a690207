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

/// The versioned migrations, in order: version, description, and the SQL for SQLite and for
/// PostgreSQL (the same text unless a backend needs its own). Each runs once per database
/// (sqlx's `_sqlx_migrations` table records it); a released file is never edited, a change is a
/// new file.
const MIGRATIONS: &[(i64, &str, &str, &str)] = &[
    (1, "schema", SCHEMA, SCHEMA),
    (2, "task title", TASK_TITLE, TASK_TITLE),
    (
        3,
        "revision sequence",
        include_str!("../../migrations/0003_revision_sequence.sqlite.sql"),
        include_str!("../../migrations/0003_revision_sequence.postgres.sql"),
    ),
    (4, "messages by turn", MESSAGES_BY_TURN, MESSAGES_BY_TURN),
    (
        5,
        "event outbox",
        include_str!("../../migrations/0005_event_outbox.sqlite.sql"),
        include_str!("../../migrations/0005_event_outbox.postgres.sql"),
    ),
];

const SCHEMA: &str = include_str!("../../migrations/0001_schema.sql");
const TASK_TITLE: &str = include_str!("../../migrations/0002_task_title.sql");
const MESSAGES_BY_TURN: &str = include_str!("../../migrations/0004_messages_turn_index.sql");

/// The embedded migrations of one backend as an sqlx migration source.
#[derive(Debug)]
struct Embedded(Backend);

type BoxDynError = Box<dyn std::error::Error + Send + Sync>;

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = std::result::Result<Vec<Migration>, BoxDynError>> + Send + 's>>
    {
        Box::pin(async move {
            Ok(MIGRATIONS
                .iter()
                .map(|&(version, description, sqlite, postgres)| {
                    let sql = match self.0 {
                        Backend::Sqlite => sqlite,
                        Backend::Postgres => postgres,
                    };
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
    /// The URL it was opened with (PostgreSQL's `LISTEN` connection opens its own).
    url: std::sync::Arc<str>,
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
        let options = if backend == Backend::Sqlite && !memory {
            // With WAL (switched on by the server at startup): a commit is a WAL append, synced
            // at checkpoints, not per commit. Durable when the process dies; a power loss may
            // drop the last commits (never corrupts). The epoch change syncs itself
            // (src/server/revision.rs), so revisions stay ordered across such a loss.
            options.after_connect(|conn, _meta| {
                Box::pin(async move {
                    sqlx::query("PRAGMA synchronous = NORMAL")
                        .execute(conn)
                        .await?;
                    Ok(())
                })
            })
        } else {
            options
        };
        let pool = options.connect(url).await?;
        let db = Db {
            pool,
            backend,
            url: url.into(),
        };
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
        let migrator = Migrator::new(Embedded(self.backend)).await?;
        migrator.run(&self.pool).await?;
        Ok(())
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The URL it was opened with.
    pub fn url(&self) -> &str {
        &self.url
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
