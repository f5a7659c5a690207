//! Shared fixtures of the server test suites: a fresh database per test on SQLite (a temp file)
//! and, when `TASK_PROJECTION_TEST_PG_URL` is set, on PostgreSQL (a fresh database per test on
//! that server). `scripts/test.sh` always sets it; locally the PostgreSQL variants are skipped.
#![allow(dead_code)]

use serde_json::{json, Value};
use task_projection_server::storage::{self, NewMessage, NewSession, NewTask, NewTurn, Storage};
use task_projection_server::{Backend, Db};

pub const PG_ENV: &str = "TASK_PROJECTION_TEST_PG_URL";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Sqlite,
    Postgres,
}

/// A fresh, empty database URL of the given kind; `None` for PostgreSQL when the env var is
/// unset (the test is skipped).
pub async fn fresh_url(kind: Kind) -> Option<String> {
    let name = format!("tp_{}", uuid::Uuid::new_v4().simple());
    match kind {
        Kind::Sqlite => {
            // Cargo's scratch dir for integration tests (under target/, not /tmp).
            let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
            sweep_old_files(dir);
            let path = dir.join(format!("{name}.db"));
            Some(format!("sqlite://{}?mode=rwc", path.display()))
        }
        Kind::Postgres => {
            let Some(admin) = std::env::var(PG_ENV).ok().filter(|u| !u.is_empty()) else {
                // scripts/test.sh requires the PostgreSQL run: a missing URL there is a failure.
                assert!(
                    std::env::var_os("TASK_PROJECTION_REQUIRE_PG").is_none(),
                    "{PG_ENV} is not set but TASK_PROJECTION_REQUIRE_PG is"
                );
                return None;
            };
            let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&admin)
                .await
                .expect("connect to the PostgreSQL admin URL");
            sqlx::query(&format!("CREATE DATABASE {name}"))
                .execute(&mut conn)
                .await
                .expect("create a test database");
            let _ = sqlx::Connection::close(conn).await;
            let (base, _) = admin.rsplit_once('/').expect("a URL with a database path");
            Some(format!("{base}/{name}"))
        }
    }
}

/// Deletes test databases older than ten minutes (earlier runs), once per process.
fn sweep_old_files(dir: &std::path::Path) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > std::time::Duration::from_secs(600));
            if old && entry.file_name().to_string_lossy().starts_with("tp_") {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    });
}

/// A fresh migrated database, or `None` (skip) for PostgreSQL without the env var.
pub async fn fresh(kind: Kind) -> Option<Db> {
    let url = fresh_url(kind).await?;
    Some(storage::connect(&url).await.expect("connect and migrate"))
}

/// Makes every write to `task_status_summaries` fail (a trigger), so a summary repair's write
/// fails as a lost connection or a constraint would.
pub async fn reject_summary_writes(db: &Db) {
    let statements: &[&str] = match db.backend() {
        Backend::Sqlite => &[
            "CREATE TRIGGER reject_summary_writes BEFORE UPDATE ON task_status_summaries \
             BEGIN SELECT RAISE(ABORT, 'summary writes disabled'); END",
        ],
        Backend::Postgres => &[
            "CREATE FUNCTION reject_summary_writes() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION 'summary writes disabled'; END $$",
            "CREATE TRIGGER reject_summary_writes BEFORE UPDATE ON task_status_summaries \
             FOR EACH ROW EXECUTE FUNCTION reject_summary_writes()",
        ],
    };
    for statement in statements {
        task_projection_server::db::query(*statement)
            .execute(db)
            .await
            .unwrap();
    }
}

/// Runs one test body on SQLite and on PostgreSQL:
/// `both!(name)` where `async fn name(db: Db, kind: Kind)` (a module of the same name holds the
/// two tests).
#[macro_export]
macro_rules! both {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let kind = $crate::server_support::Kind::Sqlite;
                let db = $crate::server_support::fresh(kind).await.expect("sqlite");
                super::$name(db, kind).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let kind = $crate::server_support::Kind::Postgres;
                match $crate::server_support::fresh(kind).await {
                    Some(db) => super::$name(db, kind).await,
                    None => eprintln!("skipped: {} is not set", $crate::server_support::PG_ENV),
                }
            }
        }
    };
}

/// `12:00` → `2026-11-29T12:00:00Z`; `12:00:01` → `…12:00:01Z`; full text passes through.
pub fn t(hm: &str) -> String {
    if hm.contains('T') {
        return hm.to_owned();
    }
    if hm.matches(':').count() == 1 {
        format!("2026-11-29T{hm}:00Z")
    } else {
        format!("2026-11-29T{hm}Z")
    }
}

/// A small fixture writer.
#[derive(Clone, Debug)]
pub struct Fx {
    pub storage: Storage,
}

impl Fx {
    pub fn new(db: &Db) -> Fx {
        Fx {
            storage: Storage::new(db.clone()),
        }
    }

    pub async fn task(&self, id: &str) {
        self.storage
            .insert_task(&NewTask {
                id,
                workspace_id: "ws-1",
                created_at: &t("10:00"),
            })
            .await
            .expect("insert task");
    }

    pub async fn session(&self, id: &str, task: &str, state: &str) {
        self.session_at(id, task, state, "", &t("10:00")).await;
    }

    pub async fn session_at(&self, id: &str, task: &str, state: &str, profile: &str, at: &str) {
        self.storage
            .insert_session(&NewSession {
                id,
                task_id: task,
                state,
                agent_profile_id: profile,
                is_primary: false,
                started_at: at,
                updated_at: at,
            })
            .await
            .expect("insert session");
    }

    /// A turn; `completed` is the completed_at time (None = open).
    pub async fn turn(
        &self,
        id: &str,
        session: &str,
        started: &str,
        completed: Option<&str>,
        meta: Value,
    ) {
        let task = self
            .storage
            .session(session)
            .await
            .expect("session")
            .task_id;
        let started = t(started);
        let completed = completed.map(t);
        self.storage
            .insert_turn(&NewTurn {
                id,
                session_id: session,
                task_id: &task,
                started_at: &started,
                created_at: &started,
                completed_at: completed.as_deref(),
                metadata: meta,
            })
            .await
            .expect("insert turn");
    }

    pub async fn message(
        &self,
        id: &str,
        session: &str,
        turn: Option<&str>,
        kind: &str,
        meta: Value,
        created: &str,
    ) {
        let task = self
            .storage
            .session(session)
            .await
            .expect("session")
            .task_id;
        self.storage
            .insert_message(&NewMessage {
                id,
                session_id: session,
                task_id: &task,
                turn_id: turn,
                author_type: "agent",
                message_type: kind,
                content: "",
                metadata: meta,
                created_at: &t(created),
            })
            .await
            .expect("insert message");
    }

    /// A clarification row of bundle `pending_id` with `status`.
    pub async fn question(
        &self,
        id: &str,
        session: &str,
        turn: &str,
        pending_id: &str,
        status: &str,
        created: &str,
    ) {
        self.message(
            id,
            session,
            Some(turn),
            "clarification_request",
            json!({ "pending_id": pending_id, "status": status }),
            created,
        )
        .await;
    }
}
