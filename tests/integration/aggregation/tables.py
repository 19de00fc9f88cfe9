"""The analytics tables as the analyst sees them, and their comparison with the oracle."""

from collections.abc import Sequence
from typing import Any, Protocol

from onceflow.schema import analytics
from tests.integration.aggregation.history import Event, expected_tables

DAILY = analytics.DAILY_COUNTS
CUSTOMER = (*analytics.CUSTOMER_COUNTS, "first_order_at", "last_order_at")
PRODUCT = analytics.PRODUCT_COUNTS


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
    return {
        "daily_sales": {
            (r[0], r[1]): dict(zip(DAILY, r[2:], strict=True))
            for r in q(f"SELECT day, currency, {', '.join(DAILY)} FROM analytics.daily_sales")
        },
        "customer_sales": {
            r[0]: dict(zip(CUSTOMER, r[1:], strict=True))
            for r in q(f"SELECT customer_id, {', '.join(CUSTOMER)} FROM analytics.customer_sales")
        },
        "product_sales": {
            r[0]: dict(zip(PRODUCT, r[1:], strict=True))
            for r in q(f"SELECT sku, {', '.join(PRODUCT)} FROM analytics.product_sales")
        },
        "order_status_counts": dict(q("SELECT status, orders FROM analytics.order_status_counts")),
        "events": fresh[0][0],
        "last_event_at": fresh[0][1],
    }


def oracle(events: Sequence[Event]) -> dict[str, Any]:
    """expected_tables with every column present (zeros where nothing was counted)."""
    e = expected_tables(events)
    e["daily_sales"] = {k: {c: v.get(c, 0) for c in DAILY} for k, v in e["daily_sales"].items()}
    e["product_sales"] = {
        k: {c: v.get(c, 0) for c in PRODUCT} for k, v in e["product_sales"].items()
    }
    return e


def assert_exact(p: Queried, events: Sequence[Event], database: str | None = None) -> None:
    actual, expected = db_tables(p, database), oracle(events)
    for table in expected:
        assert actual[table] == expected[table], f"analytics.{table} differs from the oracle"
