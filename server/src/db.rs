//! The database handle: SQLite (default) or PostgreSQL, one SQL text for both, with the versioned
//! migrations of `server/migrations/` embedded in the binary.
//!
//! **SQLite** is one `rusqlite` connection behind an async mutex, run on the calling task: a
//! statement costs what SQLite itself costs (a few microseconds for an indexed read), with no
//! worker thread to hand it to and no pool to check a connection out of. SQLite has one writer
//! anyway, and one connection keeps its page cache warm (in WAL mode every write by another
//! connection would discard it). Statements are prepared once per text and kept
//! ([`SQLITE_STATEMENT_CACHE`]). **PostgreSQL** is a pool of typed sqlx connections of our own
//! (`db/pg.rs`: sqlx's pool pinged the server on every release, a second round trip per
//! statement); several instances share the database.
//!
//! Statements are built with [`query`] / [`query_scalar`] (`$n` parameters, as sqlx writes them)
//! and run on a [`Db`] (one statement) or a held [`Conn`] (several statements; a transaction with
//! [`Db::begin`]).

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use sqlx::postgres::PgRow;
use tokio::sync::{Mutex, OwnedMutexGuard};

use super::error::{Result, ServerError};

mod pg;

/// Which database a [`Db`] talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The versioned migrations, in order: version, description, and the SQL for SQLite and for
/// PostgreSQL (the same text unless a backend needs its own). Each runs once per database
/// (the `_sqlx_migrations` table records it, with its checksum); a released file is never
/// edited, a change is a new file.
const MIGRATIONS: &[(i64, &str, &str, &str)] = &[
    (1, "schema", SCHEMA, SCHEMA),
    (2, "task title", TASK_TITLE, TASK_TITLE),
    (
        3,
        "revision sequence",
        include_str!("../migrations/0003_revision_sequence.sqlite.sql"),
        include_str!("../migrations/0003_revision_sequence.postgres.sql"),
    ),
    (4, "messages by turn", MESSAGES_BY_TURN, MESSAGES_BY_TURN),
    (
        5,
        "event outbox",
        include_str!("../migrations/0005_event_outbox.sqlite.sql"),
        include_str!("../migrations/0005_event_outbox.postgres.sql"),
    ),
    (6, "turn order keys", TURN_ORDER_KEYS, TURN_ORDER_KEYS),
    (7, "turn partial indexes", TURN_PARTIAL, TURN_PARTIAL),
    (
        8,
        "outbox notify rows",
        include_str!("../migrations/0008_outbox_notify_rows.sqlite.sql"),
        include_str!("../migrations/0008_outbox_notify_rows.postgres.sql"),
    ),
    (
        9,
        "message sequence",
        include_str!("../migrations/0009_message_sequence.sqlite.sql"),
        include_str!("../migrations/0009_message_sequence.postgres.sql"),
    ),
];

const SCHEMA: &str = include_str!("../migrations/0001_schema.sql");
const TASK_TITLE: &str = include_str!("../migrations/0002_task_title.sql");
const MESSAGES_BY_TURN: &str = include_str!("../migrations/0004_messages_turn_index.sql");
const TURN_ORDER_KEYS: &str = include_str!("../migrations/0006_turn_order_keys.sql");
const TURN_PARTIAL: &str = include_str!("../migrations/0007_turn_partial_indexes.sql");

/// Connections one instance keeps to PostgreSQL at most.
pub const PG_CONNECTIONS: usize = 8;

/// Prepared statements an SQLite connection keeps (the server has about fifty distinct texts).
pub const SQLITE_STATEMENT_CACHE: usize = 256;
/// How long an SQLite statement waits for another connection's write lock (only several
/// handles on one file ever wait: one server holds one connection).
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Statements run by this process (every backend; `BEGIN`/`COMMIT` not counted).
static STATEMENTS: AtomicU64 = AtomicU64::new(0);

