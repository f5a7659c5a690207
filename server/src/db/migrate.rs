//! The embedded migrations (`server/migrations/`, one list for both backends) and their runners:
//! an sqlx migration source for PostgreSQL's migrator, and the SQLite runner, which keeps sqlx's
//! bookkeeping (`_sqlx_migrations`, same checksums).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use sqlx::migrate::{Migration, MigrationSource, MigrationType};

use crate::error::{Result, ServerError};

use super::Backend;

/// The versioned migrations, in order: version, description, and the SQL for SQLite and for
/// PostgreSQL (the same text unless a backend needs its own). Each runs once per database
/// (the `_sqlx_migrations` table records it, with its checksum); a released file is never
/// edited, a change is a new file.
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
pub(super) struct Embedded(pub(super) Backend);

type BoxDynError = Box<dyn std::error::Error + Send + Sync>;

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = std::result::Result<Vec<Migration>, BoxDynError>> + Send + 's>>
    {
        Box::pin(async move { Ok(migrations(self.0)) })
    }
}

pub(super) fn migrate_sqlite(conn: &mut rusqlite::Connection) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::super::{query, query_scalar, Db};
    use super::*;

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
