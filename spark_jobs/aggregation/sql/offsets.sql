SELECT kafka_partition, min(kafka_offset), max(kafka_offset), count(*)
FROM (SELECT kafka_partition, kafka_offset FROM t_events
      UNION ALL SELECT kafka_partition, kafka_offset FROM t_dead) r
GROUP BY kafka_partition ORDER BY kafka_partition