/// How many statements this process ran so far (the load benchmark's statements per event).
pub fn statements_run() -> u64 {
    STATEMENTS.load(Ordering::Relaxed)
}

fn migrations(backend: Backend) -> Vec<Migration> {
    MIGRATIONS
        .iter()
        .map(|&(version, description, sqlite, postgres)| {
            let sql = match backend {
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
        .collect()
}

/// The embedded migrations of one backend as an sqlx migration source (PostgreSQL).
#[derive(Debug)]
struct Embedded(Backend);

type BoxDynError = Box<dyn std::error::Error + Send + Sync>;

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = std::result::Result<Vec<Migration>, BoxDynError>> + Send + 's>>
    {
        Box::pin(async move { Ok(migrations(self.0)) })
    }
}

enum Handle {
    Sqlite(Arc<Mutex<rusqlite::Connection>>),
    Postgres(Arc<pg::Pool>),
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

/// Where an SQLite URL points: `sqlite::memory:`, or a file with SQLite's URI parameters
/// (`mode=rwc` creates it; `sqlite://path`, `sqlite:path`).
fn sqlite_target(url: &str) -> Option<String> {
    let rest = url.strip_prefix("sqlite:")?;
    if rest.contains(":memory:") {
        return None;
    }
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    // Characters SQLite's URI parser would take for syntax.
    let path = path
        .replace('%', "%25")
        .replace('#', "%23")
        .replace('?', "%3f");
    Some(if query.is_empty() {
        format!("file:{path}")
    } else {
        format!("file:{path}?{query}")
    })
}

/// Opens the one SQLite connection: foreign keys on (as sqlx did), WAL with
/// `synchronous = NORMAL` for a file (a commit is a WAL append, synced at checkpoints: durable
/// when the process dies, a power loss may drop the last commits, never corrupts; the epoch
/// change syncs itself, server/src/revision.rs).
fn open_sqlite(url: &str) -> Result<rusqlite::Connection> {
    use rusqlite::OpenFlags;
    let target = sqlite_target(url);
    let conn = match &target {
        None => rusqlite::Connection::open_in_memory()?,
        Some(uri) => rusqlite::Connection::open_with_flags(
            uri,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?,
    };
    conn.busy_timeout(SQLITE_BUSY_TIMEOUT)?;
    conn.set_prepared_statement_cache_capacity(SQLITE_STATEMENT_CACHE);
    conn.execute_batch("PRAGMA foreign_keys = ON")?;
    if target.is_some() {
        // Persistent in the file; a read-only or busy database keeps its journal.
        if let Err(error) = conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())) {
            tracing::warn!(%error, "could not switch SQLite to WAL; keeping its journal");
        }
        conn.execute_batch("PRAGMA synchronous = NORMAL")?;
    }
    Ok(conn)
}

impl Db {
    /// Connects to `url` and runs the migrations. URLs: `sqlite://path/to/file.db?mode=rwc`,
    /// `sqlite::memory:` (a database that lives as long as the handle), or
    /// `postgres://user@host:port/db`.
    pub async fn connect(url: &str) -> Result<Db> {
        let handle = if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            let pool = pg::Pool::new(url, PG_CONNECTIONS, Duration::from_secs(30))?;
            Handle::Postgres(Arc::new(pool))
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

    /// Runs the pending migrations (idempotent; PostgreSQL serializes concurrent runners with an
    /// advisory lock). SQLite keeps sqlx's bookkeeping (`_sqlx_migrations`, same checksums), so a
    /// database migrated by an earlier build is recognized.
    pub async fn migrate(&self) -> Result<()> {
        match self.handle.as_ref() {
            Handle::Postgres(pool) => {
                let migrator = Migrator::new(Embedded(Backend::Postgres)).await?;
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

fn migrate_sqlite(conn: &mut rusqlite::Connection) -> Result<()> {
    let failed = |detail: String| ServerError::Invalid(format!("migration: {detail}"));
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS _sqlx_migrations ( \
         version BIGINT PRIMARY KEY, description TEXT NOT NULL, \
         installed_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, success BOOLEAN NOT NULL, \
         checksum BLOB NOT NULL, execution_time BIGINT NOT NULL)",
    )?;
    let dirty: Option<i64> = conn
        .query_row(
            "SELECT version FROM _sqlx_migrations WHERE success = false ORDER BY version LIMIT 1",
            [],
            |row| row.get(0),
        )
        .map(Some)
        .or_else(|error| match error {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            other => Err(other),
        })?;
    if let Some(version) = dirty {
        return Err(failed(format!(
            "migration {version} was partially applied; fix and remove it from _sqlx_migrations"
        )));
    }
    let applied: Vec<(i64, Vec<u8>)> = {
        let mut statement =
            conn.prepare("SELECT version, checksum FROM _sqlx_migrations ORDER BY version")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for migration in migrations(Backend::Sqlite) {
        if let Some((_, checksum)) = applied.iter().find(|(v, _)| *v == migration.version) {
            if checksum.as_slice() != migration.checksum.as_ref() {
                return Err(failed(format!(
                    "migration {} was applied with other contents",
                    migration.version
                )));
            }
            continue;
        }
        let started = Instant::now();
        let tx = conn.transaction()?;
        tx.execute_batch(&migration.sql)?;
        tx.execute(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, \
             execution_time) VALUES (?1, ?2, TRUE, ?3, ?4)",
            rusqlite::params![
                migration.version,
                migration.description.as_ref(),
                migration.checksum.as_ref(),
                i64::try_from(started.elapsed().as_nanos()).unwrap_or(i64::MAX),
            ],
        )?;
        tx.commit()?;
    }
    Ok(())
}

enum Held {
    Sqlite {
        conn: OwnedMutexGuard<rusqlite::Connection>,
        /// In a transaction that was neither committed nor rolled back.
        open: bool,
    },
    /// A PostgreSQL connection, in a transaction when [`Db::begin`] opened it (dropped
    /// uncommitted, the pool rolls it back: `db/pg.rs`).
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
        // PostgreSQL's pool rolls its own back when the connection drops (`db/pg.rs`); SQLite's
        // transaction is rolled back here.
        if let Some(Held::Sqlite { conn, open: true }) = &self.held {
            if let Err(error) = conn.execute_batch("ROLLBACK") {
                tracing::warn!(%error, "SQLite rollback failed");
            }
        }
    }
}

/// A statement argument.
#[derive(Clone, Debug)]
pub enum Arg<'q> {
    Text(Cow<'q, str>),
    /// A text-typed NULL.
    NullText,
    /// An integer-typed NULL.
    NullInt,
    Int(i64),
    Real(f64),
}

impl From<f64> for Arg<'_> {
    fn from(value: f64) -> Self {
        Arg::Real(value)
    }
}

impl<'q> From<&'q str> for Arg<'q> {
    fn from(value: &'q str) -> Self {
        Arg::Text(Cow::Borrowed(value))
    }
}
impl<'q> From<&'q String> for Arg<'q> {
    fn from(value: &'q String) -> Self {
        Arg::Text(Cow::Borrowed(value))
    }
}
impl From<String> for Arg<'_> {
    fn from(value: String) -> Self {
        Arg::Text(Cow::Owned(value))
    }
}
impl<'q> From<Option<&'q str>> for Arg<'q> {
    fn from(value: Option<&'q str>) -> Self {
        value.map_or(Arg::NullText, Arg::from)
    }
}
impl From<Option<String>> for Arg<'_> {
    fn from(value: Option<String>) -> Self {
        value.map_or(Arg::NullText, Arg::from)
    }
}
impl From<i64> for Arg<'_> {
    fn from(value: i64) -> Self {
        Arg::Int(value)
    }
}
impl From<Option<i64>> for Arg<'_> {
    fn from(value: Option<i64>) -> Self {
        value.map_or(Arg::NullInt, Arg::Int)
    }
}

