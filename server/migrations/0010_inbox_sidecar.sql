-- task-projection server schema, version 10: the needs-you inbox's dismiss / snooze sidecar
-- (docs/server-api.md, "Needs-you inbox"), one row per requester and clarification bundle.
-- `requester` is the id of the `tp_requester` cookie the server issued; `state` is `dismissed`
-- or `snoozed` (then `snooze_until` is the server time the snooze ends). Rows of a bundle that is
-- gone are harmless: the inbox reads only the rows of live bundles. Portable: the same text runs
-- on SQLite and PostgreSQL.
CREATE TABLE inbox_sidecar (
    requester TEXT NOT NULL,
    pending_id TEXT NOT NULL,
    state TEXT NOT NULL,
    snooze_until TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (requester, pending_id)
);
