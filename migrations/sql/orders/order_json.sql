CREATE FUNCTION orders.order_json(o orders.orders, p_items jsonb) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
RETURN jsonb_build_object('id', o.id, 'customer_id', o.customer_id, 'currency', o.currency,
                          'status', o.status, 'total_cents', o.total_cents, 'items', p_items,
                          'created_at', orders.iso_utc(o.created_at),
                          'updated_at', orders.iso_utc(o.updated_at))
