//! The wire shapes, described once: what the decoders of this module read of each argument
//! (the keys, in the order `js/read.js` walks them onto the tape), and how the package's
//! TypeScript declarations spell each shape.
//!
//! Everything else is generated from these tables or reads them:
//! - the generated region of `js/read.js`: the schemas it walks, the tape constants of
//!   [`super::tape`], the fast-path codes of [`super::fast`], and the code that writes out the
//!   shapes of [`WRITTEN_OUT`] and copies those of [`COPIED`]; and the wire interfaces of
//!   `src/wasm/types/wire.d.ts` and `store.d.ts`, written by `tests/generated.rs`
//!   (`UPDATE_GENERATED=1 cargo test --test generated`; the test fails when a committed file
//!   differs from what it writes);
//! - the native trace recorder (`crate::trace::schema`) writes a call's arguments by these
//!   schemas.
//!
//! The decoders (`decode.rs`, `events.rs`, `api.rs`, `snapshot.rs`, `store_api.rs`) read fields
//! by name; tests/generated.rs checks that every key a schema lists is one a decoder reads and
//! the other way round, and tests/js/boundary.test.mjs that no decoder reads a key the tape of a
//! scenario input lacks (`__tapeMissed`).

/// How a field's value is read.
#[derive(Clone, Copy, Debug)]
pub enum Node {
    /// A primitive: copied; an object or array here is written as an empty stand-in (the
    /// decoders read none of it).
    Leaf,
    /// An object of this shape.
    Object(&'static Shape),
    /// An object of this shape that the store keeps and hands back (a status summary): read like
    /// [`Node::Object`], and the caller's object itself is passed along.
    Kept(&'static Shape),
    /// An array of this.
    Array(&'static Node),
    /// Declared for TypeScript only: no decoder reads it, so it is not on the tape (nor in a
    /// trace).
    Ignored,
}

impl Node {
    /// Whether the decoders read it (it is in the schema `js/read.js` walks).
    pub const fn is_read(&self) -> bool {
        !matches!(self, Node::Ignored)
    }
}

/// Where a shape's TypeScript interface is declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ts {
    /// None: the shape is an argument of a function whose declaration spells it, or opaque.
    None,
    /// `src/wasm/types/wire.d.ts` (both modules' declarations), under this name.
    Wire(&'static str),
    /// `src/wasm/types/store.d.ts` (the store module's), under this name.
    Store(&'static str),
}

/// One field of a shape.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub key: &'static str,
    pub node: Node,
    /// Its TypeScript type; `$` stands for the field's shape (its interface's name, or its
    /// fields inline when it has none).
    pub ts: &'static str,
    /// Declared `key?:` (may be absent).
    pub optional: bool,
    /// One line (or a few) for the declaration's doc comment; empty for none.
    pub doc: &'static str,
}

impl Field {
    pub const fn doc(mut self, doc: &'static str) -> Field {
        self.doc = doc;
        self
    }
}

/// An optional field (`key?: ts`).
const fn opt(key: &'static str, node: Node, ts: &'static str) -> Field {
    Field {
        key,
        node,
        ts,
        optional: true,
        doc: "",
    }
}

/// A required field (`key: ts`).
const fn req(key: &'static str, node: Node, ts: &'static str) -> Field {
    Field {
        key,
        node,
        ts,
        optional: false,
        doc: "",
    }
}

/// A field of a shape without TypeScript declaration (an argument object).
const fn arg(key: &'static str, node: Node) -> Field {
    opt(key, node, "")
}

/// An object shape.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Its constant's name in `js/read.js`; empty for a shape written inline there.
    pub name: &'static str,
    pub ts: Ts,
    pub doc: &'static str,
    /// The shape it extends (TypeScript `extends`): its fields first, each replaced in place by
    /// a field of this shape of the same key, then this shape's other fields.
    pub base: Option<&'static Shape>,
    /// Its own fields, in order.
    pub own: &'static [Field],
}

impl Shape {
    const fn new(name: &'static str, own: &'static [Field]) -> Shape {
        Shape {
            name,
            ts: Ts::None,
            doc: "",
            base: None,
            own,
        }
    }
    const fn ts(mut self, ts: Ts) -> Shape {
        self.ts = ts;
        self
    }
    const fn doc(mut self, doc: &'static str) -> Shape {
        self.doc = doc;
        self
    }
    const fn extends(mut self, base: &'static Shape) -> Shape {
        self.base = Some(base);
        self
    }

    /// Every field: the base's (each replaced by an own field of the same key), then the own
    /// fields the base has not. (One level: a base extends no other shape.)
    pub fn fields(&self) -> impl Iterator<Item = &'static Field> + '_ {
        let own = self.own;
        let base: &'static [Field] = self.base.map_or(&[], |b| b.own);
        base.iter()
            .map(move |f| own.iter().find(|o| o.key == f.key).unwrap_or(f))
            .chain(
                own.iter()
                    .filter(move |o| !base.iter().any(|f| f.key == o.key)),
            )
    }

    /// The fields the decoders read, in the order of the schema (and of the tape).
    pub fn read(&self) -> impl Iterator<Item = &'static Field> + '_ {
        self.fields().filter(|f| f.node.is_read())
    }

    /// The key read at position `index` (the fast paths of `js/read.js` rely on the order).
    pub fn key(&self, index: usize) -> Option<&'static str> {
        self.read().nth(index).map(|f| f.key)
    }
}

use Node::{Ignored as I, Leaf as L};

const fn obj(shape: &'static Shape) -> Node {
    Node::Object(shape)
}
const fn kept(shape: &'static Shape) -> Node {
    Node::Kept(shape)
}

const TEXT: &str = "string | null";
const FLAG: &str = "WireFlag";
const ACTION: &str = "PendingAction | null";
const REVISION_TS: &str = "$ | null";

// ---- REST and WebSocket shapes (SPEC §1, docs/server-api.md) --------------------------------

pub const REVISION: Shape = Shape::new(
    "REVISION",
    &[
        req("epoch", L, "string"),
        req("sequence", L, "number | bigint"),
    ],
)
.ts(Ts::Wire("Revision"))
.doc(
    "`pending_action_revision`: the epoch is a decimal string of any length; the sequence a Number\n\
     up to 2^53 − 1 or a BigInt up to 2^64 − 1 (a larger Number may be rounded and is refused).\n\
     Returned revisions carry a Number up to 2^53 − 1 and a BigInt beyond.",
);

/// A message's `metadata` (one node, shared by [`MESSAGE`] and [`MESSAGE_EVENT`]).
pub const MESSAGE_METADATA: Shape = Shape::new(
    "MESSAGE_METADATA",
    &[
        opt("status", L, TEXT),
        opt("pending_id", L, TEXT),
        opt("question_id", I, TEXT),
        opt("question_index", I, "number | null"),
        opt("question_total", L, "number | null"),
        opt("request_id", L, TEXT),
        opt("agent_disconnected", L, FLAG),
    ],
);

pub const MESSAGE: Shape = Shape::new(
    "MESSAGE",
    &[
        opt("id", L, "string"),
        opt("message_id", L, "string"),
        opt("type", L, "string"),
        opt("turn_id", L, TEXT),
        opt("created_at", L, TEXT),
        opt("updated_at", L, TEXT),
        opt("metadata", obj(&MESSAGE_METADATA), "$ | null"),
        // A message event reads these two (in this order, after `metadata`).
        opt("session_id", I, "string"),
        opt("task_id", I, TEXT),
        opt("author_type", I, "string"),
    ],
)
.ts(Ts::Wire("WireMessage"))
.doc("A message as the backend sends it. `id` (REST) or `message_id` (WebSocket).");

/// A turn's `metadata` (one node, shared by [`TURN`] and [`TURN_EVENT`]).
pub const TURN_METADATA: Shape = Shape::new(
    "TURN_METADATA",
    &[
        opt("lifecycle_only", L, FLAG),
        opt("prompt_dispatch_pending", L, FLAG),
        opt("prompt_dispatch_attempted", L, FLAG),
    ],
);

pub const TURN: Shape = Shape::new(
    "TURN",
    &[
        req("id", L, "string"),
        opt("started_at", L, TEXT),
        opt("created_at", L, TEXT),
        opt("updated_at", L, TEXT),
        opt("completed_at", L, TEXT).doc("Absent or `null`: the turn is open."),
        opt("metadata", obj(&TURN_METADATA), "$ | null"),
        // A turn event reads these two (in this order, after `metadata`).
        opt("session_id", I, "string"),
        opt("task_id", I, "string"),
    ],
)
.ts(Ts::Wire("WireTurn"))
.doc("A turn as the backend sends it (snake_case). Unknown fields are ignored.");

pub const SESSION: Shape = Shape::new(
    "SESSION",
    &[
        req("id", L, "string"),
        opt("task_id", L, TEXT),
        opt("state", L, "SessionState | null"),
        opt("started_at", I, TEXT),
        opt("is_primary", L, FLAG),
        opt("pending_action", L, ACTION)
            .doc("Omitted: unknown (keep what you have); `null`: clean."),
        opt("pending_action_revision", obj(&REVISION), REVISION_TS),
        opt("updated_at", L, TEXT),
        opt("completed_at", I, TEXT),
    ],
)
.ts(Ts::Wire("WireSession"))
.doc("A session as listed by `GET /tasks/:id/task-sessions`.");

pub const SUMMARY: Shape = Shape::new(
    "SUMMARY",
    &[
        opt("revision", L, "number | null"),
        opt("updated_at", I, "string"),
        opt("pending_action", L, ACTION).doc("Omitted when none."),
    ],
)
.ts(Ts::Wire("WireStatusSummary"))
.doc("A task status summary. Other fields are preserved untouched by every function.");

pub const TASK: Shape = Shape::new(
    "TASK",
    &[
        opt("id", L, TEXT),
        opt("status_summary", obj(&SUMMARY), "$ | null"),
        opt("status_summary_invalidated", L, FLAG),
        opt("task_pending_action", L, ACTION),
        opt("primary_session_pending_action", L, ACTION),
    ],
)
.ts(Ts::Wire("WireTask"))
.doc("A task as the REST snapshot sends it.");

pub const SCOPE: Shape = Shape::new(
    "SCOPE",
    &[
        opt("currentTurnId", L, TEXT),
        opt("pendingAction", L, ACTION),
    ],
)
.ts(Ts::Wire("DiscoveryScope"))
.doc(
    "What the caller knows when it asks for the pending clarification (SPEC §3).\n\
     `currentTurnId`: a turn id, `null` (no current turn) or absent (unknown).\n\
     `pendingAction`: the session's projection, `null` (clean) or absent (unknown).\n\
     Passing `{}` disables discovery (authority unknown); passing nothing is the legacy scan.",
);

pub const PROJECTION: Shape = Shape::new(
    "PROJECTION",
    &[
        opt("pending_action", L, ACTION),
        opt("pending_action_revision", obj(&REVISION), REVISION_TS),
    ],
)
.ts(Ts::Wire("PendingProjection"))
.doc("A pending projection; an absent key means unknown/omitted, `pending_action: null` is clean.");

pub const MESSAGE_EVENT: Shape = Shape::new(
    "MESSAGE_EVENT",
    &[
        req("session_id", L, "string"),
        opt("task_id", L, TEXT),
        opt("pending_action", L, ACTION)
            .doc("Omitted: the backend could not project (keep what you have); `null`: clean."),
        opt("pending_action_revision", obj(&REVISION), REVISION_TS),
    ],
)
.extends(&MESSAGE)
.ts(Ts::Store("WireMessageEvent"))
.doc("A WebSocket `session.message.*` payload: message fields plus the session's projection.");

pub const TURN_EVENT: Shape = Shape::new(
    "TURN_EVENT",
    &[req("session_id", L, "string"), opt("task_id", L, "string")],
)
.extends(&TURN)
.ts(Ts::Store("WireTurnEvent"))
.doc("A turn started/completed payload: the turn with its `session_id`.");

pub const SESSION_EVENT: Shape = Shape::new(
    "SESSION_EVENT",
    &[
        opt("id", L, "string"),
        opt("session_id", L, "string"),
        opt("task_id", L, TEXT),
        opt("state", L, "SessionState | null"),
        opt("is_primary", L, FLAG),
        opt("updated_at", L, TEXT)
            .doc("The session's clock: orders its `state` against what the store holds (SPEC §5)."),
        opt("pending_action", L, ACTION),
        opt("pending_action_revision", obj(&REVISION), REVISION_TS),
    ],
)
.ts(Ts::Store("WireSessionEvent"))
.doc("A session event: the session (`id` or `session_id`) with its new `state` and projection.");

pub const SUMMARY_EVENT: Shape = Shape::new(
    "SUMMARY_EVENT",
    &[
        req("task_id", L, "string"),
        opt("workspace_id", I, "string"),
        req("status_summary", kept(&SUMMARY), "$ | null"),
    ],
)
.ts(Ts::Store("WireStatusSummaryEvent"))
.doc("A `task.status_summary.updated` payload: the task's new status summary.");

pub const HELLO: Shape = Shape::new(
    "HELLO",
    &[
        arg("epoch", L),
        arg("stream", L),
        arg("offset", L),
        arg("resumed", L),
    ],
)
.doc(
    "`server.hello`'s payload: what `__hello` reads (`stream` and `offset` it only validates:\n\
     `applyFrame` reports them).",
);

/// A `server.hello` frame as a trace records it (`applyFrame`'s argument; the other frames are
/// recorded as the apply call they are routed to). Not a tape's: `js/read.js` reads a frame's
/// `type`, `payload` and `offset` itself (`readFrame`).
pub const HELLO_FRAME: Shape = Shape::new("", &[arg("type", L), arg("payload", obj(&HELLO))]);

pub const TASK_DELETED: Shape =
    Shape::new("TASK_DELETED", &[arg("task_id", L)]).doc("`task.deleted`'s payload.");

pub const SESSION_DELETED: Shape =
    Shape::new("SESSION_DELETED", &[arg("session_id", L)]).doc("`session.deleted`'s payload.");

pub const TASK_INPUT: Shape = Shape::new(
    "TASK_INPUT",
    &[
        req("id", L, "string"),
        opt("status_summary", kept(&SUMMARY), "$ | null"),
        opt("status_summary_invalidated", L, FLAG),
        opt("task_pending_action", L, ACTION),
        opt("primary_session_pending_action", I, ACTION),
    ],
)
.ts(Ts::Store("WireTaskInput"))
.doc("A task from `task.updated` or a REST task list / boot snapshot.");

// ---- the arguments of the stateless functions and the store's calls --------------------------

pub const MESSAGES: Node = Node::Array(&Node::Object(&MESSAGE));
pub const TURNS: Node = Node::Array(&Node::Object(&TURN));
pub const SESSIONS: Node = Node::Array(&Node::Object(&SESSION));
pub const TASK_INPUTS: Node = Node::Array(&Node::Object(&TASK_INPUT));
pub const MESSAGE_EVENTS: Node = Node::Array(&Node::Object(&MESSAGE_EVENT));

pub const SESSION_INPUT: Shape = Shape::new(
    "SESSION_INPUT",
    &[
        arg("session", obj(&SESSION)),
        arg("turns", TURNS),
        arg("messages", MESSAGES),
    ],
);

pub const RESOLVE_INPUT: Shape = Shape::new(
    "RESOLVE_INPUT",
    &[
        arg("task", obj(&TASK)),
        arg("sessions", SESSIONS),
        arg("preferredSessionId", L),
    ],
);

pub const SELECTION_INPUT: Shape = Shape::new(
    "SELECTION_INPUT",
    &[
        arg("taskAtStart", obj(&TASK)),
        arg("taskNow", obj(&TASK)),
        arg("sessions", SESSIONS),
        arg("loadFailed", L),
        arg("aborted", L),
        arg("superseded", L),
        arg("activeTaskChanged", L),
        arg("preferredSessionId", L),
    ],
);

/// A fetched task whose status summary is kept (`mergeFetchedStatusSummary`'s `response`).
const FETCHED_TASK: Shape = Shape::new("", &[arg("status_summary", kept(&SUMMARY))]).extends(&TASK);

pub const FETCHED_INPUT: Shape = Shape::new(
    "FETCHED_INPUT",
    &[
        arg("held", kept(&SUMMARY)),
        arg("taskPresentAtFetchStart", L),
        arg("fetchStartRevision", L),
        arg("response", obj(&FETCHED_TASK)),
    ],
);

pub const SELECTION_OPTIONS: Shape =
    Shape::new("SELECTION_OPTIONS", &[arg("preferredSessionId", L)]);

pub const RECORDING_OPTIONS: Shape =
    Shape::new("RECORDING_OPTIONS", &[arg("maxBytes", L)]).doc("`startRecording`'s options.");

pub const SETTLE_OUTCOME: Shape = Shape::new(
    "SETTLE_OUTCOME",
    &[
        arg("aborted", L),
        arg("timedOut", L),
        arg("error", L),
        arg("sessions", SESSIONS),
    ],
);

// ---- the user's actions (src/wire/action.rs, SPEC §13) ------------------------------------------

const RESPOND_SESSION: Shape = Shape::new("", &[arg("pending_action_revision", obj(&REVISION))]);

const RESPOND_ERROR: Shape = Shape::new("", &[arg("code", L)]);

const RESPOND_BODY: Shape = Shape::new(
    "",
    &[
        arg("success", L),
        arg("claimed", L),
        arg("outcome", L),
        arg("error", obj(&RESPOND_ERROR)),
        arg("session", obj(&RESPOND_SESSION)),
    ],
);

pub const RESPOND_REPLY: Shape = Shape::new(
    "RESPOND_REPLY",
    &[
        arg("error", L),
        arg("status", L),
        arg("body", obj(&RESPOND_BODY)),
    ],
);

// ---- the needs-you inbox (src/wire/inbox.rs, SPEC §14) -----------------------------------------

pub const INBOX_ROW: Shape = Shape::new(
    "INBOX_ROW",
    &[
        req("pending_id", L, "string"),
        req("session_id", L, "string"),
        req("task_id", L, "string"),
        req("created_at", L, "string"),
        opt("session_state", I, "string"),
        opt("task_title", I, "string"),
        opt("context", I, "string"),
        opt("messages", I, "unknown[]"),
    ],
)
.ts(Ts::Store("WireInboxRow"))
.doc(
    "An inbox row (`GET /api/v1/clarification-inbox`): the store keeps its own frozen copy and\n\
     hands it back as `InboxRow.row`.",
);

pub const INBOX_PAGE: Shape = Shape::new(
    "INBOX_PAGE",
    &[
        req("bundles", Node::Array(&kept(&INBOX_ROW)), "WireInboxRow[]"),
        opt("count", L, "number"),
        opt("hidden_count", L, "number"),
        opt("next_snooze_expiry", L, TEXT),
        opt("next_cursor", L, TEXT),
        opt("stream", L, "string").doc("Where the page was read (with `offset`), as `GET /api/v1/tasks` gives it."),
        opt("offset", L, "number"),
    ],
)
.ts(Ts::Store("WireInboxPage"))
.doc("An inbox page: the reference server's, or the reference client's (without `stream` / `offset`).");

pub const INBOX_SEED: Shape = Shape::new(
    "INBOX_SEED",
    &[
        req("workspaceId", L, "string"),
        req("count", L, "number"),
        opt("hasMore", L, "boolean"),
        opt("nextSnoozeExpiry", L, TEXT),
    ],
)
.ts(Ts::Store("WireInboxSeed"))
.doc("The inbox's boot seed (`GET /api/v1/clarification-inbox/boot`).");

// ---- snapshots (src/wire/snapshot.rs, docs/snapshot-format.md) --------------------------------
// Rows are arrays of leaves; `answers` is not read back (the hydrated store answers from the
// state).

const IDS: Node = Node::Array(&L);
const ROWS: Node = Node::Array(&Node::Array(&L));

const SNAPSHOT_TASK: Shape = Shape::new(
    "",
    &[
        arg("id", L),
        arg("known", L),
        arg("summary", kept(&SUMMARY)),
        arg("legacy", L),
        arg("sessions", IDS),
    ],
);

const SNAPSHOT_SESSION: Shape = Shape::new(
    "",
    &[
        arg("id", L),
        arg("task", L),
        arg("listed", L),
        arg("state", L),
        arg("state_at", L),
        arg("primary", L),
        arg("primary_at", L),
        arg("action", L),
        arg("revision", obj(&REVISION)),
        arg("turns", ROWS),
        arg("early", ROWS),
        arg("messages", ROWS),
        arg("deleted", ROWS),
        arg("settled", ROWS),
        arg("paged", L),
    ],
);

const REMOVED: Shape = Shape::new(
    "",
    &[
        req("tasks", IDS, "string[]"),
        req("sessions", IDS, "string[]"),
    ],
);

/// `answers` of a snapshot (declared only: not read back).
const ANSWERS_TS: &str = "{
  tasks: Record<string, {
    taskPendingAction?: PendingAction | null;
    taskStatusSummary?: WireStatusSummary | null;
    pendingOwner?: string;
  }>;
  sessions: Record<string, {
    sessionPendingAction?: PendingAction | null;
    currentTurnId?: string | null;
    pendingClarification?: PendingClarification | null;
    hiddenMessageIds?: string[];
    hasPendingPermission?: boolean;
  }>;
}";

