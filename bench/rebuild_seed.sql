-- bench/rebuild_bench.py's history in a scratch database: %(orders)s orders over the last 7 days
-- (inside the de-duplication window), in EUR, USD and JPY, each with 2 items and one of five
-- lives (placed; paid; paid and shipped; cancelled; paid and cancelled), every event in
-- aggregation.applied_events with its journey and each order's latest status in order_state:
-- what the job leaves after counting them. The orders' client is not the bench's concern.
ALTER TABLE orders.orders DROP CONSTRAINT IF EXISTS orders_client_id_fkey;
CREATE TEMP TABLE seed ON COMMIT DROP AS
SELECT md5(i::text)::uuid AS id, 'c' || (i %% (%(orders)s / 5 + 1)) AS customer_id,
    (ARRAY['EUR', 'USD', 'JPY'])[i %% 3 + 1] AS currency, i %% 5 AS life,
    1000 + i %% 5000 AS total_cents,
    now() - (i %% 600000) * interval '1 second' AS created_at, i
FROM generate_series(1, %(orders)s) i;
INSERT INTO orders.orders (id, customer_id, currency, status, total_cents, created_at,
    updated_at, client_id)
SELECT id, customer_id, currency,
    (ARRAY['PLACED', 'PAID', 'SHIPPED', 'CANCELLED', 'CANCELLED'])[life + 1], total_cents,
    created_at, created_at + interval '2 minutes', md5('bench')::uuid
FROM seed;
INSERT INTO orders.order_items (order_id, line_no, sku, quantity, unit_price_cents)
SELECT id, n, 'S' || ((i * n) %% 2000), n, total_cents / 3 FROM seed, generate_series(1, 2) n;
SELECT aggregation.dedup_cover(array_agg(DISTINCT aggregation.dedup_bucket(t)))
FROM generate_series(now() - interval '8 days', now() + interval '1 hour', interval '1 hour') t;
INSERT INTO aggregation.applied_events (event_id, occurred_at, order_id, event_type)
SELECT gen_random_uuid(), created_at + e.minutes * interval '1 minute', id::text, e.event_type
FROM seed JOIN (VALUES
    ('OrderPlaced', 0, ARRAY[0, 1, 2, 3, 4]), ('OrderPaid', 1, ARRAY[1, 2, 4]),
    ('OrderShipped', 2, ARRAY[2]), ('OrderCancelled', 2, ARRAY[3, 4])
) AS e(event_type, minutes, lives) ON life = ANY(e.lives);
INSERT INTO aggregation.order_state (order_id, status, status_rank, last_event_at, paid,
    cancelled_at)
SELECT id::text, (ARRAY['PLACED', 'PAID', 'SHIPPED', 'CANCELLED', 'CANCELLED'])[life + 1],
    (ARRAY[0, 1, 2, 3, 3])[life + 1],
    created_at + CASE WHEN life = 0 THEN 0 WHEN life = 1 THEN 1 ELSE 2 END * interval '1 minute',
    life IN (1, 2, 4), CASE WHEN life >= 3 THEN created_at + interval '2 minutes' END
FROM seed;
ANALYZE
