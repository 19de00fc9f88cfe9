-- Conflicting duplicates are dead letters, not events: out of the batch's events.
WITH reused AS (
    DELETE FROM t_events e USING t_reused r
    WHERE (e.kafka_partition, e.kafka_offset) = (r.kafka_partition, r.kafka_offset)
    RETURNING e.kafka_partition, e.kafka_offset
)
DELETE FROM t_new n USING reused r
WHERE (n.kafka_partition, n.kafka_offset) = (r.kafka_partition, r.kafka_offset)
