//! Opening the one SQLite connection: the URL as an SQLite URI, foreign keys, WAL; a file is
//! checked first, and a database made by an earlier build migrated in place
//! (`migrate::prepare_sqlite`).

use crate::error::Result;

use super::migrate::prepare_sqlite;
use super::{SQLITE_BUSY_TIMEOUT, SQLITE_STATEMENT_CACHE};

/// Where an SQLite URL points: `sqlite::memory:`, or a file with SQLite's URI parameters
/// (`mode=rwc` creates it; `sqlite://path`, `sqlite:path`).
pub(super) fn sqlite_target(url: &str) -> Option<String> {
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
/// change syncs itself, server/src/revision.rs). Before anything is written to a file, a database
/// from a newer build, or one of an earlier build whose bookkeeping cannot be taken over, is
/// refused (untouched), and an earlier build's `_sqlx_migrations` is taken over in place; the
/// caller then runs the migrations.
pub(super) fn open_sqlite(url: &str) -> Result<rusqlite::Connection> {
    use rusqlite::OpenFlags;
    let target = sqlite_target(url);
    let mut conn = match &target {
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
        // First: a refused file keeps its journal mode too.
        prepare_sqlite(&mut conn)?;
        // Persistent in the file; a read-only or busy database keeps its journal.
        if let Err(error) = conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())) {
            tracing::warn!(%error, "could not switch SQLite to WAL; keeping its journal");
        }
        conn.execute_batch("PRAGMA synchronous = NORMAL")?;
    }
    Ok(conn)
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
}
