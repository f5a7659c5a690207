-- task-projection server schema, version 5 on PostgreSQL: the event outbox that fans events out
-- to every instance (src/server/outbox.rs).
--
-- One row per published event. `offset_id` is the stream offset (one order for all instances),
-- `payload` the event's JSON text. Rows older than the retention are deleted by the instances.
CREATE TABLE event_outbox (
    offset_id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX event_outbox_created_at ON event_outbox (created_at);

-- Every insert statement wakes every instance's follower (delivered at commit; the followers
-- read the rows themselves, so the payload stays empty).
CREATE FUNCTION notify_event_outbox() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('task_projection_events', '');
    RETURN NULL;
END
$$;
CREATE TRIGGER event_outbox_notify AFTER INSERT ON event_outbox
    FOR EACH STATEMENT EXECUTE FUNCTION notify_event_outbox();

-- The stream's name: offsets are meaningful only within one database.
INSERT INTO meta (key, value, counter) VALUES ('event_stream', gen_random_uuid()::text, 0);
