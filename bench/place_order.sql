-- pgbench script: the SQL transaction POST /orders issues (BEGIN; one function call; COMMIT).
-- Run: pgbench -n -M prepared -f bench/place_order.sql ... as the API role (shop_app).
BEGIN;
SELECT outcome, status, body::text FROM orders.place_order(
    'POST /orders', 'pgbench-' || gen_random_uuid()::text, sha256(gen_random_uuid()::text::bytea),
    '50ms', gen_random_uuid(), gen_random_uuid(), 'c-bench', 'EUR',
    '[{"sku": "SKU-1", "quantity": 2, "unit_price_cents": 1250}, {"sku": "SKU-2", "quantity": 1, "unit_price_cents": 99}]'::jsonb,
    2599, '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
COMMIT;
