-- The aggregation stage's dead letters that pass `list`'s filters, newest first (no raw bytes).
SELECT topic, kafka_partition, kafka_offset, error, received_at,
       replayed_at, replayed_event_id, replay_batch_id
  FROM analytics.dead_letters
 WHERE (%(since)s::timestamptz IS NULL OR received_at >= %(since)s::timestamptz)
   AND (%(reason)s::text IS NULL OR strpos(lower(error), lower(%(reason)s::text)) > 0)
 ORDER BY received_at DESC, kafka_partition DESC, kafka_offset DESC
 LIMIT %(limit)s
