-- task-projection server schema, version 1. Portable SQL: the same text runs on SQLite and
-- PostgreSQL (TEXT, BIGINT, no serial columns, no JSON operators; JSON is stored as text and read
-- by the rule code). Timestamps are the wire text (RFC 3339, `Z`, nanoseconds): the rules order
-- them, SQL never does.

-- Key/value metadata. `projection_epoch` holds the revision epoch (decimal text) in `value` and
-- the revision sequence within that epoch in `counter` (see src/server/revision.rs).
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    counter BIGINT NOT NULL DEFAULT 0
);

-- Named monotonic counters (message insertion order).
CREATE TABLE counters (
    name TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);

CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    archived BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks (id),
    state TEXT NOT NULL,
    agent_profile_id TEXT NOT NULL DEFAULT '',
    is_primary BIGINT NOT NULL DEFAULT 0,
    started_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    completed_at TEXT,
    state_reason TEXT,
    -- Bumped by every write: the compare-and-set token for state changes.
    version BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX sessions_task_id ON sessions (task_id);

CREATE TABLE turns (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    task_id TEXT NOT NULL,
    started_at TEXT NOT NULL,
    completed_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- JSON object: lifecycle_only, prompt_dispatch_pending, prompt_dispatch_attempted, ...
    metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX turns_session_id ON turns (session_id);

CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    -- Insertion order (allocated from counters), the tie-break after created_at.
    seq BIGINT NOT NULL,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    task_id TEXT NOT NULL,
    turn_id TEXT,
    author_type TEXT NOT NULL,
    message_type TEXT NOT NULL,
    content TEXT NOT NULL DEFAULT '',
    -- JSON object: pending_id, question_id, question_index, question_total, status, ...
    metadata TEXT NOT NULL DEFAULT '{}',
    -- metadata.pending_id as the wire decoder reads it (NULL when none): a lookup index only.
    pending_id TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    version BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX messages_session_id ON messages (session_id, seq);
CREATE INDEX messages_pending_id ON messages (pending_id);

-- The persisted task status summary: the whole wire object as JSON text; `revision` mirrors the
-- object's revision and is the compare-and-set token.
CREATE TABLE task_status_summaries (
    task_id TEXT PRIMARY KEY REFERENCES tasks (id),
    revision BIGINT NOT NULL,
    summary TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

-- Durable clarification response-delivery intents (SPEC §8): one per claimed bundle.
CREATE TABLE delivery_intents (
    pending_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    turn_id TEXT NOT NULL,
    -- JSON array of the claimed message ids.
    message_ids TEXT NOT NULL,
    -- active_live | active_detached: the state a recovery restores.
    prior_state TEXT NOT NULL,
    -- answer | reject
    response_kind TEXT NOT NULL,
    -- JSON: the response payload.
    response TEXT NOT NULL,
    -- The handoff reached: none | acknowledged | reserved (see rules::respond::Handoff).
    handoff TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

-- Workflow-switch stop intents (SPEC §10): the latest park of a session. A consumed intent stays
-- as a tombstone (consumed = 1).
CREATE TABLE stop_intents (
    session_id TEXT PRIMARY KEY REFERENCES sessions (id),
    execution_id TEXT NOT NULL,
    stamp TEXT NOT NULL,
    consumed BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    consumed_at TEXT
);
