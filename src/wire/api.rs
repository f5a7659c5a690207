//! The public API as decoding plus one rule call each, generic over [`Wire`]. The wasm binding is
//! these functions over the tape (`wire::tape`) plus result conversion; native callers and the
//! native scenario runner use them over `serde_json::Value`. Argument names are the roots of error
//! paths.

use std::cmp::Ordering;

use crate::error::{WireError, WireErrorKind};
use crate::rules::lifecycle::{
    normalize_end_policy, normalize_start_policy, EndPolicy, StartPolicy,
};
use crate::rules::model::{PendingAction, Turn};
use crate::rules::owner::{
    resolve_owner, settle_selection, Load, Owner, SelectionOutcome, Settle, TaskMark,
};
use crate::rules::revision::{
    can_replace, compare_revisions, merge_projection, PendingProjection, Side,
};
use crate::rules::summary::{
    is_newer_summary, merge_fetched_summary, FetchStart, FetchedSummary, FetchedTask,
};
use crate::rules::turn::{current_turn, visible_turn_history as visible_history, CurrentTurn};
use crate::rules::{clarification, pending};

use super::{decode, Path, Wire};

const NOT_REFERENCED: fn(&str) -> bool = |_| false;

/// `currentTurnId(turns, sessionState?)`: the current turn's id (SPEC §2).
pub fn current_turn_id<W: Wire>(
    turns: &W,
    session_state: &W,
) -> Result<CurrentTurn<String>, WireError> {
    let turns = decode::turns(turns, &Path::Root("turns"))?;
    let state = decode::session_state(session_state, &Path::Root("sessionState"))?;
    let (current, _) = current_turn(turns.as_deref(), state, NOT_REFERENCED);
    Ok(current.map(|index| {
        turns
            .as_ref()
            .and_then(|t| t.get(index))
            .map(|t| t.id.clone())
            .unwrap_or_default()
    }))
}

/// `visibleTurnHistory(turns)`: indices of the published turns in ascending order (SPEC §2).
pub fn visible_turn_history<W: Wire>(turns: &W) -> Result<Vec<usize>, WireError> {
    let path = Path::Root("turns");
    decode::array(turns, &path)?;
    // The ids are only compared: read in place, not copied.
    let turns: Vec<Turn<W::Text>> =
        decode::turns_of::<W, W::Text>(turns, &path)?.unwrap_or_default();
    Ok(visible_history(&turns, NOT_REFERENCED))
}

/// The message array (`undefined` or `null`: an empty transcript, as the reference client
/// answers) and the scope of a discovery call.
fn messages_and_scope<W: Wire>(
    messages: &W,
    scope: &W,
) -> Result<(Vec<crate::rules::model::Message>, Option<decode::ScopeArg>), WireError> {
    Ok((
        decode::optional_messages(messages, &Path::Root("messages"))?,
        decode::scope(scope, &Path::Root("scope"))?,
    ))
}

/// `findPendingClarification(messages, scope?)`: index of the pending request (SPEC §3).
pub fn find_pending_clarification<W: Wire>(
    messages: &W,
    scope: &W,
) -> Result<Option<usize>, WireError> {
    let (messages, scope) = messages_and_scope(messages, scope)?;
    let scope = scope.as_ref().map(decode::ScopeArg::as_scope);
    Ok(clarification::pending_request(&messages, scope.as_ref()))
}

/// `pendingClarificationBundle(messages, scope?)`: indices of the bundle's pending rows (SPEC §3).
pub fn pending_clarification_bundle<W: Wire>(
    messages: &W,
    scope: &W,
) -> Result<Vec<usize>, WireError> {
    let (messages, scope) = messages_and_scope(messages, scope)?;
    let scope = scope.as_ref().map(decode::ScopeArg::as_scope);
    Ok(clarification::pending_bundle(&messages, scope.as_ref()))
}

/// `visibleTranscriptMessages(messages, scope?)`: indices of the rows to show (SPEC §3).
pub fn visible_transcript_messages<W: Wire>(
    messages: &W,
    scope: &W,
) -> Result<Vec<usize>, WireError> {
    let (messages, scope) = messages_and_scope(messages, scope)?;
    let scope = scope.as_ref().map(decode::ScopeArg::as_scope);
    Ok(clarification::visible_transcript(&messages, scope.as_ref()))
}