pub const SNAPSHOT: Shape = Shape::new(
    "SNAPSHOT",
    &[
        req("format", L, "\"task-projection/snapshot\""),
        req("version", L, "1"),
        req("epoch", L, TEXT).doc("The server epoch of the last `server.hello` (`null`: none)."),
        req("stream", L, TEXT)
            .doc("Where the state stands in the server's event stream (`null`: unknown)."),
        req("offset", L, "number | null"),
        req("tasks", Node::Array(&obj(&SNAPSHOT_TASK)), "unknown[]")
            .doc("The state itself: opaque, read back by `ProjectionStore.hydrate`."),
        req("sessions", Node::Array(&obj(&SNAPSHOT_SESSION)), "unknown[]"),
        req("removed", obj(&REMOVED), "$"),
        req("rejected", ROWS, "unknown[]"),
        req("answers", I, ANSWERS_TS).doc(
            "The store's answers when it was dehydrated, each key named after its query and absent while\n\
             that answer was unknown: `answers.sessions[id]?.[query]` is what `store[query](id)` answered\n\
             (`pendingOwner` without a preferred session). For a page that renders before the wasm is ready.",
        ),
    ],
)
.ts(Ts::Store("StoreSnapshot"))
.doc("A store's snapshot (`dehydrate()`; SPEC §12, docs/snapshot-format.md): plain JSON-safe data.");

