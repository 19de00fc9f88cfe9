-- Claim (scope, key) for this transaction. A concurrent holder of the same key makes the
-- INSERT wait on its transaction; lock_timeout bounds that wait and raises SQLSTATE 55P03,
-- which the API answers with 409 (request in flight). A committed key is a replay (same
-- fingerprint) or a mismatch (different request).
CREATE FUNCTION orders.claim_key(
    p_scope text, p_key text, p_fingerprint bytea, p_lock_timeout text,
    p_status integer, p_body jsonb,
    OUT claimed boolean, OUT outcome text, OUT status integer, OUT body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    v_previous text := current_setting('lock_timeout');
    v_fingerprint bytea;
BEGIN
    PERFORM set_config('lock_timeout', p_lock_timeout, true);
    INSERT INTO orders.idempotency_keys AS k (scope, key, fingerprint, status, body, created_at)
    VALUES (p_scope, p_key, p_fingerprint, p_status, p_body, now())
    ON CONFLICT DO NOTHING;
    claimed := FOUND;
    PERFORM set_config('lock_timeout', v_previous, true);
    IF claimed THEN
        RETURN;
    END IF;
    SELECT k.fingerprint, k.status, k.body INTO v_fingerprint, status, body
      FROM orders.idempotency_keys k WHERE k.scope = p_scope AND k.key = p_key;
    IF v_fingerprint IS DISTINCT FROM p_fingerprint THEN
        outcome := 'mismatch'; status := 422; body := NULL;
    ELSE
        outcome := 'replayed';
    END IF;
END $$
