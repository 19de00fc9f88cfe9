"""Reading the analytics tables as an analyst, and waiting for them to catch up."""

import uuid
from collections import Counter
from typing import Any

import httpx
import psycopg

from onceflow.schema import analytics as schema
from stack.waiting import wait_for
from tests.e2e.orders import place

DAILY_COLUMNS = (*schema.DAILY_COUNTS, "net_paid_cents")
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
    conn: Conn, table: str, key: tuple[str, ...], columns: tuple[str, ...], of: str, ids: list[str]
) -> dict[tuple[str, ...], Counter[str]]:
    """The rows of analytics.`table` whose column `of` is one of `ids`, by their key (each key
    column as text), with their non-zero columns."""
    rows = conn.execute(
        f"SELECT {', '.join(f'{k}::text' for k in key)}, {', '.join(columns)}"
        f" FROM analytics.{table} WHERE {of} = ANY(%s)",
        (ids,),
    )
    n = len(key)
    return {
        tuple(r[:n]): Counter({c: int(v) for c, v in zip(columns, r[n:], strict=True) if v})
        for r in rows
    }


def customer_sales(conn: Conn, customers: list[str]) -> dict[tuple[str, ...], Counter[str]]:
    key = ("customer_id", "currency")
    return _rows(conn, "customer_sales", key, CUSTOMER_COLUMNS, "customer_id", customers)


def product_sales(conn: Conn, skus: list[str]) -> dict[tuple[str, ...], Counter[str]]:
    return _rows(conn, "product_sales", ("sku", "currency"), PRODUCT_COLUMNS, "sku", skus)


def daily_product_sales(conn: Conn, skus: list[str]) -> dict[tuple[str, ...], Counter[str]]:
    key = ("day", "sku", "currency")
    return _rows(conn, "daily_product_sales", key, PRODUCT_COLUMNS, "sku", skus)


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
