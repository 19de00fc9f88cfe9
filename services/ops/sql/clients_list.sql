SELECT c.id, c.name, c.scopes, c.rate_per_s, c.created_at, c.revoked_at,
       count(k.key_hash) FILTER (
           WHERE k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
       ) AS live_keys,
       max(k.last_used_at) AS last_used_at
  FROM orders.clients c LEFT JOIN orders.api_keys k ON k.client_id = c.id
 GROUP BY c.id
 ORDER BY c.created_at, c.name
