-- task-projection server schema, version 9 on SQLite: nothing changes (PostgreSQL's message order
-- becomes a sequence, 0009_message_sequence.postgres.sql; SQLite's counter is one short write,
-- and SQLite has one writer anyway).
SELECT 1;
