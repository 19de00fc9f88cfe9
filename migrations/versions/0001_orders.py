"""Order tables, the transactional outbox and its publication.

Revision ID: 0001_orders
Revises:
Create Date: 2026-11-22
"""

from alembic import op

from services.config import get_settings

revision = "0001_orders"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    s = get_settings()
    op.execute("CREATE SCHEMA orders")
    op.execute(
        """
        CREATE TABLE orders.orders (
            id           uuid PRIMARY KEY,
            customer_id  text NOT NULL,
            currency     char(3) NOT NULL,
            status       text NOT NULL
                         CHECK (status IN ('PLACED', 'PAID', 'SHIPPED', 'CANCELLED')),
            total_cents  bigint NOT NULL CHECK (total_cents >= 0),
            created_at   timestamptz NOT NULL,
            updated_at   timestamptz NOT NULL
        )
        """
    )
    op.execute("CREATE INDEX orders_newest ON orders.orders (created_at DESC, id DESC)")
    op.execute(
        "CREATE INDEX orders_by_customer ON orders.orders (customer_id, created_at DESC, id DESC)"
    )
    op.execute("CREATE INDEX orders_by_status ON orders.orders (status, created_at DESC, id DESC)")
    op.execute(
        """
        CREATE TABLE orders.order_items (
            order_id          uuid NOT NULL REFERENCES orders.orders (id) ON DELETE CASCADE,
            line_no           smallint NOT NULL,
            sku               text NOT NULL,
            quantity          integer NOT NULL CHECK (quantity BETWEEN 1 AND 10000),
            unit_price_cents  bigint NOT NULL CHECK (unit_price_cents BETWEEN 0 AND 100000000),
            PRIMARY KEY (order_id, line_no)
        )
        """
    )
    # The shape Debezium's Outbox Event Router expects (id, aggregatetype, aggregateid, type,
    # payload) plus the W3C traceparent. Rows are deleted in the same transaction that inserts
    # them: the INSERT stays in the WAL for the connector, and the table never grows.
    op.execute(
        """
        CREATE TABLE orders.outbox (
            id             uuid PRIMARY KEY,
            aggregatetype  text NOT NULL,
            aggregateid    text NOT NULL,
            type           text NOT NULL,
            payload        jsonb NOT NULL,
            traceparent    text
        )
        """
    )
    op.execute(f"CREATE PUBLICATION {s.publication} FOR TABLE orders.outbox WITH (publish = 'insert')")
    # Idempotency-Key records (contract section 3): written in the same transaction as the
    # change they answer, kept at least 24 h, purged by `python -m services.orders.purge_keys`.
    # `status`/`body` are NULL only inside the claiming transaction, never once committed.
    op.execute(
        """
        CREATE TABLE orders.idempotency_keys (
            scope        text NOT NULL,
            key          text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
            fingerprint  bytea NOT NULL,
            status       smallint,
            body         jsonb,
            created_at   timestamptz NOT NULL,
            PRIMARY KEY (scope, key)
        ) WITH (fillfactor = 90)
        """
    )
    op.execute("CREATE INDEX idempotency_keys_by_age ON orders.idempotency_keys (created_at)")
    for statement in FUNCTIONS:
        op.execute(statement)
    op.execute(f"GRANT USAGE ON SCHEMA orders TO {s.app_db_user}, {s.cdc_db_user}")
    op.execute(
        "GRANT SELECT, INSERT, UPDATE, DELETE ON orders.orders, orders.order_items, orders.outbox, "
        f"orders.idempotency_keys TO {s.app_db_user}"
    )
    op.execute("REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA orders FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA orders TO {s.app_db_user}")
    op.execute(f"GRANT SELECT ON orders.outbox TO {s.cdc_db_user}")


def downgrade() -> None:
    s = get_settings()
    op.execute(f"DROP PUBLICATION IF EXISTS {s.publication}")
    op.execute("DROP SCHEMA orders CASCADE")


