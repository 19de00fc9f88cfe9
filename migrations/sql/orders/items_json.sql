CREATE FUNCTION orders.items_json(p_order_id uuid) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
RETURN (SELECT coalesce(jsonb_agg(jsonb_build_object('sku', i.sku, 'quantity', i.quantity,
                                                     'unit_price_cents', i.unit_price_cents)
                                  ORDER BY i.line_no), '[]'::jsonb)
          FROM orders.order_items i WHERE i.order_id = p_order_id)
