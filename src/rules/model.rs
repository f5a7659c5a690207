//! The plain data the rules decide over (SPEC §1), already validated by [`crate::wire`].
//!
//! Rules are generic over the small [`TurnRecord`] and [`MessageRecord`] views so the stateless
//! API (which decodes a whole array) and a stateful store (which keeps compact rows) call the very
//! same functions.

use super::time::Timestamp;

/// A session's or task's pending action (`"clarification" | "permission"`; `None` is clean).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PendingAction {
    Clarification,
    Permission,
}

impl PendingAction {
    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            PendingAction::Clarification => "clarification",
            PendingAction::Permission => "permission",
        }
    }

    /// Reads the wire spelling; `None` for anything else.
    pub fn parse(text: &str) -> Option<PendingAction> {
        match text {
            "clarification" => Some(PendingAction::Clarification),
            "permission" => Some(PendingAction::Permission),
            _ => None,
        }
    }
}

/// A session `state`. A string outside SPEC's list is kept as [`SessionState::Other`]: a known
/// state that is neither input-capable, terminal nor active (fail closed for states a newer
/// backend may add).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SessionState {
    Created,
    Starting,
    Running,
    Idle,
    WaitingForInput,
    Completed,
    Failed,
    Cancelled,
    Other,
}

impl SessionState {
    /// Reads the wire spelling (exact, upper case).
    pub fn parse(text: &str) -> SessionState {
        match text {
            "CREATED" => SessionState::Created,
            "STARTING" => SessionState::Starting,
            "RUNNING" => SessionState::Running,
            "IDLE" => SessionState::Idle,
            "WAITING_FOR_INPUT" => SessionState::WaitingForInput,
            "COMPLETED" => SessionState::Completed,
            "FAILED" => SessionState::Failed,
            "CANCELLED" => SessionState::Cancelled,
            _ => SessionState::Other,
        }
    }

    /// The wire spelling; `None` for [`SessionState::Other`] (a state this version does not
    /// know, whose text is not kept).
    pub const fn as_wire(self) -> Option<&'static str> {
        Some(match self {
            SessionState::Created => "CREATED",
            SessionState::Starting => "STARTING",
            SessionState::Running => "RUNNING",
            SessionState::Idle => "IDLE",
            SessionState::WaitingForInput => "WAITING_FOR_INPUT",
            SessionState::Completed => "COMPLETED",
            SessionState::Failed => "FAILED",
            SessionState::Cancelled => "CANCELLED",
            SessionState::Other => return None,
        })
    }

    /// `RUNNING` or `WAITING_FOR_INPUT`: the session can take the user's answer.
    pub const fn is_input_capable(self) -> bool {
        matches!(self, SessionState::Running | SessionState::WaitingForInput)
    }

    /// `COMPLETED`, `FAILED` or `CANCELLED`.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            SessionState::Completed | SessionState::Failed | SessionState::Cancelled
        )
    }

    /// `CREATED`, `STARTING`, `RUNNING` or `WAITING_FOR_INPUT` (stall detection).
    pub const fn is_active(self) -> bool {
        matches!(
            self,
            SessionState::Created
                | SessionState::Starting
                | SessionState::Running
                | SessionState::WaitingForInput
        )
    }
}

/// The message types the rules care about; every other `type` is ordinary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageKind {
    ClarificationRequest,
    PermissionRequest,
    Other,
}

impl MessageKind {
    pub fn parse(text: &str) -> MessageKind {
        match text {
            "clarification_request" => MessageKind::ClarificationRequest,
            "permission_request" => MessageKind::PermissionRequest,
            _ => MessageKind::Other,
        }
    }
}

/// A request's `metadata.status`. Missing or empty means pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RequestStatus {
    Pending,
    Answered,
    Approved,
    Rejected,
    Expired,
    Cancelled,
    /// Any other non-empty status: not pending.
    Other,
}

impl RequestStatus {
    /// Reads `metadata.status`; `None` (absent or `null`) and `""` are pending.
    pub fn parse(text: Option<&str>) -> RequestStatus {
        match text.unwrap_or("") {
            "" | "pending" => RequestStatus::Pending,
            "answered" => RequestStatus::Answered,
            "approved" => RequestStatus::Approved,
            "rejected" => RequestStatus::Rejected,
            "expired" => RequestStatus::Expired,
            "cancelled" => RequestStatus::Cancelled,
            _ => RequestStatus::Other,
        }
    }

    pub const fn is_pending(self) -> bool {
        matches!(self, RequestStatus::Pending)
    }

