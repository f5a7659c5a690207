//! The embedded migrations (`server/migrations/`, one list for both backends) and their runners,
//! both maintained libraries: PostgreSQL runs them through sqlx's migrator (an sqlx migration
//! source here; sqlx keeps its `_sqlx_migrations` table on PostgreSQL), SQLite through
//! `rusqlite_migration`, which records the schema version in SQLite's `user_version` and applies
//! the pending migrations in one transaction.
//!
//! Earlier builds kept sqlx's bookkeeping on SQLite too (sqlx's migrator, then an imitation of
//! it): a `_sqlx_migrations` table, one row per applied migration with sqlx's checksum of its
//! SQLite text, and `user_version` 0. Such a database is migrated in place when it is opened
//! ([`prepare_sqlite`], before the connection switches to WAL): when its rows are exactly this
//! build's migrations 1 to n, each applied whole and with the checksum of this build's text, one
//! transaction sets `user_version` to n and drops the table, and `rusqlite_migration` continues
//! from n + 1. Anything else (a migration marked failed, another text, a gap, a version this build
//! does not know) is refused before anything is written, and so is a `user_version` beyond this
//! build's migrations (a newer build's database). Nothing here deletes or empties a database.
//!
//! That is the only earlier layout: the first server build (3168969) already ran sqlx's migrator
//! on SQLite, and every build until 09ffcab kept its table. Two development ranges, never
//! released, left rows that are refused here: a migration 10 (a96e57a to 11a7f23^, a no-op on
//! SQLite; its checksum is not that of this build's migration 10, the inbox sidecar) and another
//! text of migration 9 (5f1273e to 86b3542^).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use rusqlite::TransactionBehavior;
use rusqlite_migration::{Migrations, M};
use sqlx::migrate::{Migration, MigrationSource, MigrationType};

use crate::error::{Result, ServerError};

use super::Backend;

/// The versioned migrations, in order: version, description, and the SQL for SQLite and for
/// PostgreSQL (the same text unless a backend needs its own). Versions are 1, 2, … in order
/// (SQLite's `user_version` is the number applied). Each runs once per database; a released file
/// is never edited (PostgreSQL checks its checksum), a change is a new file.
pub(super) const MIGRATIONS: &[(i64, &str, &str, &str)] = &[
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
    (6, "turn order keys", TURN_ORDER_KEYS, TURN_ORDER_KEYS),
    (7, "turn partial indexes", TURN_PARTIAL, TURN_PARTIAL),
    (
        8,
        "outbox notify rows",
        include_str!("../../migrations/0008_outbox_notify_rows.sqlite.sql"),
        include_str!("../../migrations/0008_outbox_notify_rows.postgres.sql"),
    ),
    (
        9,
        "message sequence",
        include_str!("../../migrations/0009_message_sequence.sqlite.sql"),
        include_str!("../../migrations/0009_message_sequence.postgres.sql"),
    ),
    (10, "inbox sidecar", INBOX_SIDECAR, INBOX_SIDECAR),
];

const SCHEMA: &str = include_str!("../../migrations/0001_schema.sql");
const TASK_TITLE: &str = include_str!("../../migrations/0002_task_title.sql");
const MESSAGES_BY_TURN: &str = include_str!("../../migrations/0004_messages_turn_index.sql");
const TURN_ORDER_KEYS: &str = include_str!("../../migrations/0006_turn_order_keys.sql");
const TURN_PARTIAL: &str = include_str!("../../migrations/0007_turn_partial_indexes.sql");
const INBOX_SIDECAR: &str = include_str!("../../migrations/0010_inbox_sidecar.sql");

/// One backend's migrations as sqlx takes them (its checksum is the SHA-384 of the SQL text):
/// PostgreSQL's for its migrator, SQLite's for the checksums an earlier build recorded.
fn sqlx_migrations(backend: Backend) -> Vec<Migration> {
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

/// The embedded PostgreSQL migrations as an sqlx migration source.
#[derive(Debug)]
pub(super) struct Embedded;

type BoxDynError = Box<dyn std::error::Error + Send + Sync>;

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = std::result::Result<Vec<Migration>, BoxDynError>> + Send + 's>>
    {
        Box::pin(async { Ok(sqlx_migrations(Backend::Postgres)) })
    }
}

