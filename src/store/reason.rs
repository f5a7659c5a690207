//! Machine-readable reasons: why the store answered or applied what it did. Codes are static
//! strings (nothing is built per call).

use crate::rules::connection::Hello;
use crate::rules::knowledge::Awaiting;
use crate::rules::owner::{OwnerReason, SettleReason};
use crate::rules::pending::SessionActionReason;
use crate::rules::revision::ReplaceReason;
use crate::rules::turn::TurnReason;

/// Why a query answered what it did, or what an event did to the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    // events
    Applied,
    Unchanged,
    OlderRevisionRejected,
    OlderUpdateCarriesNoProjection,
    TaskMismatchRejected,
    BufferedUntilSessionList,
    BufferedUntilTurnList,
    UnknownFetchToken,
    /// The input is about a removed task or one of its sessions (removal is final).
    TaskRemoved,
    /// An add or update of a message that an input newer than it deleted.
    DeletedMessageStaysDeleted,
    /// A session event older than the session's state (`updated_at`), without a newer
    /// projection.
    OlderStateIgnored,
    /// A connection's `server.hello` (`applyFrame`): the first one, the same epoch, a new one, a
    /// resumed stream.
    Hello(Hello),
    /// The answer is not known yet (SPEC §11): the input it waits for.
    Awaiting(Awaiting),
    // session action / current turn
    AuthoritativeProjection,
    Turn(TurnReason),
    SessionAction(SessionActionReason),
    // discovery
    ProjectionNotClarification,
    NoCurrentTurn,
    AuthorityUnknown,
    NoPendingRequest,
    BundleIncomplete,
    ActiveBundle,
    NewestPermissionPending,
    NoPendingPermission,
    // task
    StatusSummaryAction,
    LegacyTaskAction,
    DerivedFromSessions,
    StatusSummaryHeld,
    NoStatusSummary,
    Owner(OwnerReason),
    // selection
    Settle(SettleReason),
    TicketNotCurrent,
    /// A respond's reply that changed nothing (SPEC §13): not the current attempt's first.
    StaleReply(crate::rules::action::Stale),
    /// An inbox page no later a read than the one held (SPEC §14): ignored.
    InboxPageOlder,
    /// The inbox's state (SPEC §14).
    Inbox(crate::rules::workspace::State),
}