    /// The wire spelling (`other` for any other status).
    pub const fn as_str(self) -> &'static str {
        match self {
            RequestStatus::Pending => "pending",
            RequestStatus::Answered => "answered",
            RequestStatus::Approved => "approved",
            RequestStatus::Rejected => "rejected",
            RequestStatus::Expired => "expired",
            RequestStatus::Cancelled => "cancelled",
            RequestStatus::Other => "other",
        }
    }
}

/// The metadata flags of a turn (SPEC §1, "a flag is set" in SPEC §2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TurnFlags {
    pub lifecycle_only: bool,
    pub prompt_dispatch_pending: bool,
    pub prompt_dispatch_attempted: bool,
}

/// What the turn rules read of a turn.
pub trait TurnRecord {
    fn id(&self) -> &str;
    /// `completed_at` absent or `null`.
    fn is_open(&self) -> bool;
    fn started_at(&self) -> &Timestamp;
    fn created_at(&self) -> &Timestamp;
    fn flags(&self) -> TurnFlags;
}

/// What the clarification and pending-action rules read of a message.
pub trait MessageRecord {
    fn id(&self) -> &str;
    /// `None` for a turnless message (absent, `null` or `""`).
    fn turn_id(&self) -> Option<&str>;
    fn kind(&self) -> MessageKind;
    fn status(&self) -> RequestStatus;
    /// `metadata.pending_id`; `None` when absent, `null` or `""`.
    fn pending_id(&self) -> Option<&str>;
    /// `metadata.question_total` when it is a number.
    fn question_total(&self) -> Option<f64>;
    fn created_at(&self) -> &Timestamp;
    /// The row's [`RowFlags`] (`metadata.request_id`, `metadata.agent_disconnected`).
    fn flags(&self) -> RowFlags {
        RowFlags::default()
    }
}

/// What a request row says besides its status (SPEC §13): whether it carries the identity the
/// server answers it by (`metadata.request_id`, a non-empty string: a permission without one
/// cannot be answered), and whether its agent is gone (`metadata.agent_disconnected`: a detached
/// bundle).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RowFlags(pub u8);

impl RowFlags {
    pub const IDENTIFIED: u8 = 1;
    pub const DETACHED: u8 = 2;

    /// From `metadata.request_id` (present: a non-empty string) and `metadata.agent_disconnected`.
    pub fn of(request_id: Option<&str>, detached: bool) -> RowFlags {
        let identified = request_id.is_some_and(|r| !r.is_empty());
        RowFlags(u8::from(identified) | if detached { Self::DETACHED } else { 0 })
    }
    pub const fn identified(self) -> bool {
        self.0 & Self::IDENTIFIED != 0
    }
    pub const fn detached(self) -> bool {
        self.0 & Self::DETACHED != 0
    }
}

impl<T: TurnRecord + ?Sized> TurnRecord for &T {
    fn id(&self) -> &str {
        (**self).id()
    }
    fn is_open(&self) -> bool {
        (**self).is_open()
    }
    fn started_at(&self) -> &Timestamp {
        (**self).started_at()
    }
    fn created_at(&self) -> &Timestamp {
        (**self).created_at()
    }
    fn flags(&self) -> TurnFlags {
        (**self).flags()
    }
}

impl<M: MessageRecord + ?Sized> MessageRecord for &M {
    fn id(&self) -> &str {
        (**self).id()
    }
    fn turn_id(&self) -> Option<&str> {
        (**self).turn_id()
    }
    fn kind(&self) -> MessageKind {
        (**self).kind()
    }
    fn status(&self) -> RequestStatus {
        (**self).status()
    }
    fn pending_id(&self) -> Option<&str> {
        (**self).pending_id()
    }
    fn question_total(&self) -> Option<f64> {
        (**self).question_total()
    }
    fn created_at(&self) -> &Timestamp {
        (**self).created_at()
    }
}

/// A decoded turn (SPEC §1). `S` holds its id: an owned `String` where the turn is kept (the
/// store), or text borrowed from the input where it is only read (`visibleTurnHistory` over a
/// long history decodes without a copy of each id).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Turn<S = String> {
    pub id: S,
    pub completed: bool,
    pub started_at: Timestamp,
    pub created_at: Timestamp,
    pub updated_at: Option<Timestamp>,
    pub flags: TurnFlags,
}

impl<S: AsRef<str>> Turn<S> {
    /// The turn with an owned id.
    pub fn into_owned(self) -> Turn {
        Turn {
            id: self.id.as_ref().to_owned(),
            completed: self.completed,
            started_at: self.started_at,
            created_at: self.created_at,
            updated_at: self.updated_at,
            flags: self.flags,
        }
    }
}

