-- Events that occurred before the horizon: their ids may already be forgotten, so they cannot
-- be checked. They are counted, and each is recorded here (docs/analytics.md).
INSERT INTO aggregation.late_events (topic, kafka_partition, kafka_offset, event_id, occurred_at)
SELECT %(topic)s, kafka_partition, kafka_offset, event_id, occurred_at FROM t_new
WHERE occurred_at < (SELECT forgotten_before FROM aggregation.dedup_state)
ON CONFLICT DO NOTHING
