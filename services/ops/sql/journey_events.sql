-- Every event of one order the aggregation job applied, oldest first, with the batch that
-- applied it (migration 0009; aggregation.applied_events_by_order). The ledger row may be pruned
-- before the event's id is forgotten: committed_at is then null.
SELECT e.event_id, e.event_type, e.occurred_at, e.kafka_partition, e.kafka_offset,
       e.kafka_timestamp, e.query_id, e.batch_id, b.committed_at
FROM aggregation.applied_events e
LEFT JOIN aggregation.applied_batches b ON b.query_id = e.query_id AND b.batch_id = e.batch_id
WHERE e.order_id = %s
ORDER BY e.occurred_at, e.kafka_partition, e.kafka_offset
