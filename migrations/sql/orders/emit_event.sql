-- The event type and schema version come from the caller (onceflow/contract.py). The envelope
-- has the fields of onceflow/event_definition.py (tests/unit/events/test_definition_holds.py).
CREATE FUNCTION orders.emit_event(
    p_event_id uuid, p_event_type text, p_schema_version integer, p_order_id uuid,
    p_order jsonb, p_at timestamptz, p_traceparent text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO orders.outbox (id, aggregatetype, aggregateid, type, payload, traceparent)
    VALUES (p_event_id, 'order', p_order_id::text, p_event_type,
            jsonb_build_object('event_id', p_event_id, 'event_type', p_event_type,
                               'schema_version', p_schema_version,
                               'occurred_at', orders.iso_utc(p_at), 'order', p_order),
            p_traceparent);
    -- The INSERT stays in the WAL for Debezium; the table itself stays empty.
    DELETE FROM orders.outbox WHERE id = p_event_id;
END $$
