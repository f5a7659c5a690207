//! The argument and row layer: statement arguments ([`Arg`]), where a statement runs ([`On`]),
//! rows ([`Row`], read from SQLite or PostgreSQL) and their columns ([`Column`], [`Columns`],
//! [`Section`], `col`).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use sqlx::postgres::PgRow;

use crate::error::{Result, ServerError};

use super::{Conn, Db};

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
    pub(super) columns: Arc<[String]>,
    pub(super) values: Vec<rusqlite::types::Value>,
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
