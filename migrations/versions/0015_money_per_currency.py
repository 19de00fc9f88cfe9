"""Contract v1.2 section 5: every money table keyed by currency, shipped, refunded and net paid
amounts, analytics.daily_product_sales, and a COMMENT on every reporting relation and column.

v1.1's customer_sales and product_sales added amounts of different currencies, which cannot be
split after the fact; daily_sales was already per (day, currency) but had no shipped or refunded
amount. So the tables are recomputed, in this migration's one transaction, from the events the
job counted as far as the database still knows them (onceflow/recompute.py and
onceflow/sql/recompute/, shared with `onceflow-ops analytics rebuild`: the de-duplication set's
journeys, each order's latest status in order_state, and the orders schema); daily_sales keeps
v1.1's counts and sums, which were exact, and gains shipped_cents and refunded_cents from the
recompute. docs/analytics.md says what history the recompute cannot reach. order_state gains `paid` and `cancelled_at`, from
which the job counts each refund once (spark_jobs/aggregation/sql/refunds.sql).

The migration takes the writers' lock (analytics.lock_writers) and rewrites the tables: stop the
aggregation job first and start the new version after (docs/analytics.md, "Recomputing the
tables"); a job of the previous version fails its fold against the new tables (nothing is
written), and Spark re-runs the batch once the new version runs. The downgrade adds the
currencies back together (v1.1's tables) and drops what v1.2 added.

Revision ID: 0015_money_per_currency
Revises: 0014_monotonic_updated_at
Create Date: 2026-11-25
"""

from pathlib import Path

from alembic import op

from migrations import comments
from onceflow import recompute

revision = "0015_money_per_currency"
down_revision = "0014_monotonic_updated_at"
branch_labels = None
depends_on = None

SQL = Path(__file__).resolve().parents[1] / "sql"
COUNTS = "bigint NOT NULL DEFAULT 0"
PRODUCT_COUNTS = f"""
    units_placed     {COUNTS},
    placed_cents     {COUNTS},
    units_cancelled  {COUNTS},
    cancelled_cents  {COUNTS}"""
