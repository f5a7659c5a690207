-- task-projection server schema, version 5 on SQLite: nothing changes. One instance publishes
-- straight to its WebSocket hub; PostgreSQL gets the event outbox (0005_event_outbox.postgres.sql).
SELECT 1;
