"""The analytics tables as the analyst sees them, and their comparison with the oracle."""

from collections.abc import Sequence
from typing import Any, Protocol

from onceflow.schema import analytics
from tests.integration.aggregation.history import Event, expected_tables

DAILY = (*analytics.DAILY_COUNTS, "net_paid_cents")
CUSTOMER = (*analytics.CUSTOMER_COUNTS, "first_order_at", "last_order_at")
PRODUCT = analytics.PRODUCT_COUNTS
# Each money table's key columns (contract section 5: every one keyed by currency).
KEYS = {
    "daily_sales": ("day", "currency"),
    "customer_sales": ("customer_id", "currency"),
    "product_sales": ("sku", "currency"),
    "daily_product_sales": ("day", "sku", "currency"),
}
COLUMNS = {
    "daily_sales": DAILY,
    "customer_sales": CUSTOMER,
    "product_sales": PRODUCT,
    "daily_product_sales": PRODUCT,
}


class Queried(Protocol):
    """A database the tests read (conftest.Pipeline, or a scratch database)."""

    def query(self, sql: str, database: str | None = None) -> list[tuple[Any, ...]]: ...


def db_tables(p: Queried, database: str | None = None) -> dict[str, Any]:
    """The analytics tables as the analyst sees them, shaped like history.expected_tables."""

    def q(sql: str) -> list[tuple[Any, ...]]:
        return p.query(sql, database)

    fresh = q(
        "SELECT coalesce(sum(events_applied), 0), max(last_event_at) FROM analytics.freshness"
    )

    def table(name: str) -> dict[tuple[Any, ...], dict[str, Any]]:
        key, columns = KEYS[name], COLUMNS[name]
        rows = q(f"SELECT {', '.join((*key, *columns))} FROM analytics.{name}")
        return {r[: len(key)]: dict(zip(columns, r[len(key) :], strict=True)) for r in rows}

    return {
        **{name: table(name) for name in KEYS},
        "order_status_counts": dict(q("SELECT status, orders FROM analytics.order_status_counts")),
        "events": fresh[0][0],
        "last_event_at": fresh[0][1],
    }


def oracle(events: Sequence[Event]) -> dict[str, Any]:
    """expected_tables with every column present (zeros where nothing was counted)."""
    e = expected_tables(events)
    for name in ("daily_sales", "product_sales", "daily_product_sales"):
        e[name] = {k: {c: v.get(c, 0) for c in COLUMNS[name]} for k, v in e[name].items()}
    return e


def assert_exact(p: Queried, events: Sequence[Event], database: str | None = None) -> None:
    actual, expected = db_tables(p, database), oracle(events)
    for table in expected:
        assert actual[table] == expected[table], f"analytics.{table} differs from the oracle"
