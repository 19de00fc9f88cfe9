-- The client of a live key, looked up by the key's SHA-256, with the seconds until the key
-- expires (NULL: never). A key past its expires_at is not live. The key's last_used_at is
-- written at most once a minute (a row update per request would cost more than the lookup).
WITH hit AS (
    SELECT k.key_hash, c.id AS client_id, c.scopes, c.rate_per_s,
           extract(epoch FROM k.expires_at - now())::float8 AS expires_in_s
      FROM orders.api_keys k JOIN orders.clients c ON c.id = k.client_id
     WHERE k.key_hash = %(key_hash)s AND k.revoked_at IS NULL AND c.revoked_at IS NULL
       AND (k.expires_at IS NULL OR k.expires_at > now())
), touched AS (
    UPDATE orders.api_keys k SET last_used_at = now()
      FROM hit
     WHERE k.key_hash = hit.key_hash
       AND (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute')
)
SELECT key_hash, client_id, scopes, rate_per_s, expires_in_s FROM hit