impl Reason {
    /// The stable code.
    pub const fn code(self) -> &'static str {
        match self {
            Reason::Applied => "applied",
            Reason::Unchanged => "unchanged",
            Reason::OlderRevisionRejected => "older_revision_rejected",
            Reason::OlderUpdateCarriesNoProjection => "older_update_carries_no_projection",
            Reason::TaskMismatchRejected => "task_mismatch_rejected",
            Reason::BufferedUntilSessionList => "buffered_until_session_list",
            Reason::BufferedUntilTurnList => "buffered_until_turn_list",
            Reason::UnknownFetchToken => "unknown_fetch_token",
            Reason::TaskRemoved => "task_removed",
            Reason::StaleReply(stale) => stale.as_str(),
            Reason::DeletedMessageStaysDeleted => "deleted_message_stays_deleted",
            Reason::OlderStateIgnored => "older_state_ignored",
            Reason::Hello(h) => match h {
                Hello::First => "first_hello",
                Hello::SameEpoch => "same_epoch",
                Hello::NewEpoch => "new_epoch",
                Hello::Resumed => "resumed",
            },
            Reason::Awaiting(a) => match a {
                Awaiting::SessionList => "awaiting_session_list",
                Awaiting::TurnList => "awaiting_turn_list",
                Awaiting::MessagePage => "awaiting_message_page",
                Awaiting::Task => "awaiting_task",
            },
            Reason::AuthoritativeProjection => "authoritative_projection",
            Reason::Turn(r) => match r {
                TurnReason::HistoryNotLoaded => "turn_history_not_loaded",
                TurnReason::SessionNotInputCapable => "session_not_input_capable",
                TurnReason::NoEligibleTurn => "no_eligible_turn",
                TurnReason::OpenTurnOutranksCompleted => "open_turn_outranks_completed",
                TurnReason::NewestTurn => "newest_turn",
            },
            Reason::SessionAction(r) => match r {
                SessionActionReason::TerminalSession => "terminal_session",
                SessionActionReason::SessionNotInputCapable => "session_not_input_capable",
                SessionActionReason::TurnHistoryUnknown => "turn_history_not_loaded",
                SessionActionReason::NoCurrentTurn => "no_current_turn",
                SessionActionReason::PendingClarificationInCurrentTurn => {
                    "pending_clarification_in_current_turn"
                }
                SessionActionReason::LatestPermissionPending => "latest_permission_pending",
                SessionActionReason::NothingPendingInCurrentTurn => {
                    "nothing_pending_in_current_turn"
                }
            },
            Reason::ProjectionNotClarification => "projection_not_clarification",
            Reason::NoCurrentTurn => "no_current_turn",
            Reason::AuthorityUnknown => "authority_unknown",
            Reason::NoPendingRequest => "no_pending_request",
            Reason::BundleIncomplete => "bundle_incomplete",
            Reason::ActiveBundle => "active_bundle",
            Reason::NewestPermissionPending => "newest_permission_pending",
            Reason::NoPendingPermission => "no_pending_permission",
            Reason::StatusSummaryAction => "status_summary_action",
            Reason::LegacyTaskAction => "legacy_task_action",
            Reason::DerivedFromSessions => "derived_from_sessions",
            Reason::StatusSummaryHeld => "status_summary_held",
            Reason::NoStatusSummary => "no_status_summary",
            Reason::Owner(r) => owner_code(r),
            Reason::Settle(r) => match r {
                SettleReason::Superseded => "superseded_by_newer_selection",
                SettleReason::ActiveTaskChanged => "active_task_changed",
                SettleReason::Aborted => "aborted",
                SettleReason::TaskGone => "task_gone",
                SettleReason::TaskChangedDuringLoad => "task_changed_during_load",
                SettleReason::LoadFailedPendingTask => "load_failed_pending_task",
                SettleReason::LoadFailedCleanTask => "load_failed_clean_task",
                SettleReason::Resolved(r) => owner_code(r),
            },
            Reason::TicketNotCurrent => "ticket_not_current",
            Reason::InboxPageOlder => "inbox_page_older",
            Reason::Inbox(state) => state.as_str(),
        }
    }

    /// A rejected revision comparison, as an event reason.
    pub fn from_replace(reason: ReplaceReason) -> Reason {
        match reason {
            ReplaceReason::OlderEpoch | ReplaceReason::OlderRevisionRejected => {
                Reason::OlderRevisionRejected
            }
            _ => Reason::Unchanged,
        }
    }
}

const fn owner_code(reason: OwnerReason) -> &'static str {
    match reason {
        OwnerReason::PendingOwner => "pending_owner",
        OwnerReason::OwnerNotInputCapable => "owner_not_input_capable",
        OwnerReason::PreferredSession => "preferred_session",
        OwnerReason::PrimarySession => "primary_session",
        OwnerReason::FirstListedSession => "first_listed_session",
        OwnerReason::PreferredNotListed => "preferred_not_listed",
        OwnerReason::NoSession => "no_session",
    }
}

impl crate::json::Json {
    /// `"key":"<reason code>"` (explanations, traces).
    pub(crate) fn reason(&mut self, key: &str, reason: Reason) {
        self.str(key, Some(reason.code()));
    }

    /// `"key":"clarification" | "permission" | null` (explanations, snapshots, traces).
    pub(crate) fn action(&mut self, key: &str, action: Option<crate::rules::model::PendingAction>) {
        self.str(key, action.map(crate::rules::model::PendingAction::as_str));
    }
}
