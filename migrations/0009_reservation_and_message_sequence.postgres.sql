-- task-projection server schema, version 9 on PostgreSQL: two statements fewer to run.
--
-- The revision reservation of migration 3 as an SQL function instead of PL/pgSQL (the same two
-- steps, a third of the cost): a VOLATILE function takes a fresh snapshot for each of its
-- statements, so the epoch is still read after the shared advisory lock is granted (see
-- src/server/revision.rs for why that orders every pair of reservations).
CREATE OR REPLACE FUNCTION reserve_projection_revision()
RETURNS TABLE (epoch TEXT, sequence BIGINT, server TEXT, server_now TEXT)
LANGUAGE sql VOLATILE AS $$
    SELECT pg_advisory_xact_lock_shared(7305611505);
    SELECT e.value, nextval('projection_sequence'),
           (SELECT s.value FROM meta s WHERE s.key = 'projection_epoch_server'),
           extract(epoch FROM pg_postmaster_start_time())::text
    FROM meta e
    WHERE e.key = 'projection_epoch';
$$;

-- Message insertion order from a sequence, taken by the insert itself (it was a row of
-- `counters`, upserted in a statement of its own before every insert). It continues past every
-- value the counter handed out.
CREATE SEQUENCE message_seq AS BIGINT MINVALUE 1;
SELECT setval('message_seq', GREATEST(
    1, (SELECT MAX(value) + 1 FROM counters WHERE name = 'message_seq')), false);
