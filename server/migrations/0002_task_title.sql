-- task-projection server schema, version 2: a display title per task (the reference server's
-- task list and simulator). Portable: the same text runs on SQLite and PostgreSQL.
ALTER TABLE tasks ADD COLUMN title TEXT NOT NULL DEFAULT '';