/// Where a statement runs: on the database (a connection for this statement only) or on a held
/// connection.
pub enum On<'e> {
    Db(&'e Db),
    Conn(&'e mut Conn),
}

impl<'e> From<&'e Db> for On<'e> {
    fn from(db: &'e Db) -> Self {
        On::Db(db)
    }
}
impl<'e> From<&'e mut Conn> for On<'e> {
    fn from(conn: &'e mut Conn) -> Self {
        On::Conn(conn)
    }
}

/// A row: column names and values.
pub enum Row {
    Sqlite(SqliteRow),
    Postgres(PgRow),
}

/// An SQLite row, read out of its statement.
pub struct SqliteRow {
    columns: Arc<[String]>,
    values: Vec<rusqlite::types::Value>,
}

impl fmt::Debug for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Row::Sqlite(row) => f
                .debug_map()
                .entries(row.columns.iter().zip(row.values.iter()))
                .finish(),
            Row::Postgres(_) => f.write_str("Row(PostgreSQL)"),
        }
    }
}

/// A type a column decodes to.
pub trait Column: Sized {
    #[doc(hidden)]
    fn from_sqlite(value: &rusqlite::types::Value) -> Option<Self>;
    #[doc(hidden)]
    fn from_pg(row: &PgRow, index: usize) -> std::result::Result<Self, sqlx::Error>;
}

