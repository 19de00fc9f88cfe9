INSERT INTO aggregation.applied_batches (query_id, batch_id, topic, offsets, records, events_new,
    duplicates, dead_letters, late_events, committed_at)
VALUES (%(query_id)s, %(batch_id)s, %(topic)s, %(offsets)s, %(records)s, %(events_new)s,
    %(duplicates)s, %(dead_letters)s, %(late_events)s, clock_timestamp())
