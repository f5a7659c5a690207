-- The turn reads of the current-turn window (src/server/storage.rs) as index probes whatever the
-- planner's statistics: the session's open turns and whether it has a turn without order keys
-- are partial indexes, so neither scans the session's turns (PostgreSQL chose the plain
-- `session_id` index and filtered every turn of the session while a table had no statistics).
DROP INDEX turns_session_open;
CREATE INDEX turns_session_open ON turns (session_id) WHERE completed_at IS NULL;
CREATE INDEX turns_session_unkeyed ON turns (session_id) WHERE started_key IS NULL;
