-- pgbench script: the SQL transaction POST /orders issues (BEGIN; one function call with named
-- arguments, as services/orders/adapters/calls.py compiles it; COMMIT).
-- Run: pgbench -n -M prepared -D client_id=<uuid> -f bench/place_order.sql ... as the API role
-- (shop_app); the client must exist (api_bench.py creates one). The key's scope is the client's,
-- as the API scopes it.
-- The status, event type and schema version are the contract's (tests/unit/orders hold them).
BEGIN;
SELECT outcome, status, CAST(body AS TEXT) AS body FROM orders.place_order(
    p_scope => CAST(:client_id AS text) || ' POST /orders', p_key => 'pgbench-' || gen_random_uuid()::text,
    p_fingerprint => sha256(gen_random_uuid()::text::bytea), p_lock_timeout => '50ms',
    p_order_id => gen_random_uuid(), p_event_id => gen_random_uuid(),
    p_customer_id => 'c-bench', p_currency => 'EUR',
    p_items => CAST('[{"sku": "SKU-1", "quantity": 2, "unit_price_cents": 1250}, {"sku": "SKU-2", "quantity": 1, "unit_price_cents": 99}]' AS jsonb),
    p_total_cents => 2599, p_traceparent => '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    p_client_id => CAST(:client_id AS uuid),
    p_status => 'PLACED', p_event_type => 'OrderPlaced', p_schema_version => 1);
COMMIT;
