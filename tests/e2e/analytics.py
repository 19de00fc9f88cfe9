"""Reading the analytics tables as an analyst, and waiting for them to catch up."""

import uuid
from collections import Counter
from typing import Any

import httpx
import psycopg

from onceflow.schema import analytics as schema
from stack.waiting import wait_for
from tests.e2e.orders import place

DAILY_COLUMNS = schema.DAILY_COUNTS
CUSTOMER_COLUMNS = schema.CUSTOMER_COUNTS
PRODUCT_COLUMNS = schema.PRODUCT_COUNTS

Conn = psycopg.Connection[tuple[Any, ...]]


def daily_sales(conn: Conn) -> Counter[tuple[str, str, str]]:
    rows = conn.execute(
        f"SELECT day::text, currency, {', '.join(DAILY_COLUMNS)} FROM analytics.daily_sales"
    )
    totals: Counter[tuple[str, str, str]] = Counter()
    for day, currency, *values in rows:
        for column, value in zip(DAILY_COLUMNS, values, strict=True):
            totals[(day, currency, column)] = int(value)
    return totals


def _rows(
    conn: Conn, table: str, key: str, columns: tuple[str, ...], keys: list[str]
) -> dict[str, Counter[str]]:
    rows = conn.execute(
        f"SELECT {key}, {', '.join(columns)} FROM analytics.{table} WHERE {key} = ANY(%s)", (keys,)
    )
    return {
        k: Counter({c: int(v) for c, v in zip(columns, values, strict=True) if v})
        for k, *values in rows
    }


def customer_sales(conn: Conn, customers: list[str]) -> dict[str, Counter[str]]:
    return _rows(conn, "customer_sales", "customer_id", CUSTOMER_COLUMNS, customers)


def product_sales(conn: Conn, skus: list[str]) -> dict[str, Counter[str]]:
    return _rows(conn, "product_sales", "sku", PRODUCT_COLUMNS, skus)


def barrier(api: httpx.Client, conn: Conn, *, timeout: float = 120) -> None:
    """Post a sentinel order and wait until it is counted: every earlier event is counted too,
    because Spark plans each batch from offsets read after the sentinel's Kafka commit."""
    customer = f"barrier-{uuid.uuid4().hex[:12]}"
    place(api, customer, "CHF", [{"sku": "BARRIER", "quantity": 1, "unit_price_cents": 1}])
    wait_for(
        lambda: bool(customer_sales(conn, [customer])), what="the barrier order", timeout=timeout
    )


def status_counts(conn: Conn) -> Counter[str]:
    rows = conn.execute("SELECT status, orders FROM analytics.order_status_counts")
    return Counter({s: int(n) for s, n in rows})
