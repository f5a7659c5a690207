//! Durable revisions (SPEC §5): the epoch allocated at startup and the sequence reserved before
//! every authoritative read, shared by every instance on one database.
//!
//! The epoch lives in `meta.projection_epoch` (`value`: decimal text, any length). Startup
//! advances it with [`rules::revision::next_epoch`] (compare-and-set on the old text; a
//! non-canonical stored value is a startup error and stays untouched). How the sequence is
//! reserved depends on the backend; both give the same guarantee, argued below.
//!
//! **PostgreSQL** (several instances): the sequence is a database `SEQUENCE`
//! (`projection_sequence`, never reset), reserved with `SELECT * FROM
//! reserve_projection_revision()` (migration 3), which
//! 1. takes `pg_advisory_xact_lock_shared(EPOCH_LOCK)`, then
//! 2. in a new statement (so a new snapshot), reads the current epoch and calls `nextval`.
//!
//! An epoch change holds the same advisory lock **exclusively** from before it reads the stored
//! epoch until it commits. No row is written per reservation: shared advisory locks do not
//! conflict with one another and `nextval` is not transactional, so reservations of every
//! instance run in parallel (the old design wrote `meta.projection_epoch.counter` per
//! reservation, and that row's lock serialized every projection of every instance).
//!
//! *Why the pairs are ordered.* Take reservations r₁ and r₂ where r₁ returns before r₂ starts (in
//! real time: "reserved before the read" and "a newer event's revision" are both about real-time
//! order). The exclusive lock splits time into phases; a reservation lies wholly inside one phase,
//! and every reservation of a phase reads the epoch committed before the phase began. `nextval`
//! hands out strictly increasing values in call order, so s₁ < s₂. If r₁ and r₂ are in the same
//! phase, e₁ = e₂ and (e, s₁) < (e, s₂). If not, r₂'s phase is later, and an epoch change only ever
//! raises the epoch, so e₁ < e₂. Either way the rules'
//! [`compare_revisions`](task_projection::rules::revision::compare_revisions) puts r₂ after r₁, for
//! every session and across every instance. A restarted instance allocates a higher epoch, so its
//! revisions are after everything handed out before; an instance that started earlier serves the
//! new epoch from its next reservation. A *database* restart could hand out a `nextval` again (a
//! value from a transaction whose WAL was not flushed): the epoch records the PostgreSQL server's
//! start time (`meta.projection_epoch_server`), a reservation reports whether it still matches, and
//! if not the instance advances the epoch before it uses the reservation, so every revision after a
//! database restart has a higher epoch than every one before.
//!
//! **SQLite** (one instance; writes are serialized by the database itself): the sequence is
//! `meta.projection_epoch.counter`, reserved with one `UPDATE … SET counter = counter + 1
//! RETURNING value, counter` and reset by each epoch change. SQLite has a single writer, so there
//! is no row contention to remove: the reservation is one short write transaction (a WAL append;
//! the server runs SQLite with `synchronous = NORMAL`), ordered with every other write. The epoch
//! change itself is synced to disk (`synchronous = FULL` for that transaction), so a power loss
//! that drops the last counter writes cannot drop the epoch the next start advances past.
//!
//! [`rules::revision::next_epoch`]: task_projection::rules::revision::next_epoch

use task_projection::rules::model::Revision;
use task_projection::rules::revision::{next_epoch, EpochError};

use super::db::{col, query, query_scalar, Backend, Db};
use super::error::{Result, ServerError};

const EPOCH_KEY: &str = "projection_epoch";
/// PostgreSQL: the server start time the epoch was allocated under.
const SERVER_KEY: &str = "projection_epoch_server";
/// PostgreSQL: the advisory lock key that orders epoch changes against reservations (shared by
/// `reserve_projection_revision()` in server/migrations/0003_revision_sequence.postgres.sql).
const EPOCH_LOCK: i64 = 7_305_611_505;
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
    let value: Option<String> = query_scalar("SELECT value FROM meta WHERE key = $1")
        .bind(EPOCH_KEY)
        .fetch_optional(db)
        .await?;
    Ok(value)
}

/// Allocates this start's epoch (SPEC §5, scenario 55): absent → `"1"`, a canonical positive
/// integer → + 1, anything else → [`ServerError::CorruptEpoch`] with the stored value untouched.
pub async fn allocate_epoch(db: &Db) -> Result<String> {
    if db.backend() == Backend::Sqlite {
        // The epoch change reaches the disk before anything is labelled with it (SQLite is one
        // connection: the pragma applies to the transaction below).
        query("PRAGMA synchronous = FULL").execute(db).await?;
    }
    let allocated = allocate_on(db, None).await;
    if db.backend() == Backend::Sqlite {
        query("PRAGMA synchronous = NORMAL").execute(db).await?;
    }
    allocated
}

