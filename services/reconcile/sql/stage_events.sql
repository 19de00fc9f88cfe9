CREATE TEMP TABLE reconcile_read (
    event_id uuid, order_id text, event_type text, occurred_at timestamptz, currency text,
    total_cents bigint, kafka_partition integer, kafka_offset bigint
) ON COMMIT DROP
