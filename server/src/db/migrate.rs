//! The embedded migrations (`server/migrations/`, one list for both backends) and their runners,
//! both maintained libraries: PostgreSQL runs them through sqlx's migrator (an sqlx migration
//! source here; sqlx keeps its `_sqlx_migrations` table on PostgreSQL), SQLite through
//! `rusqlite_migration`, which records the schema version in SQLite's `user_version` and applies
//! the pending migrations in one transaction.
//!
//! An SQLite database made by an earlier build kept an imitation of sqlx's bookkeeping (a
//! `_sqlx_migrations` table). Such a database (a demo database) is recreated empty when it is
//! opened ([`recreate_old_bookkeeping`]), then migrated from the first migration.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use rusqlite::config::DbConfig;
use rusqlite_migration::{Migrations, M};
use sqlx::migrate::{Migration, MigrationSource, MigrationType};

use crate::error::Result;

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
];

const SCHEMA: &str = include_str!("../../migrations/0001_schema.sql");
const TASK_TITLE: &str = include_str!("../../migrations/0002_task_title.sql");
const MESSAGES_BY_TURN: &str = include_str!("../../migrations/0004_messages_turn_index.sql");
const TURN_ORDER_KEYS: &str = include_str!("../../migrations/0006_turn_order_keys.sql");
const TURN_PARTIAL: &str = include_str!("../../migrations/0007_turn_partial_indexes.sql");

/// PostgreSQL's migrations as sqlx's migrator takes them.
fn postgres_migrations() -> Vec<Migration> {
    MIGRATIONS
        .iter()
        .map(|&(version, description, _, postgres)| {
            Migration::new(
                version,
                Cow::Borrowed(description),
                MigrationType::Simple,
                Cow::Borrowed(postgres),
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
        Box::pin(async { Ok(postgres_migrations()) })
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

/// Applies the pending SQLite migrations (none: nothing written).
pub(super) fn migrate_sqlite(conn: &mut rusqlite::Connection) -> Result<()> {
    sqlite_migrations().to_latest(conn)?;
    Ok(())
}

/// Recreates an SQLite database that an earlier build migrated (it has the `_sqlx_migrations`
/// table that build kept): SQLite's own reset (`SQLITE_DBCONFIG_RESET_DATABASE` and `VACUUM`)
/// empties it in one step, file, WAL and all, so the migrations then start from the first. Called
/// before the connection switches to WAL. Returns whether it did.
pub(super) fn recreate_old_bookkeeping(conn: &rusqlite::Connection) -> Result<bool> {
    let old: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' \
         AND name = '_sqlx_migrations')",
        [],
        |row| row.get(0),
    )?;
    if !old {
        return Ok(false);
    }
    tracing::warn!(
        "this SQLite database was made by an earlier build (a _sqlx_migrations table): \
         recreating it empty"
    );
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_RESET_DATABASE, true)?;
    let reset = conn.execute_batch("VACUUM");
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_RESET_DATABASE, false)?;
    reset?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::super::{query, query_scalar, Db};
    use super::*;

    fn temp_url() -> (String, String) {
        let path = std::env::temp_dir()
            .join(format!("tp-migrate-{}.db", uuid::Uuid::new_v4().simple()))
            .display()
            .to_string();
        (format!("sqlite:{path}?mode=rwc"), path)
    }

    fn remove(path: &str) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{path}{suffix}"));
        }
    }

    async fn user_version(db: &Db) -> i64 {
        query_scalar("SELECT user_version FROM pragma_user_version")
            .fetch_one(db)
            .await
            .unwrap()
    }

    #[test]
    fn versions_are_consecutive_and_every_migration_applies() {
        for (index, &(version, ..)) in MIGRATIONS.iter().enumerate() {
            assert_eq!(usize::try_from(version).unwrap(), index + 1);
        }
        sqlite_migrations().validate().unwrap();
        assert_eq!(postgres_migrations().len(), MIGRATIONS.len());
    }

    #[tokio::test]
    async fn a_fresh_database_migrates_to_the_latest_version() {
        let db = Db::memory().await.unwrap();
        assert_eq!(
            usize::try_from(user_version(&db).await).unwrap(),
            MIGRATIONS.len()
        );
        let old: i64 =
            query_scalar("SELECT COUNT(*) FROM sqlite_master WHERE name = '_sqlx_migrations'")
                .fetch_one(&db)
                .await
                .unwrap();
        assert_eq!(old, 0, "no imitation of sqlx's bookkeeping");
        // The schema is there.
        query("SELECT COUNT(*) FROM meta")
            .execute(&db)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn connecting_twice_is_a_no_op() {
        let (url, path) = temp_url();
        let db = Db::connect(&url).await.unwrap();
        query("INSERT INTO meta (key, value) VALUES ('kept', 'yes')")
            .execute(&db)
            .await
            .unwrap();
        drop(db);
        let again = Db::connect(&url).await.unwrap();
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
        drop(again);
        remove(&path);
    }

    #[tokio::test]
    async fn a_database_with_the_old_bookkeeping_is_recreated() {
        let (url, path) = temp_url();
        {
            // What an earlier build left: every migration applied, a row, `_sqlx_migrations`, WAL.
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
                .unwrap();
            conn.execute_batch(
                "CREATE TABLE _sqlx_migrations (version BIGINT PRIMARY KEY, \
                 description TEXT NOT NULL, success BOOLEAN NOT NULL, checksum BLOB NOT NULL, \
                 execution_time BIGINT NOT NULL); \
                 INSERT INTO _sqlx_migrations VALUES (1, 'schema', TRUE, x'00', 1);",
            )
            .unwrap();
            for &(_, _, sqlite, _) in MIGRATIONS {
                conn.execute_batch(sqlite).unwrap();
            }
            conn.execute_batch("INSERT INTO meta (key, value) VALUES ('old', 'row')")
                .unwrap();
        }
        let db = Db::connect(&url).await.unwrap();
        let old: i64 =
            query_scalar("SELECT COUNT(*) FROM sqlite_master WHERE name = '_sqlx_migrations'")
                .fetch_one(&db)
                .await
                .unwrap();
        assert_eq!(old, 0);
        let rows: i64 = query_scalar("SELECT COUNT(*) FROM meta WHERE key = 'old'")
            .fetch_one(&db)
            .await
            .unwrap();
        assert_eq!(rows, 0, "recreated empty");
        assert_eq!(
            usize::try_from(user_version(&db).await).unwrap(),
            MIGRATIONS.len()
        );
        let mode: String = query_scalar("SELECT journal_mode FROM pragma_journal_mode")
            .fetch_one(&db)
            .await
            .unwrap();
        assert_eq!(mode, "wal");
        drop(db);
        remove(&path);
    }
}