impl<S: AsRef<str>> TurnRecord for Turn<S> {
    fn id(&self) -> &str {
        self.id.as_ref()
    }
    fn is_open(&self) -> bool {
        !self.completed
    }
    fn started_at(&self) -> &Timestamp {
        &self.started_at
    }
    fn created_at(&self) -> &Timestamp {
        &self.created_at
    }
    fn flags(&self) -> TurnFlags {
        self.flags
    }
}

/// A decoded message: only what the rules need, never the content.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub id: String,
    pub turn_id: Option<String>,
    pub kind: MessageKind,
    pub status: RequestStatus,
    pub pending_id: Option<String>,
    pub question_total: Option<f64>,
    pub created_at: Timestamp,
    pub updated_at: Option<Timestamp>,
    pub flags: RowFlags,
}

impl MessageRecord for Message {
    fn id(&self) -> &str {
        &self.id
    }
    fn turn_id(&self) -> Option<&str> {
        self.turn_id.as_deref()
    }
    fn kind(&self) -> MessageKind {
        self.kind
    }
    fn status(&self) -> RequestStatus {
        self.status
    }
    fn pending_id(&self) -> Option<&str> {
        self.pending_id.as_deref()
    }
    fn question_total(&self) -> Option<f64> {
        self.question_total
    }
    fn created_at(&self) -> &Timestamp {
        &self.created_at
    }
    fn flags(&self) -> RowFlags {
        self.flags
    }
}

/// A revision `{epoch, sequence}` (SPEC §5). The epoch is kept as the wire text: it may be
/// malformed, which the revision rules handle.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Revision {
    pub epoch: String,
    pub sequence: u64,
}

/// What the task-level rules read of a session.
pub trait SessionRecord {
    fn id(&self) -> &str;
    /// The session's task, when known.
    fn task_id(&self) -> Option<&str>;
    /// `None` when the state is not known.
    fn state(&self) -> Option<SessionState>;
    fn is_primary(&self) -> bool;
    /// The projected pending action; omitted counts as clean.
    fn action(&self) -> Option<PendingAction>;
}

impl<S: SessionRecord + ?Sized> SessionRecord for &S {
    fn id(&self) -> &str {
        (**self).id()
    }
    fn task_id(&self) -> Option<&str> {
        (**self).task_id()
    }
    fn state(&self) -> Option<SessionState> {
        (**self).state()
    }
    fn is_primary(&self) -> bool {
        (**self).is_primary()
    }
    fn action(&self) -> Option<PendingAction> {
        (**self).action()
    }
}

/// A session as listed by the backend (SPEC §1), the fields the rules read. `S` holds its ids:
/// owned `String`s, or text borrowed from the input (a session list is applied without a copy
/// of each row's ids; the store makes the one it keeps).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session<S = String> {
    pub id: S,
    pub task_id: Option<S>,
    /// `None` when the state is not known.
    pub state: Option<SessionState>,
    pub is_primary: bool,
    /// `None`: the key was omitted (unknown); `Some(None)`: clean.
    pub pending_action: Option<Option<PendingAction>>,
    pub pending_action_revision: Option<Revision>,
    /// The session's own clock (`updated_at`), which orders its `state` and `is_primary`
    /// (SPEC §5); `None` when absent.
    pub updated_at: Option<Timestamp>,
}

impl<S: AsRef<str>> Session<S> {
    /// The session with owned ids.
    pub fn into_owned(self) -> Session {
        Session {
            id: self.id.as_ref().to_owned(),
            task_id: self.task_id.as_ref().map(|t| t.as_ref().to_owned()),
            state: self.state,
            is_primary: self.is_primary,
            pending_action: self.pending_action,
            pending_action_revision: self.pending_action_revision,
            updated_at: self.updated_at,
        }
    }
}

impl<S: AsRef<str>> SessionRecord for Session<S> {
    fn id(&self) -> &str {
        self.id.as_ref()
    }
    fn task_id(&self) -> Option<&str> {
        self.task_id.as_ref().map(AsRef::as_ref)
    }
    fn state(&self) -> Option<SessionState> {
        self.state
    }
    fn is_primary(&self) -> bool {
        self.is_primary
    }
    fn action(&self) -> Option<PendingAction> {
        self.pending_action.flatten()
    }
}

/// A task status summary (SPEC §1), the fields the rules read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusSummary {
    pub revision: Option<u64>,
    /// Omitted means clean.
    pub pending_action: Option<PendingAction>,
}

/// A task (SPEC §1), the fields the rules read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Task {
    pub id: Option<String>,
    pub status_summary: Option<StatusSummary>,
    pub status_summary_invalidated: bool,
    pub task_pending_action: Option<PendingAction>,
    pub primary_session_pending_action: Option<PendingAction>,
}
