//! The demo data of `--seed-demo`, written through the simulator's operations (so it is exactly
//! what an agent driving the simulator would have produced):
//!
//! 1. a task whose primary session asks a three-question clarification (live waiter);
//! 2. a task whose only current question is owned by a secondary session, while the primary
//!    session holds an older detached question superseded by a newer turn;
//! 3. a task waiting on a permission.
//!
//! [`reset`] (the simulator's) deletes every task and writes them again.

use crate::ServerError;

use crate::http::app::App;
use crate::http::config::StartError;
use crate::http::error::{ApiError, ApiResult};

use super::{questions, sessions, turns};

/// Creates the demo tasks when the database has no tasks; `Ok(false)` when it had some.
pub async fn seed_if_empty(app: &App) -> Result<bool, StartError> {
    if app.storage.task_count().await? > 0 {
        tracing::info!("database has tasks: demo seeding skipped");
        return Ok(false);
    }
    seed(app).await.map(drop).map_err(|e| {
        StartError::Startup(ServerError::Invalid(format!(
            "demo seeding failed: {} ({})",
            e.message, e.code
        )))
    })?;
    tracing::info!("seeded the demo tasks");
    Ok(true)
}

/// Writes the demo tasks (whatever the database holds); returns their ids newest first, as the
/// task list orders them. The simulator's `reset` calls it after deleting every task.
pub async fn seed(app: &App) -> Result<Vec<String>, ApiError> {
    let core = app.core().await;
    let core = &*core;
    let mut ids = Vec::with_capacity(3);

    // 1. The primary session asks a multi-question clarification, live.
    let task = sessions::create_task(app, core, "Refactor the billing module").await?;
    ids.push(task.clone());
    let session = sessions::create_session(app, core, &task, true, "coder", "RUNNING").await?;
    turns::start_turn(
        app,
        core,
        &session,
        false,
        "Split the billing module into invoicing and payments.",
    )
    .await?;
    turns::post_message(
        app,
        core,
        &session,
        "message",
        "agent",
        "I mapped the module; before moving code I need a few decisions.",
    )
    .await?;
    questions::ask_clarification(
        app,
        core,
        &session,
        &[
            "Keep the public billing API stable, or may callers change?".into(),
            "Which currency rounding rule should invoicing use?".into(),
            "Should payments keep its own database schema?".into(),
        ],
        true,
    )
    .await?;

    // 2. An older detached question superseded in the primary session's history; the current
    //    question belongs to a secondary session.
    let task = sessions::create_task(app, core, "Upgrade the CI pipeline").await?;
    ids.push(task.clone());
    let primary = sessions::create_session(app, core, &task, true, "coder", "RUNNING").await?;
    let first =
        turns::start_turn(app, core, &primary, false, "Move CI to the new runners.").await?;
    questions::ask_clarification(
        app,
        core,
        &primary,
        &["May the nightly job move to the new runners too?".into()],
        false,
    )
    .await?;
    turns::complete_turn(app, core, &first).await?;
    turns::start_turn(
        app,
        core,
        &primary,
        false,
        "Only the pull-request jobs for now, please.",
    )
    .await?;
    turns::post_message(
        app,
        core,
        &primary,
        "message",
        "agent",
        "Moving the pull-request jobs; a reviewer session checks the cache settings.",
    )
    .await?;
    let reviewer = sessions::create_session(app, core, &task, false, "reviewer", "RUNNING").await?;
    turns::start_turn(
        app,
        core,
        &reviewer,
        false,
        "Review the cache settings of the new runners.",
    )
    .await?;
    questions::ask_clarification(
        app,
        core,
        &reviewer,
        &["Is a 2 GB cache per branch acceptable?".into()],
        true,
    )
    .await?;

    // 3. A permission.
    let task = sessions::create_task(app, core, "Deploy preview environment").await?;
    ids.push(task.clone());
    let session = sessions::create_session(app, core, &task, true, "deployer", "RUNNING").await?;
    turns::start_turn(
        app,
        core,
        &session,
        false,
        "Deploy a preview of the current branch.",
    )
    .await?;
    questions::ask_permission(
        app,
        core,
        &session,
        "Run `terraform apply` on the preview workspace?",
    )
    .await?;
    ids.reverse();
    Ok(ids)
}

/// The demo data again (the simulator's `reset`): every listed task is deleted (`task.deleted`
/// each; the agent forgets their sessions), then the tasks of `--seed-demo` are written. Returns
/// the deleted task ids and the new ones (newest first, as the task list orders them).
pub async fn reset(app: &App) -> ApiResult<(Vec<String>, Vec<String>)> {
    let _one = app.agent.reset_lock().await;
    let mut deleted = Vec::new();
    for task in app.storage.unarchived_tasks().await? {
        let sessions = app.storage.sessions_of_task(&task.id).await?;
        match sessions::delete_task(app, &task.id).await {
            Ok(()) => deleted.push(task.id),
            // Deleted meanwhile by another request: nothing left to do for it.
            Err(error) if error.status == axum::http::StatusCode::NOT_FOUND => continue,
            Err(error) => return Err(error),
        }
        for session in sessions {
            app.agent.forget(&session.id);
        }
    }
    let created = seed(app).await?;
    Ok((deleted, created))
}
