-- task-projection server schema, version 8 on PostgreSQL: an insert's notification carries its
-- rows, so the instances' followers deliver them without reading them back
-- (src/server/outbox.rs). The payload is a JSON array of [offset, name, payload text] in offset
-- order; a statement whose rows do not fit in a notification (PostgreSQL's limit is 8000 bytes)
-- notifies an empty payload, and the followers read the rows, as before.
CREATE OR REPLACE FUNCTION notify_event_outbox() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    body TEXT;
BEGIN
    SELECT json_agg(json_build_array(offset_id, name, payload) ORDER BY offset_id)::text
        INTO body FROM inserted;
    IF body IS NULL OR octet_length(body) > 7900 THEN
        body := '';
    END IF;
    PERFORM pg_notify('task_projection_events', body);
    RETURN NULL;
END
$$;
DROP TRIGGER event_outbox_notify ON event_outbox;
CREATE TRIGGER event_outbox_notify AFTER INSERT ON event_outbox
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION notify_event_outbox();