/// SQLite's migrations, in order (the `n`th sets `user_version` to `n`).
fn sqlite_migrations() -> Migrations<'static> {
    Migrations::new(
        MIGRATIONS
            .iter()
            .map(|&(_, _, sqlite, _)| M::up(sqlite))
            .collect(),
    )
}

/// Applies the pending SQLite migrations (none: nothing written). A database from a newer build
/// is refused first with [`ServerError::SqliteRefused`] (`rusqlite_migration` would refuse it too,
/// as `DatabaseTooFarAhead`, without writing).
pub(super) fn migrate_sqlite(conn: &mut rusqlite::Connection) -> Result<()> {
    schema_version(conn)?;
    sqlite_migrations().to_latest(conn)?;
    Ok(())
}

/// Readies an SQLite file for [`migrate_sqlite`] before anything is written to it (the caller
/// then switches it to WAL): a database from a newer build is refused, one with an earlier
/// build's `_sqlx_migrations` is migrated in place or refused (module docs). Reads only, unless
/// it takes over that table.
pub(super) fn prepare_sqlite(conn: &mut rusqlite::Connection) -> Result<()> {
    schema_version(conn)?;
    if !has_sqlx_table(conn)? {
        return Ok(());
    }
    // IMMEDIATE: no other connection writes between the check and the takeover. A refusal rolls
    // back a transaction that wrote nothing.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if !has_sqlx_table(&tx)? {
        return Ok(()); // another connection took it over meanwhile
    }
    let version = schema_version(&tx)?;
    if version != 0 {
        return Err(refused(format!(
            "it has both a schema version (user_version {version}) and an earlier build's \
             _sqlx_migrations table; no build of this server leaves both"
        )));
    }
    let applied = sqlx_rows_version(&sqlx_rows(&tx)?).map_err(refused)?;
    tx.pragma_update(None, "user_version", applied)?;
    tx.execute_batch("DROP TABLE _sqlx_migrations")?;
    tx.commit()?;
    tracing::info!(
        version = applied,
        "migrated an earlier build's SQLite bookkeeping in place (_sqlx_migrations to \
         user_version); no row changed"
    );
    Ok(())
}

fn refused(detail: String) -> ServerError {
    ServerError::SqliteRefused(detail)
}

/// The database's `user_version`, refused beyond this build's migrations (a newer build's).
fn schema_version(conn: &rusqlite::Connection) -> Result<usize> {
    let version: i64 =
        conn.query_row("SELECT user_version FROM pragma_user_version", [], |row| {
            row.get(0)
        })?;
    match usize::try_from(version) {
        Ok(known) if known <= MIGRATIONS.len() => Ok(known),
        Err(_) => Err(refused(format!(
            "its schema version (user_version) is {version}, which no build writes"
        ))),
        Ok(_) => Err(refused(format!(
            "its schema version (user_version) is {version}, this build knows 1 to {}: a newer \
             build made it (run that build or a newer one)",
            MIGRATIONS.len()
        ))),
    }
}

fn has_sqlx_table(conn: &rusqlite::Connection) -> Result<bool> {
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' \
         AND name = '_sqlx_migrations')",
        [],
        |row| row.get(0),
    )?)
}

/// One row of an earlier build's `_sqlx_migrations`: version, success, checksum.
type SqlxRow = (i64, bool, Vec<u8>);

