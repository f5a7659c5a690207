-- task-projection server schema, version 10 on SQLite: nothing changes (a reservation there is one
-- write of meta, ordered with every other write; PostgreSQL reserves and reads in one call,
-- 0010_reserve_pending_window.postgres.sql).
SELECT 1;
