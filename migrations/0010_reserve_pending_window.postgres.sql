-- task-projection server schema, version 10 on PostgreSQL: a projection's reservation and its
-- read in one call (src/server/projection.rs, `Projector::project_sessions`), one round trip
-- instead of two.
--
-- SPEC §5 wants the revision reserved *before* the authoritative read. One statement reads from
-- the snapshot taken when it starts, so a reservation inside the read statement would come after
-- the snapshot (a newer write could commit in between, be missed by this read and still be
-- labelled older). Here the reservation is statements of their own (those of
-- reserve_projection_revision(), migration 3) and the read a later statement of the function,
-- which under READ COMMITTED takes a new snapshot when it starts: it sees every write committed
-- before the reservation. Under REPEATABLE READ or SERIALIZABLE the whole call would read the
-- first statement's snapshot, so the function refuses to run there.
--
-- The read is the window statement of `storage::pending_window` (storage.rs `window_sql`, session
-- $1, at most $2 completed turns, request types $3 and $4; a unit test checks that this text is
-- it). Every row carries the reservation; a session that does not exist is one row of NULLs after
-- it. The result's column names are unique (the parts' own names repeat); the caller names them
-- back (storage.rs `RESERVED_WINDOW_SQL`).
CREATE FUNCTION reserve_pending_window(TEXT, BIGINT, TEXT, TEXT)
RETURNS TABLE (
    epoch TEXT,
    sequence BIGINT,
    server TEXT,
    server_now TEXT,
    session_part INTEGER,
    s_id TEXT,
    s_task_id TEXT,
    s_state TEXT,
    s_agent_profile_id TEXT,
    s_is_primary BIGINT,
    s_started_at TEXT,
    s_updated_at TEXT,
    s_completed_at TEXT,
    s_state_reason TEXT,
    s_version BIGINT,
    unkeyed BIGINT,
    turn_part INTEGER,
    t_id TEXT,
    t_session_id TEXT,
    t_task_id TEXT,
    t_started_at TEXT,
    t_completed_at TEXT,
    t_created_at TEXT,
    t_updated_at TEXT,
    t_metadata TEXT,
    referenced BIGINT,
    message_part INTEGER,
    m_id TEXT,
    m_seq BIGINT,
    m_session_id TEXT,
    m_task_id TEXT,
    m_turn_id TEXT,
    m_author_type TEXT,
    m_message_type TEXT,
    m_content TEXT,
    m_metadata TEXT,
    m_created_at TEXT,
    m_updated_at TEXT,
    m_version BIGINT
)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    reserved RECORD;
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'reserve_pending_window() needs READ COMMITTED, not %',
            current_setting('transaction_isolation');
    END IF;
    -- The reservation, as reserve_projection_revision() makes it (migration 3; inlined: a
    -- nested set-returning call costs more than the statements): the shared advisory lock an
    -- epoch change takes exclusively, then, in a new statement, the epoch and the next value.
    PERFORM pg_advisory_xact_lock_shared(7305611505);
    SELECT e.value AS epoch, nextval('projection_sequence') AS sequence,
           (SELECT s.value FROM meta s WHERE s.key = 'projection_epoch_server') AS server,
           extract(epoch FROM pg_postmaster_start_time())::text AS server_now
        INTO reserved
        FROM meta e
        WHERE e.key = 'projection_epoch';
    RETURN QUERY
    SELECT reserved.epoch, reserved.sequence, reserved.server, reserved.server_now, pending.*
    FROM (SELECT 1) AS one
    LEFT JOIN LATERAL (
           SELECT 1 AS session_part, s.id, s.task_id, s.state, s.agent_profile_id, s.is_primary, s.started_at, s.updated_at, s.completed_at, s.state_reason, s.version,
           CAST(CASE WHEN EXISTS (SELECT 1 FROM turns u WHERE u.session_id = s.id AND u.started_key IS NULL) THEN 1 ELSE 0 END AS BIGINT) AS unkeyed,
           1 AS turn_part, w.*, CAST(CASE WHEN r.hit IS NULL THEN 0 ELSE 1 END AS BIGINT) AS referenced,
           1 AS message_part, m.*
           FROM sessions s
           LEFT JOIN LATERAL (SELECT * FROM (SELECT id, session_id, task_id, started_at, completed_at, created_at, updated_at, metadata FROM turns WHERE session_id = s.id AND completed_at IS NULL OFFSET 0) AS open_turns
           UNION ALL SELECT * FROM (SELECT id, session_id, task_id, started_at, completed_at, created_at, updated_at, metadata FROM turns WHERE session_id = s.id AND completed_at IS NOT NULL ORDER BY started_key DESC, created_key DESC LIMIT $2) AS recent_turns) AS w ON TRUE
           LEFT JOIN LATERAL (SELECT 1 AS hit FROM messages WHERE session_id = s.id AND turn_id = w.id LIMIT 1) AS r ON TRUE
           LEFT JOIN LATERAL (SELECT id, seq, session_id, task_id, turn_id, author_type, message_type, content, metadata, created_at, updated_at, version FROM messages WHERE session_id = s.id AND turn_id = w.id AND message_type IN ($3, $4) OFFSET 0) AS m ON TRUE
           WHERE s.id = $1
    ) AS pending ON TRUE;
END
$$;
