"""Order tables, the transactional outbox and its publication.

Server-side functions and privileges: migration 0003 (migrations/sql/).

Revision ID: 0001_orders
Revises:
Create Date: 2026-11-22
"""

from alembic import op

revision = "0001_orders"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
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
    op.execute("CREATE PUBLICATION onceflow_outbox FOR TABLE orders.outbox WITH (publish = 'insert')")
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


def downgrade() -> None:
    op.execute("DROP PUBLICATION IF EXISTS onceflow_outbox")
    op.execute("DROP SCHEMA orders CASCADE")
