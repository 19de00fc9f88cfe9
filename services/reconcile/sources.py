"""What each source says for the days checked (compare.py's values), and which orders are in
one group: SQL in sql/, one query per fact."""

from collections.abc import Iterable
from datetime import date
from pathlib import Path
from typing import Any

import psycopg

from onceflow.contract import STATUS_AFTER, STATUS_RANK, EventType
from services.reconcile.compare import ANALYTICS_COLUMNS, Key

SQL = Path(__file__).parent / "sql"
Conn = psycopg.Connection[Any]
TYPES = [str(t) for t in EventType]
RANKS = [STATUS_RANK[STATUS_AFTER[t]] for t in EventType]
EVENT_OF = {str(status): str(t) for t, status in STATUS_AFTER.items()}


def _sql(name: str) -> str:
    return (SQL / f"{name}.sql").read_text()


def _latest(name: str) -> str:
    return _sql(name).format(latest=_sql("latest_events"))


def _days(first: date, last: date) -> dict[str, Any]:
    return {"first": first, "last": last}


def topic(conn: Conn, first: date, last: date) -> dict[Key, int]:
    """The topic's events, cents and refunded_cents per type, and latest per type."""
    found: dict[Key, int] = {}
    params = {**_days(first, last), "paid": EventType.PAID, "cancelled": EventType.CANCELLED}
    for day, currency, event_type, events, cents, refunded in conn.execute(
        _sql("topic_values"), params
    ):
        found[(day, currency, event_type, "events")] = events
        found[(day, currency, event_type, "cents")] = cents
        if event_type == EventType.CANCELLED:
            found[(day, currency, event_type, "refunded_cents")] = refunded
    latest = {**_days(first, last), "types": TYPES, "ranks": RANKS}
    for day, currency, event_type, orders in conn.execute(_latest("topic_latest"), latest):
        found[(day, currency, event_type, "latest")] = orders
    return found


def analytics(conn: Conn, first: date, last: date) -> dict[Key, int]:
    """daily_sales's columns, each as its (event type, measure)."""
    found: dict[Key, int] = {}
    cursor = conn.execute(_sql("analytics_values"), _days(first, last))
    names = [column.name for column in cursor.description or ()]
    for row in cursor:
        values = dict(zip(names, row, strict=True))
        for (event_type, measure), column in ANALYTICS_COLUMNS.items():
            found[(values["day"], values["currency"], event_type, measure)] = values[column]
    return found


def orders(conn: Conn, first: date, last: date) -> dict[Key, int]:
    """Every OrderPlaced (events, cents) and every order's latest event, from schema orders."""
    found: dict[Key, int] = {}
    for day, currency, events, cents in conn.execute(_sql("orders_placed"), _days(first, last)):
        found[(day, currency, EventType.PLACED, "events")] = events
        found[(day, currency, EventType.PLACED, "cents")] = cents
    for day, currency, status, count in conn.execute(_sql("orders_latest"), _days(first, last)):
        found[(day, currency, EVENT_OF[status], "latest")] = count
    return found


def topic_orders(conn: Conn, key: Key) -> set[str]:
    """The orders of one group on the topic."""
    day, currency, event_type, measure = key
    if measure == "latest":
        params = {"first": day, "day": day, "currency": currency, "event_type": event_type}
        rows: Iterable[tuple[str]] = conn.execute(
            _latest("topic_latest_orders"), {**params, "types": TYPES, "ranks": RANKS}
        )
    else:
        rows = conn.execute(
            _sql("topic_orders"),
            {
                "day": day,
                "currency": currency,
                "event_type": event_type,
                "refunded": measure == "refunded_cents",
                "paid": EventType.PAID,
            },
        )
    return {row[0] for row in rows}


def order_side(conn: Conn, key: Key) -> set[str]:
    """The orders of one group as the order tables know them (compare.says: placed or latest)."""
    day, currency, event_type, measure = key
    latest = measure == "latest"
    status = str(STATUS_AFTER[EventType(event_type)])
    rows = conn.execute(
        _sql("orders_of"), {"day": day, "currency": currency, "latest": latest, "status": status}
    )
    return {row[0] for row in rows}