macro_rules! column {
    ($t:ty, pg: |$row:ident, $index:ident| $pg:expr, $($pattern:pat => $value:expr),+) => {
        impl Column for $t {
            fn from_sqlite(value: &rusqlite::types::Value) -> Option<Self> {
                use rusqlite::types::Value;
                #[allow(unreachable_patterns)]
                match value {
                    $($pattern => Some($value),)+
                    _ => None,
                }
            }
            fn from_pg($row: &PgRow, $index: usize) -> std::result::Result<Self, sqlx::Error> {
                $pg
            }
        }
    };
}

use sqlx::Row as _;

column!(String, pg: |row, index| row.try_get(index), Value::Text(text) => text.clone());
// An integer column of any width (`SELECT 1` is an `int4`).
column!(i64, pg: |row, index| row
    .try_get::<i64, _>(index)
    .or_else(|error| row.try_get::<i32, _>(index).map(i64::from).map_err(|_| error)),
    Value::Integer(n) => *n);
column!(Option<String>, pg: |row, index| row.try_get(index),
    Value::Null => None, Value::Text(text) => Some(text.clone()));
column!(Option<i64>, pg: |row, index| row
    .try_get::<Option<i64>, _>(index)
    .or_else(|error| {
        row.try_get::<Option<i32>, _>(index)
            .map(|n| n.map(i64::from))
            .map_err(|_| error)
    }),
    Value::Null => None, Value::Integer(n) => Some(*n));

impl Row {
    /// The index of the first column named `name` at or after `from`.
    fn index(&self, name: &str, from: usize) -> Option<usize> {
        let found = match self {
            Row::Sqlite(row) => row.columns.iter().skip(from).position(|c| c == name),
            Row::Postgres(row) => {
                use sqlx::Column as _;
                sqlx::Row::columns(row)
                    .iter()
                    .skip(from)
                    .position(|c| c.name() == name)
            }
        };
        found.map(|i| i.saturating_add(from))
    }

