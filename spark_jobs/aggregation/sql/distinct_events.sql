-- In-batch duplicates: keep the first record of each event id.
INSERT INTO t_new
SELECT DISTINCT ON (event_id) * FROM t_events ORDER BY event_id, kafka_partition, kafka_offset