pub const DEHYDRATE_OPTIONS: Shape = Shape::new(
    "DEHYDRATE_OPTIONS",
    &[arg("tasks", IDS), arg("sessions", IDS)],
);

pub const HYDRATE_OPTIONS: Shape = Shape::new("HYDRATE_OPTIONS", &[arg("restored", L)]);

pub const POSITION: Shape = Shape::new(
    "POSITION",
    &[req("stream", L, "string"), req("offset", L, "number")],
)
.ts(Ts::Store("StreamPosition"))
.doc("A place in the server's event stream.");

/// A schema `js/read.js` exports.
#[derive(Clone, Copy, Debug)]
pub struct Schema {
    pub name: &'static str,
    pub node: Node,
}

const fn named(shape: &'static Shape) -> Schema {
    Schema {
        name: shape.name,
        node: Node::Object(shape),
    }
}

const fn list(name: &'static str, node: Node) -> Schema {
    Schema { name, node }
}

/// Every schema, in the order `js/read.js` defines them (a shape an earlier one refers to
/// is written before it).
pub const SCHEMAS: &[Schema] = &[
    named(&REVISION),
    named(&MESSAGE),
    named(&TURN),
    named(&SESSION),
    named(&SUMMARY),
    named(&TASK),
    named(&SCOPE),
    named(&PROJECTION),
    named(&MESSAGE_EVENT),
    named(&TURN_EVENT),
    named(&SESSION_EVENT),
    named(&SUMMARY_EVENT),
    named(&HELLO),
    named(&TASK_DELETED),
    named(&SESSION_DELETED),
    named(&TASK_INPUT),
    list("MESSAGES", MESSAGES),
    list("TURNS", TURNS),
    list("SESSIONS", SESSIONS),
    list("TASK_INPUTS", TASK_INPUTS),
    list("MESSAGE_EVENTS", MESSAGE_EVENTS),
    named(&SESSION_INPUT),
    named(&RESOLVE_INPUT),
    named(&SELECTION_INPUT),
    named(&FETCHED_INPUT),
    named(&SELECTION_OPTIONS),
    named(&RECORDING_OPTIONS),
    named(&SETTLE_OUTCOME),
    named(&RESPOND_REPLY),
    named(&SNAPSHOT),
    named(&DEHYDRATE_OPTIONS),
    named(&HYDRATE_OPTIONS),
    named(&POSITION),
    named(&INBOX_ROW),
    named(&INBOX_PAGE),
    named(&INBOX_SEED),
];