    /// The columns after the column named `marker`: one part of a joined statement whose parts
    /// repeat column names (each part's reader reads its own section).
    pub fn section(&self, marker: &str) -> std::result::Result<Section<'_>, String> {
        let at = self
            .index(marker, 0)
            .ok_or_else(|| format!("no column {marker:?}"))?;
        Ok(Section {
            row: self,
            from: at.saturating_add(1),
        })
    }

    /// The value of column `index`.
    pub fn get_at<T: Column>(&self, index: usize) -> std::result::Result<T, String> {
        match self {
            Row::Sqlite(row) => match row.values.get(index) {
                Some(value) => T::from_sqlite(value).ok_or_else(|| {
                    format!(
                        "column {index}: unexpected {}",
                        match value {
                            rusqlite::types::Value::Null => "NULL",
                            rusqlite::types::Value::Integer(_) => "integer",
                            rusqlite::types::Value::Real(_) => "real",
                            rusqlite::types::Value::Text(_) => "text",
                            rusqlite::types::Value::Blob(_) => "blob",
                        }
                    )
                }),
                None => Err(format!("no column {index}")),
            },
            Row::Postgres(row) => T::from_pg(row, index).map_err(|e| e.to_string()),
        }
    }

    /// The value of column `name`.
    pub fn get<T: Column>(&self, name: &str) -> std::result::Result<T, String> {
        self.get_from(name, 0)
    }

    fn get_from<T: Column>(&self, name: &str, from: usize) -> std::result::Result<T, String> {
        let index = self
            .index(name, from)
            .ok_or_else(|| format!("no column {name:?}"))?;
        self.get_at(index)
            .map_err(|error| format!("column {name:?}: {error}"))
    }
}

/// The columns of a row after a marker column ([`Row::section`]).
#[derive(Clone, Copy, Debug)]
pub struct Section<'r> {
    row: &'r Row,
    from: usize,
}

/// Columns read by name: a whole [`Row`], or one [`Section`] of it.
pub trait Columns {
    /// The value of the first column named `name` (in the section).
    fn column<T: Column>(&self, name: &str) -> std::result::Result<T, String>;
}

impl Columns for Row {
    fn column<T: Column>(&self, name: &str) -> std::result::Result<T, String> {
        self.get(name)
    }
}

impl Columns for Section<'_> {
    fn column<T: Column>(&self, name: &str) -> std::result::Result<T, String> {
        self.row.get_from(name, self.from)
    }
}

/// Reads a column, mapping a decode failure to a corrupt-row error.
pub(crate) fn col<T: Column>(row: &impl Columns, table: &'static str, name: &str) -> Result<T> {
    row.column(name)
        .map_err(|e| ServerError::corrupt(table, name, e))
}

/// What a statement that returns no rows did.
#[derive(Clone, Copy, Debug)]
pub struct Done {
    rows_affected: u64,
}

impl Done {
    pub fn rows_affected(&self) -> u64 {
        self.rows_affected
    }
}

/// A statement and its arguments.
#[derive(Clone, Debug)]
#[must_use = "a query does nothing until it is run"]
pub struct Query<'q> {
    sql: Cow<'q, str>,
    args: Vec<Arg<'q>>,
}

/// A statement: `$1`, `$2`, … are its arguments, in [`Query::bind`] order.
pub fn query<'q>(sql: impl Into<Cow<'q, str>>) -> Query<'q> {
    Query {
        sql: sql.into(),
        args: Vec::new(),
    }
}

/// A statement whose rows are read as their first column.
pub fn query_scalar<'q, T: Column>(sql: impl Into<Cow<'q, str>>) -> Scalar<'q, T> {
    Scalar {
        query: query(sql),
        column: PhantomData,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    Nothing,
    Rows,
    First,
}

impl<'q> Query<'q> {
    pub fn bind(mut self, arg: impl Into<Arg<'q>>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub async fn execute<'e>(self, on: impl Into<On<'e>>) -> Result<Done> {
        let (_, done) = self.run(on.into(), Want::Nothing).await?;
        Ok(done)
    }

    pub async fn fetch_all<'e>(self, on: impl Into<On<'e>>) -> Result<Vec<Row>> {
        Ok(self.run(on.into(), Want::Rows).await?.0)
    }

