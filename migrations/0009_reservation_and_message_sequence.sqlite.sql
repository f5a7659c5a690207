-- task-projection server schema, version 9 on SQLite: nothing changes (PostgreSQL's reservation
-- becomes an SQL function and its message order a sequence,
-- 0009_reservation_and_message_sequence.postgres.sql; SQLite's counter is one short write).
SELECT 1;
