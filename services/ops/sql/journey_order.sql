-- The order's API commits (read as the API's role, in a read-only transaction).
SELECT status, created_at, updated_at FROM orders.orders WHERE id = %s
