-- task-projection server schema, version 8 on SQLite: nothing changes (no outbox: one instance;
-- PostgreSQL's notifications carry their rows, 0008_outbox_notify_rows.postgres.sql).
SELECT 1;
