-- Claim (scope, key) for this transaction. A committed key is a replay (same fingerprint) or a
-- mismatch (different request). A concurrent request with the same key holds the key's
-- transaction-scoped advisory lock until it commits or rolls back (or its backend dies);
-- p_lock_timeout bounds the wait for that lock alone, and SQLSTATE 55P03 is answered 409
-- (request in flight). lock_timeout around the INSERT would also bound its other lock waits
-- (extension locks of the table and its indexes, a LOCK TABLE, autovacuum's truncation) and
-- answer them 409 for a key nobody holds: the INSERT waits those out, as the write functions'
-- other statements do.
--
-- The lock's two int4 halves are a 64-bit hash of (scope, key), a space apart from the
-- single-bigint advisory locks other programs take. A key whose hash another key in flight
-- shares (about one in 2^64) waits for it up to p_lock_timeout, then lets the INSERT decide
-- under a 1 ms lock_timeout: a different key does not stop it; this key's holder, whose row
-- is uncommitted, makes it fail with 55P03 (409), as it should.
CREATE FUNCTION orders.claim_key(
    p_scope text, p_key text, p_fingerprint bytea, p_lock_timeout text,
    p_status integer, p_body jsonb,
    OUT claimed boolean, OUT outcome text, OUT status integer, OUT body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    v_previous text := current_setting('lock_timeout');
    v_hash bigint := hashtextextended(p_key, hashtextextended(p_scope, 0));
    v_high integer := (v_hash >> 32)::integer;
    v_low integer := v_hash::bit(32)::integer;
    v_fingerprint bytea;
BEGIN
    -- Taken at once unless held: the exception block (a subtransaction) only when it is.
    IF NOT pg_try_advisory_xact_lock(v_high, v_low) THEN
        BEGIN
            PERFORM set_config('lock_timeout', p_lock_timeout, true);
            PERFORM pg_advisory_xact_lock(v_high, v_low);
            PERFORM set_config('lock_timeout', v_previous, true);
        EXCEPTION WHEN lock_not_available THEN
            PERFORM set_config('lock_timeout', '1ms', true);
        END;
    END IF;
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