CREATE = {
    "daily_sales": f"""
        CREATE TABLE analytics.daily_sales (
            day               date  NOT NULL,
            currency          text  NOT NULL,
            orders_placed     {COUNTS},
            orders_paid       {COUNTS},
            orders_shipped    {COUNTS},
            orders_cancelled  {COUNTS},
            placed_cents      {COUNTS},
            paid_cents        {COUNTS},
            shipped_cents     {COUNTS},
            cancelled_cents   {COUNTS},
            refunded_cents    {COUNTS},
            net_paid_cents    bigint GENERATED ALWAYS AS (paid_cents - refunded_cents) STORED,
            PRIMARY KEY (day, currency)
        )""",
    "customer_sales": f"""
        CREATE TABLE analytics.customer_sales (
            customer_id      text  NOT NULL,
            currency         text  NOT NULL,
            orders_placed    {COUNTS},
            placed_cents     {COUNTS},
            paid_cents       {COUNTS},
            cancelled_cents  {COUNTS},
            refunded_cents   {COUNTS},
            first_order_at   timestamptz,
            last_order_at    timestamptz,
            PRIMARY KEY (customer_id, currency)
        )""",
    "product_sales": f"""
        CREATE TABLE analytics.product_sales (
            sku       text  NOT NULL,
            currency  text  NOT NULL,{PRODUCT_COUNTS},
            PRIMARY KEY (sku, currency)
        )""",
    "daily_product_sales": f"""
        CREATE TABLE analytics.daily_product_sales (
            day       date  NOT NULL,
            sku       text  NOT NULL,
            currency  text  NOT NULL,{PRODUCT_COUNTS},
            PRIMARY KEY (day, sku, currency)
        )""",
}
# daily_sales: v1.1's counts and sums (exact, already per currency), the recomputed new ones.
KEEP_V11_DAILY = """
INSERT INTO analytics.daily_sales (day, currency, orders_placed, orders_paid, orders_shipped,
    orders_cancelled, placed_cents, paid_cents, cancelled_cents, shipped_cents, refunded_cents)
SELECT coalesce(v.day, r.day), coalesce(v.currency, r.currency),
    coalesce(v.orders_placed, 0), coalesce(v.orders_paid, 0), coalesce(v.orders_shipped, 0),
    coalesce(v.orders_cancelled, 0), coalesce(v.placed_cents, 0), coalesce(v.paid_cents, 0),
    coalesce(v.cancelled_cents, 0), coalesce(r.shipped_cents, 0), coalesce(r.refunded_cents, 0)
FROM v11_daily_sales v FULL JOIN ({recomputed}) r ON (r.day, r.currency) = (v.day, v.currency)
"""
# The downgrade: v1.1's tables, the currencies added together as v1.1 did.
DOWN = """
ALTER TABLE analytics.daily_sales DROP COLUMN net_paid_cents, DROP COLUMN shipped_cents,
    DROP COLUMN refunded_cents;
CREATE TEMP TABLE v12_customer_sales ON COMMIT DROP AS SELECT * FROM analytics.customer_sales;
CREATE TEMP TABLE v12_product_sales ON COMMIT DROP AS SELECT * FROM analytics.product_sales;
DROP TABLE analytics.customer_sales, analytics.product_sales, analytics.daily_product_sales;
CREATE TABLE analytics.customer_sales (
    customer_id text PRIMARY KEY, orders_placed bigint NOT NULL DEFAULT 0,
    placed_cents bigint NOT NULL DEFAULT 0, paid_cents bigint NOT NULL DEFAULT 0,
    cancelled_cents bigint NOT NULL DEFAULT 0, first_order_at timestamptz,
    last_order_at timestamptz);
INSERT INTO analytics.customer_sales
SELECT customer_id, sum(orders_placed), sum(placed_cents), sum(paid_cents),
    sum(cancelled_cents), min(first_order_at), max(last_order_at)
FROM v12_customer_sales GROUP BY customer_id;
CREATE TABLE analytics.product_sales (
    sku text PRIMARY KEY, units_placed bigint NOT NULL DEFAULT 0,
    placed_cents bigint NOT NULL DEFAULT 0, units_cancelled bigint NOT NULL DEFAULT 0,
    cancelled_cents bigint NOT NULL DEFAULT 0);
INSERT INTO analytics.product_sales
SELECT sku, sum(units_placed), sum(placed_cents), sum(units_cancelled), sum(cancelled_cents)
FROM v12_product_sales GROUP BY sku;
ALTER TABLE analytics.order_state DROP COLUMN paid, DROP COLUMN cancelled_at
"""


def upgrade() -> None:
    op.execute("SELECT analytics.lock_writers()")
    op.execute(
        "ALTER TABLE analytics.order_state ADD COLUMN paid boolean NOT NULL DEFAULT false,"
        " ADD COLUMN cancelled_at timestamptz"
    )
    recompute.prepare(op.execute, "analytics")  # the bookkeeping's schema at this revision
    op.execute(recompute.order_state("analytics"))
    op.execute("CREATE TEMP TABLE v11_daily_sales ON COMMIT DROP AS TABLE analytics.daily_sales")
    op.execute(
        "DROP TABLE analytics.daily_sales, analytics.customer_sales, analytics.product_sales"
    )
    for ddl in CREATE.values():
        op.execute(ddl)
    op.execute(KEEP_V11_DAILY.format(recomputed=recompute.query("daily_sales")))
    for table in ("customer_sales", "product_sales", "daily_product_sales"):
        recompute.fill(op.execute, table, f"analytics.{table}")
    op.execute((SQL / "grants.sql").read_text())
    comments.set_all(op)


def downgrade() -> None:
    op.execute("SELECT analytics.lock_writers()")
    comments.set_all(op, clear=True)
    for statement in DOWN.split(";\n"):
        op.execute(statement)
    op.execute((SQL / "grants.sql").read_text())