/// `hasPendingPermission(messages)` (SPEC §3); `undefined`/`null` is an empty transcript.
pub fn has_pending_permission<W: Wire>(messages: &W) -> Result<bool, WireError> {
    let messages = decode::optional_messages(messages, &Path::Root("messages"))?;
    Ok(clarification::has_pending_permission(&messages))
}

/// `sessionPendingAction({ session, turns, messages })` (SPEC §4).
pub fn session_pending_action<W: Wire>(input: &W) -> Result<Option<PendingAction>, WireError> {
    let path = Path::Root("input");
    decode::object(input, &path)?;
    let session = input.get("session");
    let state = if session.is_absent() {
        None
    } else {
        decode::session(&session, &path.key("session"))?.state
    };
    let turns = decode::turns(&input.get("turns"), &path.key("turns"))?;
    let messages = decode::optional_messages(&input.get("messages"), &path.key("messages"))?;
    Ok(pending::session_pending_action(state, turns.as_deref(), &messages).0)
}

/// `taskPendingAction(sessions)` (SPEC §4).
pub fn task_pending_action<W: Wire>(sessions: &W) -> Result<Option<PendingAction>, WireError> {
    let sessions = decode::sessions_of::<W, W::Text>(sessions, &Path::Root("sessions"))?;
    Ok(pending::task_pending_action(&sessions))
}

/// `effectiveTaskPendingAction(task)` (SPEC §4).
pub fn effective_task_pending_action<W: Wire>(
    task: &W,
) -> Result<Option<PendingAction>, WireError> {
    let task = decode::task(task, &Path::Root("task"))?;
    Ok(pending::effective_task_pending_action(&task))
}

/// `compareRevisions(a, b)` (SPEC §5); both revisions are required.
pub fn compare_revisions_of<W: Wire>(a: &W, b: &W) -> Result<Ordering, WireError> {
    let (a_path, b_path) = (Path::Root("a"), Path::Root("b"));
    let required = |value: &W, path: &Path<'_>| {
        decode::revision(value, path)?.ok_or_else(|| {
            WireError::from(WireErrorKind::InvalidRevision {
                field: path.text(),
                problem: "expected a revision object {epoch, sequence}",
            })
        })
    };
    let a = required(a, &a_path)?;
    let b = required(b, &b_path)?;
    compare_revisions(&a, &b).map_err(|side| {
        let (path, epoch) = match side {
            Side::Held => (a_path, &a.epoch),
            Side::Incoming => (b_path, &b.epoch),
        };
        WireError::from(WireErrorKind::MalformedEpoch {
            field: path.key("epoch").text(),
            epoch: crate::error::quoted(epoch).into_owned(),
        })
    })
}

/// `canReplaceRevision(held, incoming)` (SPEC §5).
pub fn can_replace_revision<W: Wire>(held: &W, incoming: &W) -> Result<bool, WireError> {
    let held = decode::revision(held, &Path::Root("held"))?;
    let incoming = decode::revision(incoming, &Path::Root("incoming"))?;
    Ok(can_replace(held.as_ref(), incoming.as_ref()).0)
}

/// `mergePendingProjection(held, incoming)` (SPEC §5).
pub fn merge_pending_projection<W: Wire>(
    held: &W,
    incoming: &W,
) -> Result<PendingProjection, WireError> {
    let held = decode::projection(held, &Path::Root("held"))?;
    let incoming = decode::projection(incoming, &Path::Root("incoming"))?;
    Ok(merge_projection(&held, &incoming))
}

/// `resolveTaskSessionId({ task, sessions, preferredSessionId? })` (SPEC §6): the session id, or
/// `""` for task-only navigation.
pub fn resolve_task_session_id<W: Wire>(input: &W) -> Result<String, WireError> {
    let path = Path::Root("input");
    decode::object(input, &path)?;
    let task = decode::task(&input.get("task"), &path.key("task"))?;
    let sessions =
        decode::sessions_of::<W, W::Text>(&input.get("sessions"), &path.key("sessions"))?;
    let preferred = decode::optional_string(
        &input.get("preferredSessionId"),
        &path.key("preferredSessionId"),
    )?;
    let action = pending::effective_task_pending_action(&task);
    let (owner, _) = resolve_owner(action, task.id.as_deref(), &sessions, preferred.as_deref());
    Ok(match owner {
        Owner::Session(id) => id.to_owned(),
        Owner::TaskOnly => String::new(),
    })
}

