-- task-projection server schema, version 3 on PostgreSQL: revisions without a hot row (see the
-- module docs of src/server/revision.rs for why the pairs stay totally ordered).
--
-- The sequence of every revision, shared by all instances and never reset. It starts past any
-- counter the old design handed out, so revisions of the current epoch keep increasing.
CREATE SEQUENCE projection_sequence AS BIGINT MINVALUE 1;
SELECT setval('projection_sequence', GREATEST(
    1, (SELECT MAX(counter) + 1 FROM meta WHERE key = 'projection_epoch')), false);

-- One reservation: under the shared advisory lock an epoch change takes exclusively, read the
-- epoch in a new statement (a fresh snapshot: every epoch committed before the lock was granted
-- is seen) and take the next sequence value. `server` is the PostgreSQL start time the epoch was
-- allocated under and `server_now` the current one (seconds since 1970, whatever the time zone): the caller advances the epoch when they
-- differ (a restarted database may hand out a sequence value again).
CREATE FUNCTION reserve_projection_revision()
RETURNS TABLE (epoch TEXT, sequence BIGINT, server TEXT, server_now TEXT)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(7305611505);
    RETURN QUERY
        SELECT e.value, nextval('projection_sequence'),
               (SELECT s.value FROM meta s WHERE s.key = 'projection_epoch_server'),
               extract(epoch FROM pg_postmaster_start_time())::text
        FROM meta e
        WHERE e.key = 'projection_epoch';
END
$$;
