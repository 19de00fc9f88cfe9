SELECT kafka_partition, next_offset, complete_from FROM reconcile.topic_positions WHERE topic = %s
