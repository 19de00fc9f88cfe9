-- Mark an aggregation dead letter replayed (migration 0011): the first replay's time stays.
UPDATE analytics.dead_letters
   SET replayed_at       = coalesce(replayed_at, clock_timestamp()),
       replayed_event_id = coalesce(replayed_event_id, %(event_id)s::uuid),
       replay_batch_id   = coalesce(replay_batch_id, %(batch_id)s)
 WHERE topic = %(topic)s AND kafka_partition = %(partition)s AND kafka_offset = %(offset)s
