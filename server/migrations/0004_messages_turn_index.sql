-- task-projection server schema, version 4: the projection reads a session's messages by turn
-- (which of its turns messages reference, then the current turn's request rows by type) instead
-- of its whole transcript. Portable: the same text runs on SQLite and PostgreSQL.
CREATE INDEX messages_session_turn ON messages (session_id, turn_id, message_type);
