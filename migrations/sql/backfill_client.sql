-- One batch of the backfill of orders.orders.client_id (migration 0006): short transactions,
-- each locking at most 5000 rows, so writers are never blocked for long.
UPDATE orders.orders SET client_id = (SELECT id FROM orders.clients WHERE name = 'legacy')
 WHERE id IN (SELECT id FROM orders.orders WHERE client_id IS NULL
              LIMIT 5000)