/// The shapes `js/read.js` writes onto the tape by generated code (the large inputs: message,
/// turn and session lists, every message event) instead of its walk by the schema: the same reads
/// in the same order and the same tape, with named property reads. Their fields are leaves or
/// objects of leaves.
pub const WRITTEN_OUT: &[&Shape] = &[&TURN, &SESSION, &MESSAGE, &MESSAGE_EVENT];

/// The shapes `js/read.js` copies by generated code (store.js's fast path reads every message
/// event and page row into a plain copy).
pub const COPIED: &[&Shape] = &[&MESSAGE, &MESSAGE_EVENT];

/// The shapes declared in TypeScript, in the order of their declarations.
pub const DECLARED: &[&Shape] = &[
    &REVISION,
    &TURN,
    &MESSAGE,
    &SESSION,
    &SUMMARY,
    &TASK,
    &SCOPE,
    &PROJECTION,
    &MESSAGE_EVENT,
    &TURN_EVENT,
    &SESSION_EVENT,
    &SUMMARY_EVENT,
    &TASK_INPUT,
    &SNAPSHOT,
    &POSITION,
    &INBOX_ROW,
    &INBOX_PAGE,
    &INBOX_SEED,
];

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(shape: &Shape) -> Vec<&'static str> {
        shape.read().map(|f| f.key).collect()
    }

    #[test]
    fn an_extending_shape_reads_its_base_keys_first_then_its_own() {
        assert_eq!(
            keys(&MESSAGE_EVENT),
            [
                "id",
                "message_id",
                "type",
                "turn_id",
                "created_at",
                "updated_at",
                "metadata",
                "session_id",
                "task_id",
                "pending_action",
                "pending_action_revision"
            ]
        );
        assert_eq!(
            keys(&FETCHED_TASK),
            [
                "id",
                "status_summary",
                "status_summary_invalidated",
                "task_pending_action",
                "primary_session_pending_action"
            ]
        );
        assert!(matches!(
            FETCHED_TASK.read().nth(1).map(|f| f.node),
            Some(Node::Kept(_))
        ));
    }

    #[test]
    fn schema_names_are_distinct_and_declared_shapes_have_types() {
        let mut names: Vec<_> = SCHEMAS.iter().map(|s| s.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n);
        for shape in DECLARED {
            assert_ne!(shape.ts, Ts::None, "{}", shape.name);
            for field in shape.fields() {
                assert!(!field.ts.is_empty(), "{}.{}", shape.name, field.key);
            }
        }
    }
}