/// The owned form of [`SelectionOutcome`]: where a settled selection navigates, as the store's
/// `settle_selection` answers it.
pub type Selection = crate::store::Navigation;

/// `selectionOutcome({ taskAtStart, taskNow, sessions?, loadFailed?, aborted?, superseded?,
/// activeTaskChanged?, preferredSessionId? })` (SPEC §6 settle).
pub fn selection_outcome<W: Wire>(input: &W) -> Result<Selection, WireError> {
    let path = Path::Root("input");
    decode::object(input, &path)?;
    let at_start = decode::task(&input.get("taskAtStart"), &path.key("taskAtStart"))?;
    let now_value = input.get("taskNow");
    let now = if now_value.is_absent() {
        None
    } else {
        Some(decode::task(&now_value, &path.key("taskNow"))?)
    };
    let sessions_value = input.get("sessions");
    let sessions = if sessions_value.is_absent() {
        Vec::new()
    } else {
        decode::sessions_of::<W, W::Text>(&sessions_value, &path.key("sessions"))?
    };
    let flag = |key: &'static str| decode::boolean(&input.get(key), &path.key(key));
    let (load_failed, aborted) = (flag("loadFailed")?, flag("aborted")?);
    let (superseded, active_task_changed) = (flag("superseded")?, flag("activeTaskChanged")?);
    let preferred = decode::optional_string(
        &input.get("preferredSessionId"),
        &path.key("preferredSessionId"),
    )?;
    let load = if aborted {
        Load::Aborted
    } else if load_failed {
        Load::Failed
    } else {
        Load::Loaded(&sessions)
    };
    let (outcome, _) = settle_selection(Settle {
        at_start: Some(TaskMark::of(&at_start)),
        now: now.as_ref().map(TaskMark::of),
        task_id: now.as_ref().and_then(|t| t.id.as_deref()),
        superseded,
        active_task_changed,
        load,
        preferred: preferred.as_deref(),
    });
    Ok(match outcome {
        SelectionOutcome::Session(id) => Selection::Session(id.to_owned()),
        SelectionOutcome::TaskOnly => Selection::TaskOnly,
        SelectionOutcome::Inert => Selection::Inert,
    })
}

/// `isNewerStatusSummary(incoming, held)` (SPEC §7).
pub fn is_newer_status_summary<W: Wire>(incoming: &W, held: &W) -> Result<bool, WireError> {
    let incoming = decode::summary(incoming, &Path::Root("incoming"))?;
    let held = decode::summary(held, &Path::Root("held"))?;
    Ok(is_newer_summary(
        incoming.map(|s| s.revision),
        held.map(|s| s.revision),
    ))
}

/// `mergeFetchedStatusSummary({ held, taskPresentAtFetchStart, fetchStartRevision, response })`
/// (SPEC §7). [`FetchedSummary::KeepHeld`] means `input.held` (possibly none),
/// [`FetchedSummary::TakeResponse`] means `input.response.status_summary`.
pub fn merge_fetched_status_summary<W: Wire>(input: &W) -> Result<FetchedSummary, WireError> {
    let path = Path::Root("input");
    decode::object(input, &path)?;
    let held = decode::summary(&input.get("held"), &path.key("held"))?;
    let task_present = decode::boolean(
        &input.get("taskPresentAtFetchStart"),
        &path.key("taskPresentAtFetchStart"),
    )?;
    let start_revision = decode::unsigned(
        &input.get("fetchStartRevision"),
        &path.key("fetchStartRevision"),
    )?;
    let response = decode::task(&input.get("response"), &path.key("response"))?;
    let (decision, _) = merge_fetched_summary(
        held.map(|s| s.revision),
        FetchStart {
            task_present,
            revision: start_revision,
        },
        FetchedTask {
            summary: response.status_summary.map(|s| s.revision),
            invalidated: response.status_summary_invalidated,
        },
    );
    Ok(decision)
}

/// `normalizeStartPolicy(value)` (SPEC §10): any value; non-strings normalize to `reuse`.
pub fn normalize_start<W: Wire>(value: &W) -> StartPolicy {
    normalize_start_policy(value.string().as_ref().map(AsRef::as_ref))
}

/// `normalizeEndPolicy(value)` (SPEC §10): any value; non-strings normalize to `complete`.
pub fn normalize_end<W: Wire>(value: &W) -> EndPolicy {
    normalize_end_policy(value.string().as_ref().map(AsRef::as_ref))
}
