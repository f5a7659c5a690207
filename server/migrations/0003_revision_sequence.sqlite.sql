-- task-projection server schema, version 3 on SQLite: nothing changes. A SQLite database has one
-- writer, so the revision sequence stays `meta.projection_epoch.counter` (src/server/revision.rs);
-- PostgreSQL gets a SEQUENCE and a reservation function (0003_revision_sequence.postgres.sql).
SELECT 1;
