-- p_problems holds the problem documents this function may answer with, keyed by kind
-- ('not_found', 'invalid_transition', 'concurrent_transition'): their type, title and status
-- come from the API (services/orders/entrypoints/problems.py); the detail is written here.
-- Only the client's own orders exist for it: another client's order is 'not_found'.
CREATE FUNCTION orders.transition_order(
    p_scope text, p_key text, p_fingerprint bytea, p_lock_timeout text,
    p_order_id uuid, p_action text, p_from text[], p_to text, p_event_type text,
    p_event_id uuid, p_traceparent text, p_problems jsonb, p_client_id uuid,
    p_schema_version integer,
    OUT outcome text, OUT status integer, OUT body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    v_claim record;
    v_order orders.orders;
    v_current text;
    v_status integer;
    v_body jsonb;
BEGIN
    SELECT * INTO v_claim
      FROM orders.claim_key(p_scope, p_key, p_fingerprint, p_lock_timeout, NULL, NULL);
    IF NOT v_claim.claimed THEN
        outcome := v_claim.outcome; status := v_claim.status; body := v_claim.body;
        RETURN;
    END IF;
    -- Version check: the status read here is the version the change is based on. The
    -- UPDATE re-checks it under the row lock, so of two concurrent transitions exactly
    -- one wins and the other is answered 409 (even when the pair would be valid in turn).
    SELECT o.status INTO v_current FROM orders.orders o
     WHERE o.id = p_order_id AND o.client_id = p_client_id;
    IF NOT FOUND THEN
        outcome := 'not_found';
        v_body := p_problems -> 'not_found'
                  || jsonb_build_object('detail', format('order %s does not exist', p_order_id));
    ELSIF NOT v_current = ANY (p_from) THEN
        outcome := 'rejected';
        v_body := p_problems -> 'invalid_transition'
                  || jsonb_build_object('detail', format('cannot %s an order that is %s',
                                                         p_action, v_current),
                                        'order_status', v_current);
    ELSE
        -- updated_at (= the event's occurred_at) strictly increases with each committed
        -- change of the order. Not now(): that is this transaction's start, which may precede
        -- the change it just saw committed (READ COMMITTED). The clock as the row is updated,
        -- and at least a microsecond after the version it replaces (the one the version check
        -- passed on, the latest committed), whatever the clock does.
        UPDATE orders.orders o
           SET status = p_to,
               updated_at = greatest(clock_timestamp(), o.updated_at + interval '1 microsecond')
         WHERE o.id = p_order_id AND o.status = v_current
        RETURNING o.* INTO v_order;
        IF FOUND THEN
            v_body := orders.order_json(v_order, orders.items_json(p_order_id));
            PERFORM orders.emit_event(p_event_id, p_event_type, p_schema_version, p_order_id,
                                      v_body, v_order.updated_at, p_traceparent);
            outcome := 'changed'; v_status := 200;
        ELSE
            SELECT o.status INTO v_current FROM orders.orders o WHERE o.id = p_order_id;
            outcome := 'rejected';
            v_body := p_problems -> 'concurrent_transition'
                      || jsonb_build_object('detail', format('the order changed to %s while '
                                                             'this %s ran', v_current, p_action),
                                            'order_status', v_current);
        END IF;
    END IF;
    v_status := coalesce(v_status, (v_body ->> 'status')::integer);
    UPDATE orders.idempotency_keys k SET status = v_status, body = v_body
     WHERE k.scope = p_scope AND k.key = p_key;
    status := v_status; body := v_body;
END $$
