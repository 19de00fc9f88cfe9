-- The events just read (temp table reconcile_read), one row per event id: a copy of an id
-- already stored only adds to its copies (the first record read stays).
INSERT INTO reconcile.topic_events AS t
    (event_id, order_id, event_type, occurred_at, day, currency, total_cents, kafka_partition,
     kafka_offset, copies)
SELECT DISTINCT ON (event_id) event_id, order_id, event_type, occurred_at,
    (occurred_at AT TIME ZONE 'UTC')::date, currency, total_cents, kafka_partition, kafka_offset,
    count(*) OVER (PARTITION BY event_id)
FROM reconcile_read
ORDER BY event_id, kafka_partition, kafka_offset
ON CONFLICT (event_id) DO UPDATE SET copies = t.copies + EXCLUDED.copies