# Server-side functions: each write endpoint is ONE statement (one round trip) that claims the
# Idempotency-Key, changes the order, writes its outbox event and stores the response — all in
# the caller's transaction. Timestamps are the transaction's now(), rendered as UTC ISO-8601
# with microseconds and 'Z'; orders.updated_at and the event's occurred_at are the same instant.
FUNCTIONS = (
    """
    CREATE FUNCTION orders.iso_utc(ts timestamptz) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
    """,
    """
    CREATE FUNCTION orders.problem(p_slug text, p_title text, p_status integer, p_detail text)
    RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN jsonb_build_object('type', 'urn:onceflow:problem:' || p_slug, 'title', p_title,
                              'status', p_status, 'detail', p_detail)
    """,
    """
    CREATE FUNCTION orders.items_json(p_order_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN (SELECT coalesce(jsonb_agg(jsonb_build_object('sku', i.sku, 'quantity', i.quantity,
                                                         'unit_price_cents', i.unit_price_cents)
                                      ORDER BY i.line_no), '[]'::jsonb)
              FROM orders.order_items i WHERE i.order_id = p_order_id)
    """,
    """
    CREATE FUNCTION orders.order_json(o orders.orders, p_items jsonb) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN jsonb_build_object('id', o.id, 'customer_id', o.customer_id, 'currency', o.currency,
                              'status', o.status, 'total_cents', o.total_cents, 'items', p_items,
                              'created_at', orders.iso_utc(o.created_at),
                              'updated_at', orders.iso_utc(o.updated_at))
    """,
    # Claim (scope, key) for this transaction. A concurrent holder of the same key makes the
    # INSERT wait on its transaction; lock_timeout bounds that wait and raises SQLSTATE 55P03,
    # which the API answers with 409 (request in flight). A committed key is a replay (same
    # fingerprint) or a mismatch (different request).
    """
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
    """,
    """
    CREATE FUNCTION orders.emit_event(
        p_event_id uuid, p_event_type text, p_order_id uuid, p_order jsonb, p_at timestamptz,
        p_traceparent text) RETURNS void
    LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO orders.outbox (id, aggregatetype, aggregateid, type, payload, traceparent)
        VALUES (p_event_id, 'order', p_order_id::text, p_event_type,
                jsonb_build_object('event_id', p_event_id, 'event_type', p_event_type,
                                   'schema_version', 1, 'occurred_at', orders.iso_utc(p_at),
                                   'order', p_order),
                p_traceparent);
        -- The INSERT stays in the WAL for Debezium; the table itself stays empty.
        DELETE FROM orders.outbox WHERE id = p_event_id;
    END $$
    """,
    """
    CREATE FUNCTION orders.place_order(
        p_scope text, p_key text, p_fingerprint bytea, p_lock_timeout text,
        p_order_id uuid, p_event_id uuid, p_customer_id text, p_currency text,
        p_items jsonb, p_total_cents bigint, p_traceparent text,
        OUT outcome text, OUT status integer, OUT body jsonb)
    LANGUAGE plpgsql AS $$
    DECLARE
        v_now timestamptz := now();
        v_order jsonb;
        v_claim record;
    BEGIN
        v_order := jsonb_build_object(
            'id', p_order_id, 'customer_id', p_customer_id, 'currency', p_currency,
            'status', 'PLACED', 'total_cents', p_total_cents, 'items', p_items,
            'created_at', orders.iso_utc(v_now), 'updated_at', orders.iso_utc(v_now));
        SELECT * INTO v_claim
          FROM orders.claim_key(p_scope, p_key, p_fingerprint, p_lock_timeout, 201, v_order);
        IF NOT v_claim.claimed THEN
            outcome := v_claim.outcome; status := v_claim.status; body := v_claim.body;
            RETURN;
        END IF;
        INSERT INTO orders.orders (id, customer_id, currency, status, total_cents, created_at,
                                   updated_at)
        VALUES (p_order_id, p_customer_id, p_currency, 'PLACED', p_total_cents, v_now, v_now);
        INSERT INTO orders.order_items (order_id, line_no, sku, quantity, unit_price_cents)
        SELECT p_order_id, t.line_no, t.sku, t.quantity, t.unit_price_cents
          FROM ROWS FROM (jsonb_to_recordset(p_items)
                          AS (sku text, quantity integer, unit_price_cents bigint))
               WITH ORDINALITY AS t (sku, quantity, unit_price_cents, line_no);
        PERFORM orders.emit_event(p_event_id, 'OrderPlaced', p_order_id, v_order, v_now,
                                  p_traceparent);
        outcome := 'created'; status := 201; body := v_order;
    END $$
    """,
    """
    CREATE FUNCTION orders.transition_order(
        p_scope text, p_key text, p_fingerprint bytea, p_lock_timeout text,
        p_order_id uuid, p_action text, p_from text[], p_to text, p_event_type text,
        p_event_id uuid, p_traceparent text,
        OUT outcome text, OUT status integer, OUT body jsonb)
    LANGUAGE plpgsql AS $$
    DECLARE
        v_claim record;
        v_order orders.orders;
        v_current text;
        v_status integer;
        v_body jsonb;
    BEGIN
        SELECT * INTO v_claim
          FROM orders.claim_key(p_scope, p_key, p_fingerprint, p_lock_timeout, NULL, NULL);
        IF NOT v_claim.claimed THEN
            outcome := v_claim.outcome; status := v_claim.status; body := v_claim.body;
            RETURN;
        END IF;
        -- Version check: the status read here is the version the change is based on. The
        -- UPDATE re-checks it under the row lock, so of two concurrent transitions exactly
        -- one wins and the other is answered 409 (even when the pair would be valid in turn).
        SELECT o.status INTO v_current FROM orders.orders o WHERE o.id = p_order_id;
        IF NOT FOUND THEN
            outcome := 'not_found'; v_status := 404;
            v_body := orders.problem('order-not-found', 'Not Found', 404,
                                     format('order %s does not exist', p_order_id));
        ELSIF NOT v_current = ANY (p_from) THEN
            outcome := 'rejected'; v_status := 409;
            v_body := orders.problem('invalid-transition', 'Conflict', 409,
                                     format('cannot %s an order that is %s', p_action, v_current))
                      || jsonb_build_object('order_status', v_current);
        ELSE
            UPDATE orders.orders o SET status = p_to, updated_at = now()
             WHERE o.id = p_order_id AND o.status = v_current
            RETURNING o.* INTO v_order;
            IF FOUND THEN
                v_body := orders.order_json(v_order, orders.items_json(p_order_id));
                PERFORM orders.emit_event(p_event_id, p_event_type, p_order_id, v_body,
                                          v_order.updated_at, p_traceparent);
                outcome := 'changed'; v_status := 200;
            ELSE
                SELECT o.status INTO v_current FROM orders.orders o WHERE o.id = p_order_id;
                outcome := 'rejected'; v_status := 409;
                v_body := orders.problem('concurrent-transition', 'Conflict', 409,
                                         format('the order changed to %s while this %s ran',
                                                v_current, p_action))
                          || jsonb_build_object('order_status', v_current);
            END IF;
        END IF;
        UPDATE orders.idempotency_keys k SET status = v_status, body = v_body
         WHERE k.scope = p_scope AND k.key = p_key;
        status := v_status; body := v_body;
    END $$
    """,
)
