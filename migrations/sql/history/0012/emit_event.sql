CREATE FUNCTION orders.emit_event(
    p_event_id uuid, p_event_type text, p_order_id uuid, p_order jsonb, p_at timestamptz,
    p_traceparent text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO orders.outbox (id, aggregatetype, aggregateid, type, payload, traceparent)
    VALUES (p_event_id, 'order', p_order_id::text, p_event_type,
            jsonb_build_object('event_id', p_event_id, 'event_type', p_event_type,
                               'schema_version', 1, 'occurred_at', orders.iso_utc(p_at),
                               'order', p_order),
            p_traceparent);
    -- The INSERT stays in the WAL for Debezium; the table itself stays empty.
    DELETE FROM orders.outbox WHERE id = p_event_id;
END $$
