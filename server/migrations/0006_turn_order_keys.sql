-- The turn rule's order as numbers, so the current turn is found without reading every turn of a
-- session (src/server/storage.rs, turns_window_on): started_key / created_key are
-- `Timestamp::packed()` of started_at / created_at (an integer in the rules' timestamp order),
-- both NULL when either timestamp has no packed form (such a session is read whole). Rows written
-- before this migration are filled in at startup (storage::fill_turn_keys).
ALTER TABLE turns ADD COLUMN started_key BIGINT;
ALTER TABLE turns ADD COLUMN created_key BIGINT;
CREATE INDEX turns_session_order ON turns (session_id, started_key, created_key);
CREATE INDEX turns_session_open ON turns (session_id, completed_at);