fn sqlx_rows(conn: &rusqlite::Connection) -> Result<Vec<SqlxRow>> {
    let mut statement =
        conn.prepare("SELECT version, success, checksum FROM _sqlx_migrations ORDER BY version")?;
    let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The schema version an earlier build's `_sqlx_migrations` rows (by version) amount to: n when
/// they are exactly this build's migrations 1 to n, each applied whole (`success`) with sqlx's
/// checksum of this build's SQLite text; otherwise why not.
fn sqlx_rows_version(rows: &[SqlxRow]) -> std::result::Result<usize, String> {
    let known = sqlx_migrations(Backend::Sqlite);
    if let Some((version, ..)) = rows.iter().find(|(_, success, _)| !success) {
        return Err(format!(
            "migration {version} is marked failed in _sqlx_migrations (success = false): it may \
             be partly applied. Restore a backup, or finish it by hand and set its success to \
             true"
        ));
    }
    for (version, _, checksum) in rows {
        let Some(ours) = known.iter().find(|m| m.version == *version) else {
            return Err(if *version < 1 {
                format!("_sqlx_migrations records migration {version}, which no build wrote")
            } else {
                format!(
                    "_sqlx_migrations records migration {version}, which this build does not \
                     know (it knows 1 to {}): a newer build made it (run that build or a newer \
                     one)",
                    known.len()
                )
            });
        };
        if ours.checksum.as_ref() != checksum.as_slice() {
            return Err(format!(
                "migration {version} was applied with other SQL than this build's (its checksum \
                 in _sqlx_migrations differs), so its schema is not known"
            ));
        }
    }
    let gap = (1..)
        .zip(rows)
        .find(|&(expected, (version, ..))| *version != expected);
    if let Some((missing, _)) = gap {
        let applied: Vec<String> = rows
            .iter()
            .map(|(version, ..)| version.to_string())
            .collect();
        return Err(format!(
            "_sqlx_migrations records migrations {} without migration {missing}: they are not \
             1 to n in a row",
            applied.join(", ")
        ));
    }
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rusqlite_migration::MigrationDefinitionError;

    use super::super::{query, query_scalar, Db};
    use super::*;

    /// A database the previous build (09ffcab^, its `_sqlx_migrations` imitation) made:
    /// tests/fixtures/README.md says how.
    const FIXTURE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sqlx-bookkeeping.db"
    );

    /// A database file of one test, removed with its WAL, shared memory and journal.
    struct Temp {
        path: String,
    }

    impl Temp {
        fn new() -> Temp {
            let path = std::env::temp_dir()
                .join(format!("tp-migrate-{}.db", uuid::Uuid::new_v4().simple()))
                .display()
                .to_string();
            Temp { path }
        }

        /// A copy of the fixture.
        fn fixture() -> Temp {
            let temp = Temp::new();
            std::fs::copy(FIXTURE, &temp.path).unwrap();
            temp
        }

        fn url(&self) -> String {
            format!("sqlite:{}?mode=rwc", self.path)
        }

        /// A plain rusqlite connection to it (no migration, no check).
        fn open(&self) -> rusqlite::Connection {
            rusqlite::Connection::open(&self.path).unwrap()
        }

        fn bytes(&self) -> Vec<u8> {
            std::fs::read(&self.path).unwrap()
        }

        /// The size of its `-wal` or `-journal` file (0 when there is none).
        fn side_file(&self, suffix: &str) -> u64 {
            std::fs::metadata(format!("{}{suffix}", self.path)).map_or(0, |meta| meta.len())
        }
    }

    impl Drop for Temp {
        fn drop(&mut self) {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", self.path));
            }
        }
    }

    async fn user_version(db: &Db) -> i64 {
        query_scalar("SELECT user_version FROM pragma_user_version")
            .fetch_one(db)
            .await
            .unwrap()
    }

    async fn has_sqlx_migrations(db: &Db) -> bool {
        let count: i64 =
            query_scalar("SELECT COUNT(*) FROM sqlite_master WHERE name = '_sqlx_migrations'")
                .fetch_one(db)
                .await
                .unwrap();
        count > 0
    }

    /// Every table's columns (but `_sqlx_migrations`), read directly.
    fn columns(conn: &rusqlite::Connection) -> BTreeMap<String, Vec<String>> {
        let mut tables = conn
            .prepare(
                "SELECT name FROM sqlite_master WHERE type = 'table' \
                 AND name NOT LIKE 'sqlite%' AND name <> '_sqlx_migrations'",
            )
            .unwrap();
        let names: Vec<String> = tables
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        names
            .into_iter()
            .map(|table| {
                let mut info = conn
                    .prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")
                    .unwrap();
                let columns = info
                    .query_map([&table], |row| row.get(0))
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap();
                (table, columns)
            })
            .collect()
    }

    /// Every table's rows in those columns (a later migration may add columns), each row's
    /// values as text, sorted.
    fn rows(
        conn: &rusqlite::Connection,
        columns: &BTreeMap<String, Vec<String>>,
    ) -> BTreeMap<String, Vec<String>> {
        columns
            .iter()
            .map(|(table, columns)| {
                let list: Vec<String> = columns.iter().map(|c| format!("\"{c}\"")).collect();
                let mut select = conn
                    .prepare(&format!("SELECT {} FROM \"{table}\"", list.join(", ")))
                    .unwrap();
                let mut rows: Vec<String> = select
                    .query_map([], |row| {
                        (0..columns.len())
                            .map(|i| row.get::<_, rusqlite::types::Value>(i))
                            .collect::<rusqlite::Result<Vec<_>>>()
                            .map(|values| format!("{values:?}"))
                    })
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap();
                rows.sort();
                (table.clone(), rows)
            })
            .collect()
    }

    fn strings(conn: &rusqlite::Connection, sql: &str) -> Vec<String> {
        let mut statement = conn.prepare(sql).unwrap();
        let rows = statement.query_map([], |row| row.get(0)).unwrap();
        rows.collect::<rusqlite::Result<_>>().unwrap()
    }

    /// The revision clock (`meta.projection_epoch`: the epoch in `value`, the sequence in
    /// `counter`, migrations 1 and 3) and the message order (`counters`, migrations 1 and 9).
    fn sequences(conn: &rusqlite::Connection) -> (String, i64, Vec<(String, i64)>) {
        let (epoch, sequence) = conn
            .query_row(
                "SELECT value, counter FROM meta WHERE key = 'projection_epoch'",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .unwrap();
        let mut statement = conn
            .prepare("SELECT name, value FROM counters ORDER BY name")
            .unwrap();
        let counters = statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        (epoch, sequence, counters)
    }

    /// `Db::connect` refuses the file with a message containing `why`, and the file is byte for
    /// byte what it was: no journal switched, no WAL written, no journal left.
    async fn refused_untouched(temp: &Temp, why: &str) {
        let before = temp.bytes();
        let error = Db::connect(&temp.url()).await.unwrap_err();
        assert!(
            matches!(&error, ServerError::SqliteRefused(detail) if detail.contains(why)),
            "{error}"
        );
        assert!(temp.bytes() == before, "the refused file changed");
        assert_eq!(temp.side_file("-wal"), 0, "nothing went to the WAL");
        assert_eq!(temp.side_file("-journal"), 0, "no journal left");
    }

    /// The fixture changed by `change`, in each journal mode (a rollback journal shows a switch
    /// to WAL in the file's header), is refused untouched.
    async fn assert_refused(change: &str, why: &str) {
        for journal in ["DELETE", "WAL"] {
            let temp = Temp::fixture();
            {
                let conn = temp.open();
                conn.query_row(&format!("PRAGMA journal_mode = {journal}"), [], |_| Ok(()))
                    .unwrap();
                conn.execute_batch(change).unwrap();
            }
            refused_untouched(&temp, why).await;
        }
    }

    #[test]
    fn versions_are_consecutive_and_every_migration_applies() {
        for (index, &(version, ..)) in MIGRATIONS.iter().enumerate() {
            assert_eq!(usize::try_from(version).unwrap(), index + 1);
        }
        sqlite_migrations().validate().unwrap();
        assert_eq!(sqlx_migrations(Backend::Postgres).len(), MIGRATIONS.len());
    }

    #[tokio::test]
    async fn a_fresh_database_migrates_to_the_latest_version() {
        let db = Db::memory().await.unwrap();
        assert_eq!(
            usize::try_from(user_version(&db).await).unwrap(),
            MIGRATIONS.len()
        );
        assert!(
            !has_sqlx_migrations(&db).await,
            "no imitation of sqlx's bookkeeping"
        );
        // The schema is there.
        query("SELECT COUNT(*) FROM meta")
            .execute(&db)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn connecting_twice_is_a_no_op() {
        let temp = Temp::new();
        let db = Db::connect(&temp.url()).await.unwrap();
        query("INSERT INTO meta (key, value) VALUES ('kept', 'yes')")
            .execute(&db)
            .await
            .unwrap();
        drop(db);
        let again = Db::connect(&temp.url()).await.unwrap();
        assert_eq!(
            usize::try_from(user_version(&again).await).unwrap(),
            MIGRATIONS.len()
        );
        let kept: String = query_scalar("SELECT value FROM meta WHERE key = 'kept'")
            .fetch_one(&again)
            .await
            .unwrap();
        assert_eq!(kept, "yes");
        again.migrate().await.unwrap();
    }

    #[tokio::test]
    async fn the_previous_builds_database_is_migrated_in_place() {
        let temp = Temp::fixture();
        let (columns, before, tasks, sequences_before) = {
            let conn = temp.open();
            let applied = strings(&conn, "SELECT CAST(version AS TEXT) FROM _sqlx_migrations");
            // The fixture's build had migrations 1 to 9; the rest apply after the switch.
            assert_eq!(
                applied.len(),
                9,
                "every migration of its build, the old way"
            );
            let columns = columns(&conn);
            let before = rows(&conn, &columns);
            let tasks = strings(&conn, "SELECT id FROM tasks ORDER BY id");
            (columns, before, tasks, sequences(&conn))
        };
        // Not a trivial database: answered questions, restarts (epochs), messages.
        for table in [
            "tasks",
            "sessions",
            "turns",
            "messages",
            "task_status_summaries",
        ] {
            assert!(!before[table].is_empty(), "the fixture has {table}");
        }
        assert_eq!(tasks.len(), 4);
        let (epoch, sequence, counters) = &sequences_before;
        assert!(epoch.parse::<i64>().unwrap() > 1 && *sequence > 0 && !counters.is_empty());

        let db = Db::connect(&temp.url()).await.unwrap();
        assert_eq!(
            usize::try_from(user_version(&db).await).unwrap(),
            MIGRATIONS.len()
        );
        assert!(
            !has_sqlx_migrations(&db).await,
            "the old bookkeeping is dropped"
        );
        let mode: String = query_scalar("SELECT journal_mode FROM pragma_journal_mode")
            .fetch_one(&db)
            .await
            .unwrap();
        assert_eq!(mode, "wal");
        drop(db);

        {
            let conn = temp.open();
            assert_eq!(
                rows(&conn, &columns),
                before,
                "every row of every table kept"
            );
            assert_eq!(strings(&conn, "SELECT id FROM tasks ORDER BY id"), tasks);
            assert_eq!(
                sequences(&conn),
                sequences_before,
                "the epoch and sequences kept"
            );
        }

        // A second open finds nothing to do and writes nothing.
        let migrated = temp.bytes();
        let again = Db::connect(&temp.url()).await.unwrap();
        assert_eq!(
            usize::try_from(user_version(&again).await).unwrap(),
            MIGRATIONS.len()
        );
        again.migrate().await.unwrap();
        drop(again);
        assert!(temp.bytes() == migrated, "the second open wrote nothing");
    }

    #[tokio::test]
    async fn an_earlier_builds_database_continues_from_its_version() {
        // What the previous build left after its first five migrations, with a row.
        let temp = Temp::new();
        {
            let conn = temp.open();
            conn.execute_batch(
                "CREATE TABLE _sqlx_migrations (version BIGINT PRIMARY KEY, \
                 description TEXT NOT NULL, installed_on TIMESTAMP NOT NULL DEFAULT \
                 CURRENT_TIMESTAMP, success BOOLEAN NOT NULL, checksum BLOB NOT NULL, \
                 execution_time BIGINT NOT NULL)",
            )
            .unwrap();
            for migration in sqlx_migrations(Backend::Sqlite).iter().take(5) {
                conn.execute_batch(&migration.sql).unwrap();
                conn.execute(
                    "INSERT INTO _sqlx_migrations (version, description, success, checksum, \
                     execution_time) VALUES (?1, ?2, TRUE, ?3, 1)",
                    rusqlite::params![
                        migration.version,
                        migration.description.as_ref(),
                        migration.checksum.as_ref()
                    ],
                )
                .unwrap();
            }
            conn.execute_batch(
                "INSERT INTO tasks (id, workspace_id, created_at, updated_at, title) \
                 VALUES ('task-old', 'ws', 't0', 't0', 'Old'); \
                 INSERT INTO sessions (id, task_id, state, started_at, updated_at) \
                 VALUES ('s-old', 'task-old', 'RUNNING', 't0', 't0'); \
                 INSERT INTO turns (id, session_id, task_id, started_at, created_at, updated_at) \
                 VALUES ('turn-old', 's-old', 'task-old', 't0', 't0', 't0');",
            )
            .unwrap();
        }
        let db = Db::connect(&temp.url()).await.unwrap();
        assert_eq!(
            usize::try_from(user_version(&db).await).unwrap(),
            MIGRATIONS.len()
        );
        assert!(!has_sqlx_migrations(&db).await);
        let title: String = query_scalar("SELECT title FROM tasks WHERE id = 'task-old'")
            .fetch_one(&db)
            .await
            .unwrap();
        assert_eq!(title, "Old");
        // Migration 6 ran on it: the turn has its (not yet filled) order keys.
        let unkeyed: i64 = query_scalar("SELECT COUNT(*) FROM turns WHERE started_key IS NULL")
            .fetch_one(&db)
            .await
            .unwrap();
        assert_eq!(unkeyed, 1);
    }

    #[tokio::test]
    async fn a_migration_marked_failed_is_refused_untouched() {
        assert_refused(
            "UPDATE _sqlx_migrations SET success = FALSE WHERE version = 9",
            "migration 9 is marked failed",
        )
        .await;
    }

    #[tokio::test]
    async fn a_migration_applied_with_other_sql_is_refused_untouched() {
        assert_refused(
            "UPDATE _sqlx_migrations SET checksum = \
             (SELECT checksum FROM _sqlx_migrations WHERE version = 5) WHERE version = 3",
            "migration 3 was applied with other SQL",
        )
        .await;
    }

    #[tokio::test]
    async fn a_gap_in_the_applied_versions_is_refused_untouched() {
        assert_refused(
            "DELETE FROM _sqlx_migrations WHERE version = 4",
            "without migration 4",
        )
        .await;
    }

    #[tokio::test]
    async fn an_unknown_applied_version_is_refused_untouched() {
        // A version beyond this build's migrations.
        assert_refused(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, \
             execution_time) VALUES (11, 'a newer build', TRUE, x'00', 1)",
            "migration 11, which this build does not know",
        )
        .await;
        // A development build (a96e57a..11a7f23, never released) had another migration 10: its
        // checksum is not this build's migration 10 (the inbox sidecar).
        assert_refused(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, \
             execution_time) VALUES (10, 'reserve pending window', TRUE, x'00', 1)",
            "migration 10 was applied with other SQL",
        )
        .await;
    }

    #[tokio::test]
    async fn both_bookkeepings_are_refused_untouched() {
        assert_refused("PRAGMA user_version = 9", "both a schema version").await;
    }

    #[tokio::test]
    async fn a_newer_builds_schema_version_is_refused_untouched() {
        let temp = Temp::new();
        drop(Db::connect(&temp.url()).await.unwrap());
        {
            let conn = temp.open();
            conn.query_row("PRAGMA journal_mode = DELETE", [], |_| Ok(()))
                .unwrap();
            conn.pragma_update(None, "user_version", MIGRATIONS.len() + 1)
                .unwrap();
        }
        refused_untouched(&temp, "a newer build made it").await;

        // rusqlite_migration alone refuses it too, writing nothing (but the check above comes
        // before the connection switches to WAL, and says what happened).
        let before = temp.bytes();
        {
            let mut conn = temp.open();
            let error = sqlite_migrations().to_latest(&mut conn).unwrap_err();
            assert!(
                matches!(
                    error,
                    rusqlite_migration::Error::MigrationDefinition(
                        MigrationDefinitionError::DatabaseTooFarAhead
                    )
                ),
                "{error}"
            );
            // So does the runner of an open handle.
            assert!(matches!(
                migrate_sqlite(&mut conn),
                Err(ServerError::SqliteRefused(_))
            ));
        }
        assert!(temp.bytes() == before);
    }
}
