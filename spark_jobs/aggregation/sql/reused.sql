-- Conflicting duplicates: records whose event id was counted (by an earlier batch, else by its
-- first record in this batch) with other content. An unknown fingerprint claims no conflict.
INSERT INTO t_reused
SELECT e.kafka_partition, e.kafka_offset, convert_to(e.order_id::text, 'UTF8')
FROM t_events e JOIN t_new n USING (event_id) LEFT JOIN t_counted c USING (event_id)
WHERE CASE WHEN c.event_id IS NULL THEN e.fingerprint <> n.fingerprint
           ELSE NOT c.unknown AND e.fingerprint <> ALL (c.fingerprints) END
