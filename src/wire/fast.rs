//! The codes of the store's fast path (`__applyMessage`, `__sessionQuery` in
//! `src/wasm/store/`), which `js/store.js` passes as numbers: the `FAST` object of `js/read.js`
//! is written from [`ALL`] by tests/generated.rs.

/// `kind`: a message event, or a row of a REST message page.
pub mod kind {
    pub const ADDED: u8 = 0;
    pub const UPDATED: u8 = 1;
    pub const DELETED: u8 = 2;
    /// A row of a message page after its first.
    pub const PAGE_ROW: u8 = 3;
    /// The first row of a message page.
    pub const PAGE_FIRST: u8 = 4;
}

/// `action`: the event's `pending_action` key.
pub mod action {
    /// The key is absent.
    pub const ABSENT: u8 = 0;
    /// `null`: nothing pending.
    pub const CLEAN: u8 = 1;
    pub const CLARIFICATION: u8 = 2;
    pub const PERMISSION: u8 = 3;
}

/// `query`: the session query `__sessionQuery` answers by handle.
pub mod query {
    pub const SESSION_PENDING_ACTION: u8 = 0;
    pub const CURRENT_TURN_ID: u8 = 1;
    pub const PENDING_CLARIFICATION: u8 = 2;
    pub const HIDDEN_MESSAGE_IDS: u8 = 3;
    pub const HAS_PENDING_PERMISSION: u8 = 4;
}

/// Every code as `(group, name in js/store.js's `FAST`, value)`, in the order `FAST` lists them.
pub const ALL: &[(&str, &str, u8)] = &[
    ("kind", "added", kind::ADDED),
    ("kind", "updated", kind::UPDATED),
    ("kind", "deleted", kind::DELETED),
    ("kind", "pageRow", kind::PAGE_ROW),
    ("kind", "pageFirst", kind::PAGE_FIRST),
    ("action", "absent", action::ABSENT),
    ("action", "clean", action::CLEAN),
    ("action", "clarification", action::CLARIFICATION),
    ("action", "permission", action::PERMISSION),
    (
        "query",
        "sessionPendingAction",
        query::SESSION_PENDING_ACTION,
    ),
    ("query", "currentTurnId", query::CURRENT_TURN_ID),
    (
        "query",
        "pendingClarification",
        query::PENDING_CLARIFICATION,
    ),
    ("query", "hiddenMessageIds", query::HIDDEN_MESSAGE_IDS),
    (
        "query",
        "hasPendingPermission",
        query::HAS_PENDING_PERMISSION,
    ),
];