    pub async fn fetch_optional<'e>(self, on: impl Into<On<'e>>) -> Result<Option<Row>> {
        Ok(self.run(on.into(), Want::First).await?.0.into_iter().next())
    }

    pub async fn fetch_one<'e>(self, on: impl Into<On<'e>>) -> Result<Row> {
        self.fetch_optional(on)
            .await?
            .ok_or_else(|| ServerError::Invalid("the statement returned no row".into()))
    }

    async fn run(&self, on: On<'_>, want: Want) -> Result<(Vec<Row>, Done)> {
        STATEMENTS.fetch_add(1, Ordering::Relaxed);
        match on {
            On::Db(db) => match db.handle.as_ref() {
                Handle::Sqlite(conn) => {
                    let conn = conn.lock().await;
                    self.run_sqlite(&conn, want)
                }
                Handle::Postgres(pool) => self.run_pg(&mut pool.acquire().await?, want).await,
            },
            On::Conn(conn) => match conn.held.as_mut() {
                Some(Held::Sqlite { conn, .. }) => self.run_sqlite(conn, want),
                Some(Held::Postgres(held)) => self.run_pg(held, want).await,
                None => Err(ServerError::Invalid("the connection was released".into())),
            },
        }
    }

    fn run_sqlite(&self, conn: &rusqlite::Connection, want: Want) -> Result<(Vec<Row>, Done)> {
        use rusqlite::types::{Value, ValueRef};
        let mut statement = conn.prepare_cached(&self.sql)?;
        for index in 1..=statement.parameter_count() {
            // `$n` (or `?n`) names argument n; `?` takes the next by position.
            let number = statement
                .parameter_name(index)
                .and_then(|name| name.get(1..))
                .and_then(|digits| digits.parse::<usize>().ok())
                .unwrap_or(index);
            let arg = number
                .checked_sub(1)
                .and_then(|i| self.args.get(i))
                .ok_or_else(|| {
                    ServerError::Invalid(format!("statement argument {number} not bound"))
                })?;
            match arg {
                Arg::Text(text) => statement.raw_bind_parameter(index, text.as_ref())?,
                Arg::NullText | Arg::NullInt => {
                    statement.raw_bind_parameter(index, rusqlite::types::Null)?;
                }
                Arg::Int(n) => statement.raw_bind_parameter(index, n)?,
                Arg::Real(x) => statement.raw_bind_parameter(index, x)?,
            }
        }
        let columns: Arc<[String]> = if want == Want::Nothing {
            Arc::from(Vec::new())
        } else {
            statement
                .column_names()
                .into_iter()
                .map(str::to_owned)
                .collect()
        };
        let width = columns.len();
        let mut out = Vec::new();
        {
            let mut rows = statement.raw_query();
            while let Some(row) = rows.next()? {
                if want == Want::Nothing || (want == Want::First && !out.is_empty()) {
                    continue;
                }
                let mut values = Vec::with_capacity(width);
                for i in 0..width {
                    values.push(match row.get_ref(i)? {
                        ValueRef::Null => Value::Null,
                        ValueRef::Integer(n) => Value::Integer(n),
                        ValueRef::Real(x) => Value::Real(x),
                        ValueRef::Text(bytes) => {
                            Value::Text(String::from_utf8(bytes.to_vec()).map_err(|e| {
                                ServerError::corrupt("(row)", &format!("column {i}"), e)
                            })?)
                        }
                        ValueRef::Blob(bytes) => Value::Blob(bytes.to_vec()),
                    });
                }
                out.push(Row::Sqlite(SqliteRow {
                    columns: columns.clone(),
                    values,
                }));
            }
        }
        Ok((
            out,
            Done {
                rows_affected: conn.changes(),
            },
        ))
    }

    async fn run_pg(&self, held: &mut pg::Held, want: Want) -> Result<(Vec<Row>, Done)> {
        let mut q = sqlx::query::<sqlx::Postgres>(self.sql.as_ref());
        for arg in &self.args {
            q = match arg {
                Arg::Text(text) => q.bind(text.as_ref()),
                Arg::NullText => q.bind(Option::<&str>::None),
                Arg::NullInt => q.bind(Option::<i64>::None),
                Arg::Int(n) => q.bind(*n),
                Arg::Real(x) => q.bind(*x),
            };
        }
        let conn = held.start()?;
        let result = match want {
            Want::Nothing => q.execute(&mut *conn).await.map(|done| {
                (
                    Vec::new(),
                    Done {
                        rows_affected: done.rows_affected(),
                    },
                )
            }),
            Want::Rows => q.fetch_all(&mut *conn).await.map(|rows| {
                (
                    rows.into_iter().map(Row::Postgres).collect(),
                    Done { rows_affected: 0 },
                )
            }),
            Want::First => q.fetch_optional(&mut *conn).await.map(|row| {
                (
                    row.into_iter().map(Row::Postgres).collect(),
                    Done { rows_affected: 0 },
                )
            }),
        };
        held.finished(pg::answered(&result));
        Ok(result?)
    }
}

