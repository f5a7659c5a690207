//! Status-summary merging and invalidation on the client (SPEC §7).

/// Does a live `task.status_summary.updated` replace the held summary? Only when nothing is held
/// or its revision is strictly greater. `incoming`/`held` are `None` when there is no summary;
/// the inner option is the summary's `revision` (a missing revision ranks below any revision).
pub fn is_newer_summary(incoming: Option<Option<u64>>, held: Option<Option<u64>>) -> bool {
    match (incoming, held) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(incoming), Some(held)) => incoming > held,
    }
}

/// What to hold after a REST snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FetchedSummary {
    KeepHeld,
    TakeResponse,
    /// Drop the held summary (the coarse legacy fields then show).
    Drop,
}

/// Why [`merge_fetched_summary`] decided what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FetchedReason {
    InvalidatedWithoutNewerLive,
    ResponseOmitsSummary,
    HeldIsNewer,
    ResponseIsNewerOrEqual,
}

/// The state captured when a REST request was issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FetchStart {
    pub task_present: bool,
    /// The held summary's revision at request start (`None`: none held or no revision).
    pub revision: Option<u64>,
}

/// A REST task's summary fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FetchedTask {
    /// `None` when the response omits the summary or sends `null`; else its revision.
    pub summary: Option<Option<u64>>,
    pub invalidated: bool,
}

/// Is there a live summary newer than the request (SPEC §7)? The held summary has a revision and
/// either the task was absent at request start or the held revision exceeds the one at start.
pub fn has_newer_live_summary(held: Option<Option<u64>>, start: FetchStart) -> bool {
    match held.flatten() {
        None => false,
        Some(held) => !start.task_present || start.revision.is_none_or(|at_start| held > at_start),
    }
}

/// Merges a REST snapshot's summary against what is held (SPEC §7). Only the invalidation flag
/// can clear a summary.
pub fn merge_fetched_summary(
    held: Option<Option<u64>>,
    start: FetchStart,
    response: FetchedTask,
) -> (FetchedSummary, FetchedReason) {
    if response.invalidated && !has_newer_live_summary(held, start) {
        return (
            FetchedSummary::Drop,
            FetchedReason::InvalidatedWithoutNewerLive,
        );
    }
    let Some(response_revision) = response.summary else {
        return (
            FetchedSummary::KeepHeld,
            FetchedReason::ResponseOmitsSummary,
        );
    };
    match held {
        Some(held_revision) if held_revision > response_revision => {
            (FetchedSummary::KeepHeld, FetchedReason::HeldIsNewer)
        }
        _ => (
            FetchedSummary::TakeResponse,
            FetchedReason::ResponseIsNewerOrEqual,
        ),
    }
}