/// The epoch change, in one transaction. `unless_stale`: PostgreSQL's reaction to a database
/// restart, which does nothing when another instance already advanced past the old server start.
async fn allocate_on(db: &Db, unless_stale: Option<&str>) -> Result<String> {
    let backend = db.backend();
    for _ in 0..MAX_ALLOCATION_ATTEMPTS {
        // SQLite: a write first, so the transaction holds the write lock before it reads.
        let mut tx = db.begin().await?;
        match backend {
            Backend::Postgres => {
                query("SELECT pg_advisory_xact_lock($1)")
                    .bind(EPOCH_LOCK)
                    .execute(&mut tx)
                    .await?;
            }
            Backend::Sqlite => {
                query("UPDATE meta SET counter = counter WHERE key = $1")
                    .bind(EPOCH_KEY)
                    .execute(&mut tx)
                    .await?;
            }
        }
        let stored: Option<String> = query_scalar("SELECT value FROM meta WHERE key = $1")
            .bind(EPOCH_KEY)
            .fetch_optional(&mut tx)
            .await?;
        if backend == Backend::Postgres {
            if let (Some(stale), Some(stored)) = (unless_stale, &stored) {
                let server: Option<String> = query_scalar("SELECT value FROM meta WHERE key = $1")
                    .bind(SERVER_KEY)
                    .fetch_optional(&mut tx)
                    .await?;
                if server.as_deref().unwrap_or_default() != stale {
                    // Someone advanced the epoch since: nothing to do.
                    tx.commit().await?;
                    return Ok(stored.clone());
                }
            }
        }
        let next = next_epoch(stored.as_deref()).map_err(|error| match error {
            EpochError::NotCanonical { stored } => ServerError::CorruptEpoch { stored },
        })?;
        let won = match &stored {
            None => query(
                "INSERT INTO meta (key, value, counter) VALUES ($1, $2, 0) \
                 ON CONFLICT (key) DO NOTHING",
            )
            .bind(EPOCH_KEY)
            .bind(&next)
            .execute(&mut tx)
            .await?
            .rows_affected(),
            Some(old) => {
                query("UPDATE meta SET value = $1, counter = 0 WHERE key = $2 AND value = $3")
                    .bind(&next)
                    .bind(EPOCH_KEY)
                    .bind(old)
                    .execute(&mut tx)
                    .await?
                    .rows_affected()
            }
        };
        if won != 1 {
            // Another instance started at the same moment: read its value and advance past it.
            tx.rollback().await?;
            continue;
        }
        if backend == Backend::Postgres {
            query(
                "INSERT INTO meta (key, value, counter) \
                 VALUES ($1, extract(epoch FROM pg_postmaster_start_time())::text, 0) \
                 ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            )
            .bind(SERVER_KEY)
            .execute(&mut tx)
            .await?;
        }
        tx.commit().await?;
        tracing::info!(epoch = %next, "allocated projection epoch");
        return Ok(next);
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
        match self.db.backend() {
            Backend::Sqlite => self.reserve_counter().await,
            Backend::Postgres => self.reserve_sequence().await,
        }
    }

    async fn reserve_counter(&self) -> Result<Revision> {
        let row =
            query("UPDATE meta SET counter = counter + 1 WHERE key = $1 RETURNING value, counter")
                .bind(EPOCH_KEY)
                .fetch_optional(&self.db)
                .await?;
        let Some(row) = row else {
            return Err(ServerError::ClockMissing);
        };
        let epoch: String = col(&row, "meta", "value")?;
        let counter: i64 = col(&row, "meta", "counter")?;
        revision(epoch, counter)
    }

    async fn reserve_sequence(&self) -> Result<Revision> {
        // Twice at most: a reservation made under a database restart the epoch does not know yet
        // is not used; the epoch is advanced and the reservation made again.
        for _ in 0..2 {
            let row = query(
                "SELECT epoch, sequence, server, server_now FROM reserve_projection_revision()",
            )
            .fetch_optional(&self.db)
            .await?;
            let Some(row) = row else {
                return Err(ServerError::ClockMissing);
            };
            let server: Option<String> = col(&row, "meta", "server")?;
            let now: String = col(&row, "meta", "server_now")?;
            if server.as_deref() == Some(now.as_str()) {
                return revision(col(&row, "meta", "epoch")?, col(&row, "meta", "sequence")?);
            }
            tracing::warn!(
                recorded = ?server,
                now = %now,
                "PostgreSQL restarted since the epoch was allocated; advancing the epoch"
            );
            let stale = server.unwrap_or_default();
            allocate_on(&self.db, Some(&stale)).await?;
        }
        Err(ServerError::EpochContention(2))
    }
}

fn revision(epoch: String, sequence: i64) -> Result<Revision> {
    let sequence = u64::try_from(sequence)
        .map_err(|_| ServerError::corrupt("meta", EPOCH_KEY, "negative sequence"))?;
    Ok(Revision { epoch, sequence })
}

#[cfg(test)]
mod tests {
    use super::EPOCH_LOCK;

    /// The reservation takes the advisory lock an epoch change takes exclusively.
    #[test]
    fn the_reservation_takes_the_epoch_lock() {
        let migration = include_str!("../migrations/0003_revision_sequence.postgres.sql");
        let shared = format!("pg_advisory_xact_lock_shared({EPOCH_LOCK})");
        assert!(migration.contains(&shared), "{shared} in the reservation");
    }
}
