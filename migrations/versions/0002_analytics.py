"""Analytics schema written by the aggregation job and read by analysts (contract section 5).

Analyst-facing tables: daily_sales, customer_sales, product_sales, order_status_counts (a view
over order_state), freshness, dead_letters. Job bookkeeping (also readable by analysts):
applied_batches (the ledger of micro-batches applied, one row per Spark query and batch id),
applied_events (every event id ever counted: the durable de-duplication set) and order_state
(each order's latest status). docs/analytics.md defines every column. Privileges: migration 0003.

Revision ID: 0002_analytics
Revises: 0001_orders
Create Date: 2026-11-22
"""

from alembic import op

revision = "0002_analytics"
down_revision = "0001_orders"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE SCHEMA analytics")
    op.execute(
        """
        CREATE TABLE analytics.daily_sales (
            day               date    NOT NULL,
            currency          text    NOT NULL,
            orders_placed     bigint  NOT NULL DEFAULT 0,
            orders_paid       bigint  NOT NULL DEFAULT 0,
            orders_shipped    bigint  NOT NULL DEFAULT 0,
            orders_cancelled  bigint  NOT NULL DEFAULT 0,
            placed_cents      bigint  NOT NULL DEFAULT 0,
            paid_cents        bigint  NOT NULL DEFAULT 0,
            cancelled_cents   bigint  NOT NULL DEFAULT 0,
            PRIMARY KEY (day, currency)
        )
        """
    )
    op.execute(
        """
        CREATE TABLE analytics.customer_sales (
            customer_id      text         PRIMARY KEY,
            orders_placed    bigint       NOT NULL DEFAULT 0,
            placed_cents     bigint       NOT NULL DEFAULT 0,
            paid_cents       bigint       NOT NULL DEFAULT 0,
            cancelled_cents  bigint       NOT NULL DEFAULT 0,
            first_order_at   timestamptz,
            last_order_at    timestamptz
        )
        """
    )
    op.execute(
        """
        CREATE TABLE analytics.product_sales (
            sku              text    PRIMARY KEY,
            units_placed     bigint  NOT NULL DEFAULT 0,
            placed_cents     bigint  NOT NULL DEFAULT 0,
            units_cancelled  bigint  NOT NULL DEFAULT 0,
            cancelled_cents  bigint  NOT NULL DEFAULT 0
        )
        """
    )
    # status_rank orders events of one order that share an occurred_at (PLACED 0, PAID 1,
    # SHIPPED/CANCELLED 2), so "latest" never depends on the order records arrive in.
    op.execute(
        """
        CREATE TABLE analytics.order_state (
            order_id       text         PRIMARY KEY,
            status         text         NOT NULL
                           CHECK (status IN ('PLACED', 'PAID', 'SHIPPED', 'CANCELLED')),
            status_rank    smallint     NOT NULL,
            last_event_at  timestamptz  NOT NULL
        )
        """
    )
    op.execute(
        """
        CREATE VIEW analytics.order_status_counts AS
        SELECT s.status, count(o.order_id) AS orders
        FROM (VALUES (1, 'PLACED'), (2, 'PAID'), (3, 'SHIPPED'), (4, 'CANCELLED'))
             AS s (lifecycle, status)
        LEFT JOIN analytics.order_state o ON o.status = s.status
        GROUP BY s.lifecycle, s.status
        ORDER BY s.lifecycle
        """
    )
    op.execute(
        """
        CREATE TABLE analytics.freshness (
            stream           text         PRIMARY KEY,
            last_event_at    timestamptz,
            last_applied_at  timestamptz  NOT NULL,
            events_applied   bigint       NOT NULL DEFAULT 0
        )
        """
    )
    op.execute(
        """
        CREATE TABLE analytics.dead_letters (
            topic            text         NOT NULL,
            kafka_partition  integer      NOT NULL,
            kafka_offset     bigint       NOT NULL,
            key              bytea,
            value            bytea,
            error            text         NOT NULL,
            received_at      timestamptz  NOT NULL DEFAULT now(),
            PRIMARY KEY (topic, kafka_partition, kafka_offset)
        )
        """
    )
    op.execute(
        """
        CREATE TABLE analytics.applied_batches (
            query_id      text         NOT NULL,
            batch_id      bigint       NOT NULL,
            topic         text         NOT NULL,
            offsets       jsonb        NOT NULL,
            records       bigint       NOT NULL,
            events_new    bigint       NOT NULL,
            duplicates    bigint       NOT NULL,
            dead_letters  bigint       NOT NULL,
            committed_at  timestamptz  NOT NULL,
            PRIMARY KEY (query_id, batch_id)
        )
        """
    )
    op.execute(
        """
        CREATE TABLE analytics.applied_events (
            event_id  uuid PRIMARY KEY
        )
        """
    )


def downgrade() -> None:
    op.execute("DROP SCHEMA analytics CASCADE")
