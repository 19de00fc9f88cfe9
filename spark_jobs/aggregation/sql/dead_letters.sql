-- Each bad record once, whatever replays happen.
INSERT INTO analytics.dead_letters (topic, kafka_partition, kafka_offset, key, value, error)
SELECT topic, kafka_partition, kafka_offset, key, value, error FROM t_dead
ON CONFLICT DO NOTHING
