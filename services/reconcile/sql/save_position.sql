-- Where a partition's reading stopped, written in the transaction that stores its events.
INSERT INTO reconcile.topic_positions AS p
    (topic, kafka_partition, next_offset, last_record_offset, complete_from, read_at)
VALUES (%(topic)s, %(partition)s, %(next_offset)s, %(last_record)s, %(complete_from)s, now())
ON CONFLICT (topic, kafka_partition) DO UPDATE
SET next_offset = EXCLUDED.next_offset,
    last_record_offset = coalesce(EXCLUDED.last_record_offset, p.last_record_offset),
    complete_from = greatest(p.complete_from, EXCLUDED.complete_from),
    read_at = now()
