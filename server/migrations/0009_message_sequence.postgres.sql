-- task-projection server schema, version 9 on PostgreSQL: message insertion order from a
-- sequence, taken by the insert itself (it was a row of `counters`, upserted in a statement of its
-- own before every insert). It continues past every value the counter handed out.
CREATE SEQUENCE message_seq AS BIGINT MINVALUE 1;
SELECT setval('message_seq', GREATEST(
    1, (SELECT MAX(value) + 1 FROM counters WHERE name = 'message_seq')), false);