/// A statement whose rows are read as their first column ([`query_scalar`]).
#[must_use = "a query does nothing until it is run"]
pub struct Scalar<'q, T> {
    query: Query<'q>,
    column: PhantomData<fn() -> T>,
}

fn first<T: Column>(row: &Row) -> Result<T> {
    row.get_at(0)
        .map_err(|e| ServerError::corrupt("(scalar)", "0", e))
}

impl<'q, T: Column> Scalar<'q, T> {
    pub fn bind(mut self, arg: impl Into<Arg<'q>>) -> Self {
        self.query = self.query.bind(arg);
        self
    }

    pub async fn fetch_all<'e>(self, on: impl Into<On<'e>>) -> Result<Vec<T>> {
        self.query.fetch_all(on).await?.iter().map(first).collect()
    }

    pub async fn fetch_optional<'e>(self, on: impl Into<On<'e>>) -> Result<Option<T>> {
        self.query
            .fetch_optional(on)
            .await?
            .as_ref()
            .map(first)
            .transpose()
    }

    pub async fn fetch_one<'e>(self, on: impl Into<On<'e>>) -> Result<T> {
        first(&self.query.fetch_one(on).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_become_sqlite_uris() {
        assert_eq!(sqlite_target("sqlite::memory:"), None);
        assert_eq!(
            sqlite_target("sqlite:/tmp/x.db?mode=rwc").as_deref(),
            Some("file:/tmp/x.db?mode=rwc")
        );
        assert_eq!(
            sqlite_target("sqlite://tasks.db?mode=rwc").as_deref(),
            Some("file:tasks.db?mode=rwc")
        );
        assert_eq!(
            sqlite_target("sqlite:a#b%c.db").as_deref(),
            Some("file:a%23b%25c.db")
        );
    }

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

    #[tokio::test]
    async fn migrations_run_once_and_are_recognized_again() {
        let dir =
            std::env::temp_dir().join(format!("tp-migrate-{}.db", uuid::Uuid::new_v4().simple()));
        let url = format!("sqlite:{}?mode=rwc", dir.display());
        let db = Db::connect(&url).await.unwrap();
        let versions: Vec<i64> = query_scalar("SELECT version FROM _sqlx_migrations")
            .fetch_all(&db)
            .await
            .unwrap();
        assert_eq!(versions.len(), MIGRATIONS.len());
        drop(db);
        let again = Db::connect(&url).await.unwrap();
        let count: i64 = query_scalar("SELECT COUNT(*) FROM _sqlx_migrations")
            .fetch_one(&again)
            .await
            .unwrap();
        assert_eq!(usize::try_from(count).unwrap(), MIGRATIONS.len());
        // A changed migration text is refused.
        query("UPDATE _sqlx_migrations SET checksum = x'00' WHERE version = 1")
            .execute(&again)
            .await
            .unwrap();
        drop(again);
        assert!(Db::connect(&url).await.is_err());
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", dir.display()));
        }
    }
}
