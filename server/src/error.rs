//! The server's error type.

use task_projection::error::WireError;

/// Everything a storage or service call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("migration error: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("SQLite migration error: {0}")]
    SqliteMigrate(#[from] rusqlite_migration::Error),
    /// An SQLite database this build will not migrate: an earlier build's bookkeeping it cannot
    /// take over (a failed, changed, missing or unknown migration), or a newer build's schema.
    /// Refused before anything was written.
    #[error("SQLite database left untouched: {0}")]
    SqliteRefused(String),
    /// The stored epoch is not a canonical positive integer (SPEC §5); the value is left as is.
    #[error(
        "meta.projection_epoch holds {stored:?}, not a canonical positive integer: refusing to \
         start (fix or delete the row; it was left untouched)"
    )]
    CorruptEpoch { stored: String },
    #[error("the revision clock row (meta.projection_epoch) is missing: the server did not start")]
    ClockMissing,
    #[error("epoch allocation lost {0} races in a row")]
    EpochContention(u32),
    /// A stored row the rules cannot read (bad JSON metadata, a wrong type): projections fail
    /// instead of answering clean.
    #[error("corrupt {table} row {id:?}: {detail}")]
    CorruptRow {
        table: &'static str,
        id: String,
        detail: String,
    },
    #[error("{what} {id:?} not found")]
    NotFound { what: &'static str, id: String },
    #[error("invalid input: {0}")]
    Invalid(String),
}

impl ServerError {
    pub(crate) fn corrupt(table: &'static str, id: &str, detail: impl ToString) -> ServerError {
        ServerError::CorruptRow {
            table,
            id: id.to_owned(),
            detail: detail.to_string(),
        }
    }

    pub(crate) fn wire(table: &'static str, id: &str, error: &WireError) -> ServerError {
        ServerError::corrupt(table, id, error)
    }
}

pub type Result<T, E = ServerError> = std::result::Result<T, E>;
