//! Durable revisions (SPEC §5): the epoch allocated at startup and the sequence reserved before
//! every authoritative read.
//!
//! Both live in one database row, `meta.projection_epoch`: `value` is the epoch (decimal text, any
//! length), `counter` the sequence within it. Startup advances the epoch with
//! [`rules::revision::next_epoch`] (compare-and-set on the old text; a non-canonical stored value
//! is a startup error and stays untouched) and resets the sequence. Every reservation is one
//! atomic `UPDATE … SET counter = counter + 1 RETURNING value, counter`: the row lock orders all
//! reservations of every instance sharing the database, so the pairs handed out are totally
//! ordered across instances, and an instance that started earlier automatically serves the newer
//! epoch once another instance restarts (see the module docs of [`crate::server`]).
//!
//! [`rules::revision::next_epoch`]: crate::rules::revision::next_epoch

use sqlx::Row;

use crate::rules::model::Revision;
use crate::rules::revision::{next_epoch, EpochError};

use super::db::Db;
use super::error::{Result, ServerError};

const EPOCH_KEY: &str = "projection_epoch";
/// Concurrent starts on one database retry the compare-and-set this many times.
const MAX_ALLOCATION_ATTEMPTS: u32 = 32;

/// The revision clock of one server instance.
#[derive(Clone, Debug)]
pub struct RevisionClock {
    db: Db,
    started_epoch: String,
}

/// Reads the stored epoch text, if any.
pub async fn stored_epoch(db: &Db) -> Result<Option<String>> {
    let value: Option<String> = sqlx::query_scalar("SELECT value FROM meta WHERE key = $1")
        .bind(EPOCH_KEY)
        .fetch_optional(db.pool())
        .await?;
    Ok(value)
}

/// Allocates this start's epoch (SPEC §5, scenario 55): absent → `"1"`, a canonical positive
/// integer → + 1, anything else → [`ServerError::CorruptEpoch`] with the stored value untouched.
pub async fn allocate_epoch(db: &Db) -> Result<String> {
    for _ in 0..MAX_ALLOCATION_ATTEMPTS {
        let stored = stored_epoch(db).await?;
        let next = next_epoch(stored.as_deref()).map_err(|error| match error {
            EpochError::NotCanonical { stored } => ServerError::CorruptEpoch { stored },
        })?;
        let won = match &stored {
            None => sqlx::query(
                "INSERT INTO meta (key, value, counter) VALUES ($1, $2, 0) \
                 ON CONFLICT (key) DO NOTHING",
            )
            .bind(EPOCH_KEY)
            .bind(&next)
            .execute(db.pool())
            .await?
            .rows_affected(),
            Some(old) => {
                sqlx::query("UPDATE meta SET value = $1, counter = 0 WHERE key = $2 AND value = $3")
                    .bind(&next)
                    .bind(EPOCH_KEY)
                    .bind(old)
                    .execute(db.pool())
                    .await?
                    .rows_affected()
            }
        };
        if won == 1 {
            tracing::info!(epoch = %next, "allocated projection epoch");
            return Ok(next);
        }
        // Another instance started at the same moment: read its value and advance past it.
    }
    Err(ServerError::EpochContention(MAX_ALLOCATION_ATTEMPTS))
}

impl RevisionClock {
    /// Starts the clock: allocates this start's epoch.
    pub async fn start(db: Db) -> Result<RevisionClock> {
        let started_epoch = allocate_epoch(&db).await?;
        Ok(RevisionClock { db, started_epoch })
    }

    /// The epoch this instance allocated at startup.
    pub fn started_epoch(&self) -> &str {
        &self.started_epoch
    }

    /// Reserves the next revision. Call it **before** the authoritative read it labels, so a
    /// read delayed behind a newer event carries the older revision.
    pub async fn reserve(&self) -> Result<Revision> {
        let row = sqlx::query(
            "UPDATE meta SET counter = counter + 1 WHERE key = $1 RETURNING value, counter",
        )
        .bind(EPOCH_KEY)
        .fetch_optional(self.db.pool())
        .await?;
        let Some(row) = row else {
            return Err(ServerError::ClockMissing);
        };
        let epoch: String = row.try_get("value")?;
        let counter: i64 = row.try_get("counter")?;
        let sequence = u64::try_from(counter)
            .map_err(|_| ServerError::corrupt("meta", EPOCH_KEY, "negative sequence"))?;
        Ok(Revision { epoch, sequence })
    }
}
