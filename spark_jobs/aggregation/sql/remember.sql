-- Remember the new events' ids, each with its journey (where it came from, which batch counted
-- it; migration 0009) and its content fingerprint (migration 0012). Writers are serialised by
-- aggregation.lock_writers(): a conflict would be a bug, so there is no ON CONFLICT clause; it
-- would abort and retry the batch.
INSERT INTO aggregation.applied_events (event_id, occurred_at, order_id, event_type,
    kafka_partition, kafka_offset, kafka_timestamp, query_id, batch_id, fingerprint)
SELECT event_id, occurred_at, order_id, event_type,
    kafka_partition, kafka_offset, kafka_timestamp, %(query_id)s, %(batch_id)s, fingerprint
FROM t_new
WHERE occurred_at >= (SELECT forgotten_before FROM aggregation.dedup_state)
