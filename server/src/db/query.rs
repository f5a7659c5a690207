//! Statements: [`query`] / [`query_scalar`] with `$n` arguments, run on a [`Db`](super::Db) or a held
//! [`Conn`](super::Conn) on either backend, and the process's statement counter
//! ([`statements_run`]).

use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{Result, ServerError};

use super::args::{Arg, Column, On, Row, SqliteRow};
use super::{pg, Handle, Held};

/// Statements run by this process (every backend; `BEGIN`/`COMMIT` not counted).
static STATEMENTS: AtomicU64 = AtomicU64::new(0);

/// How many statements this process ran so far (the load benchmark's statements per event).
pub fn statements_run() -> u64 {
    STATEMENTS.load(Ordering::Relaxed)
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
