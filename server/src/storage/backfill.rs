//! Opening a database for the services: [`connect`] migrates it ([`Db::connect`]) and then fills
//! the turns' order keys that rows written before migration 6 lack (the startup backfill).

use crate::db::{col, query, Db};
use crate::error::Result;

use super::rows::turn_keys;

/// Connects to `url` ([`Db::connect`]: the migrations run) and fills the order keys of turns
/// written before migration 6 (`fill_turn_keys`): a database as the services expect it. The
/// server's startup ([`http::connect`](crate::http::connect)) opens its database with it.
pub async fn connect(url: &str) -> Result<Db> {
    let db = Db::connect(url).await?;
    fill_turn_keys(&db).await?;
    Ok(db)
}

/// Fills the order keys of turns written before migration 6 (at startup, [`connect`]; a turn
/// whose timestamps have no packed form keeps none, and its session is read whole).
pub(crate) async fn fill_turn_keys(db: &Db) -> Result<()> {
    let rows = query("SELECT id, started_at, created_at FROM turns WHERE started_key IS NULL")
        .fetch_all(db)
        .await?;
    if rows.is_empty() {
        return Ok(());
    }
    // One transaction: one commit for the whole backfill, not one per turn.
    let mut tx = db.begin().await?;
    let mut filled = 0usize;
    for row in &rows {
        let id: String = col(row, "turns", "id")?;
        let started: String = col(row, "turns", "started_at")?;
        let created: String = col(row, "turns", "created_at")?;
        if let (Some(s), Some(c)) = turn_keys(&started, &created) {
            query("UPDATE turns SET started_key = $1, created_key = $2 WHERE id = $3")
                .bind(s)
                .bind(c)
                .bind(id.as_str())
                .execute(&mut tx)
                .await?;
            filled = filled.saturating_add(1);
        }
    }
    tx.commit().await?;
    if filled > 0 {
        tracing::info!(filled, "turn order keys filled");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use task_projection::rules::time::Timestamp;

    use super::*;
    use crate::db::query_scalar;

    #[tokio::test]
    async fn turns_written_without_order_keys_get_them_at_startup() {
        let path =
            std::env::temp_dir().join(format!("tp-keys-{}.db", uuid::Uuid::new_v4().simple()));
        let url = format!("sqlite:{}?mode=rwc", path.display());
        let db = connect(&url).await.unwrap();
        for sql in [
            "INSERT INTO tasks (id, workspace_id, archived, created_at, updated_at) \
             VALUES ('t', 'w', 0, 'x', 'x')",
            "INSERT INTO sessions (id, task_id, state, agent_profile_id, is_primary, started_at, \
             updated_at, version) VALUES ('s', 't', 'RUNNING', '', 1, 'x', 'x', 0)",
            // As a build before migration 6 wrote them: one packable, one not.
            "INSERT INTO turns (id, session_id, task_id, started_at, created_at, updated_at, \
             metadata) VALUES ('a', 's', 't', '2026-11-29T12:00:00Z', '2026-11-29T12:00:01Z', \
             'x', '{}'), ('b', 's', 't', 'yesterday', '2026-11-29T12:00:01Z', 'x', '{}')",
        ] {
            query(sql).execute(&db).await.unwrap();
        }
        drop(db);
        let db = connect(&url).await.unwrap();
        let keys: Vec<Option<i64>> = query_scalar("SELECT started_key FROM turns ORDER BY id")
            .fetch_all(&db)
            .await
            .unwrap();
        let packed = Timestamp::parse("2026-11-29T12:00:00Z")
            .packed()
            .and_then(|k| i64::try_from(k).ok());
        assert_eq!(keys, vec![packed, None]);
        assert!(packed.is_some());
        drop(db);
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
}
