-- Whether a key (by its SHA-256) is live: not revoked, not expired, of a live client.
SELECT 1
FROM orders.api_keys k
JOIN orders.clients c ON c.id = k.client_id
WHERE k.key_hash = %s
  AND k.revoked_at IS NULL
  AND c.revoked_at IS NULL
  AND (k.expires_at IS NULL OR k.expires_at > now())
