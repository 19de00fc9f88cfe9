-- Each write endpoint is ONE statement (one round trip) that claims the Idempotency-Key,
-- changes the order, writes its outbox event and stores the response, all in the caller's
-- transaction. orders.updated_at and the event's occurred_at are the same instant: now() for a
-- new order (= created_at; no change of it can precede its commit), and for a transition the
-- clock as the row is updated, always after the order's previous change (transition_order).
-- The order belongs to p_client_id (the caller's key); order_json leaves it out of the answer
-- and of the event. Its status, event type and schema version are the contract's, passed by
-- the API (services/orders/adapters/calls.py), as transition_order's are.
CREATE FUNCTION orders.place_order(
    p_scope text, p_key text, p_fingerprint bytea, p_lock_timeout text,
    p_order_id uuid, p_event_id uuid, p_customer_id text, p_currency text,
    p_items jsonb, p_total_cents bigint, p_traceparent text, p_client_id uuid,
    p_status text, p_event_type text, p_schema_version integer,
    OUT outcome text, OUT status integer, OUT body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    v_order orders.orders;
    v_body jsonb;
    v_claim record;
BEGIN
    v_order.id := p_order_id;
    v_order.customer_id := p_customer_id;
    v_order.currency := p_currency;
    v_order.status := p_status;
    v_order.total_cents := p_total_cents;
    v_order.created_at := now();
    v_order.updated_at := v_order.created_at;
    v_order.client_id := p_client_id;
    -- The answer is stored with the claim (one write of the key row), so it is rendered before
    -- the INSERT, from the row about to be inserted, by order_json as reads render it.
    v_body := orders.order_json(v_order, p_items);
    SELECT * INTO v_claim
      FROM orders.claim_key(p_scope, p_key, p_fingerprint, p_lock_timeout, 201, v_body);
    IF NOT v_claim.claimed THEN
        outcome := v_claim.outcome; status := v_claim.status; body := v_claim.body;
        RETURN;
    END IF;
    INSERT INTO orders.orders VALUES (v_order.*);
    INSERT INTO orders.order_items (order_id, line_no, sku, quantity, unit_price_cents)
    SELECT p_order_id, t.line_no, t.sku, t.quantity, t.unit_price_cents
      FROM ROWS FROM (jsonb_to_recordset(p_items)
                      AS (sku text, quantity integer, unit_price_cents bigint))
           WITH ORDINALITY AS t (sku, quantity, unit_price_cents, line_no);
    PERFORM orders.emit_event(p_event_id, p_event_type, p_schema_version, p_order_id, v_body,
                              v_order.updated_at, p_traceparent);
    outcome := 'created'; status := 201; body := v_body;
END $$
