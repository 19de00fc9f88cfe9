"""Migration 0015 upgrades a v1.1 database in place: its tables and data (as the v1.1 job left
them, customer_sales and product_sales adding up currencies) become contract v1.2's, per
currency. What the recompute can reach (docs/analytics.md, "Recomputing the tables"): exact
events from the de-duplication set's journeys, and each counted order's placement and latest
event; a payment outside the journeys counts for its customer but on no day, and a cancellation
whose payment is outside them is no refund. daily_sales keeps v1.1's exact counts."""

import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from onceflow.schema import analytics
from tests.integration.aggregation.history import RANK, STATUS, Event, expected_tables, iso
from tests.integration.aggregation.tables import db_tables, oracle
from tests.integration.databases import alembic
from tests.integration.schema.scratch import scratch_database

pytestmark = pytest.mark.integration
PREVIOUS = "0014_monotonic_updated_at"
DAY = datetime(2026, 11, 20, 20, 0, tzinfo=UTC)
HOURS = timedelta(hours=1)


def order(name: str, currency: str, customer: str, *changes: tuple[str, int]) -> list[Event]:
    """An order placed at DAY, then each (event type, hours after DAY)."""
    doc: dict[str, Any] = {
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, name)),
        "customer_id": customer,
        "currency": currency,
        "status": "PLACED",
        "total_cents": 3000,
        "created_at": iso(DAY),
        "updated_at": iso(DAY),
        "items": [
            {"sku": "S-1", "quantity": 2, "unit_price_cents": 1000},
            {"sku": f"S-{name}", "quantity": 1, "unit_price_cents": 1000},
        ],
    }
    events = [Event(str(uuid.uuid4()), "OrderPlaced", DAY, doc)]
    for event_type, hours in changes:
        at = DAY + hours * HOURS
        changed = {**doc, "status": STATUS[event_type], "updated_at": iso(at)}
        events.append(Event(str(uuid.uuid4()), event_type, at, changed))
    return events


# Every event the v1.1 job counted, and which of them the de-duplication set still remembers
# with their journey (the others were forgotten, or counted before migration 0009).
PLACED = order("a", "JPY", "c-1")
SHIPPED = order("b", "USD", "c-1", ("OrderPaid", 1), ("OrderShipped", 26))
REFUNDED = order("c", "EUR", "c-1", ("OrderPaid", 2), ("OrderCancelled", 27))
FORGOTTEN_PAYMENT = order("d", "EUR", "c-2", ("OrderPaid", 3), ("OrderCancelled", 50))
OLD_SHIPPED = order("e", "USD", "c-2", ("OrderPaid", 4), ("OrderShipped", 5))
COUNTED = [*PLACED, *SHIPPED, *REFUNDED, *FORGOTTEN_PAYMENT, *OLD_SHIPPED]
JOURNEYS = [*SHIPPED, *REFUNDED, FORGOTTEN_PAYMENT[2]]
NOT_COUNTED_YET = order("f", "EUR", "c-2", ("OrderPaid", 1))


class Owner:
    """The upgraded database, read as its owner (tables.Queried)."""

    def __init__(self, dsn: str, database: str) -> None:
        self.dsn, self.database = dsn, database

    def query(self, sql: str, database: str | None = None) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.dsn) as conn:
            return conn.execute(sql).fetchall()


@pytest.fixture(scope="module")
def v11() -> Iterator[Owner]:
    """A database at 0014 with the orders, the v1.1 job's tables and bookkeeping, then 0015."""
    with scratch_database("test_0015") as settings:
        database = settings.pg_database
        down = alembic(database, "downgrade", PREVIOUS)
        assert down.returncode == 0, down.stderr
        with psycopg.connect(settings.dsn("owner")) as conn:
            fill_v11(conn)
        up = alembic(database, "upgrade", "head")
        assert up.returncode == 0, up.stderr
        yield Owner(settings.dsn("owner"), database)


def fill_v11(conn: psycopg.Connection[Any]) -> None:
    client = uuid.uuid4()
    conn.execute(
        "INSERT INTO orders.clients (id, name, scopes) VALUES (%s, 'c', ARRAY['orders:write'])",
        (client,),
    )
    for events in (PLACED, SHIPPED, REFUNDED, FORGOTTEN_PAYMENT, OLD_SHIPPED, NOT_COUNTED_YET):
        last = events[-1].order
        conn.execute(
            "INSERT INTO orders.orders VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (
                last["id"],
                last["customer_id"],
                last["currency"],
                last["status"],
                last["total_cents"],
                last["created_at"],
                last["updated_at"],
                client,
            ),
        )
        for n, item in enumerate(last["items"]):
            conn.execute(
                "INSERT INTO orders.order_items VALUES (%s, %s, %s, %s, %s)",
                (last["id"], n, item["sku"], item["quantity"], item["unit_price_cents"]),
            )
    latest = {e.order["id"]: e for e in COUNTED}  # each order's events are in order
    for e in latest.values():
        status = e.order["status"]
        conn.execute(
            "INSERT INTO analytics.order_state VALUES (%s, %s, %s, %s)",
            (e.order["id"], status, RANK[status], e.occurred_at),
        )
    conn.execute(
        "SELECT analytics.dedup_cover(ARRAY(SELECT analytics.dedup_bucket(t)"
        " FROM unnest(%s::timestamptz[]) t))",
        ([e.occurred_at for e in JOURNEYS],),
    )
    for e in JOURNEYS:
        conn.execute(
            "INSERT INTO analytics.applied_events (event_id, occurred_at, order_id, event_type)"
            " VALUES (%s, %s, %s, %s)",
            (e.event_id, e.occurred_at, e.order["id"], e.event_type),
        )
    # v1.1's tables: daily_sales per (day, currency); the others added up currencies.
    tables = expected_tables(COUNTED)
    v11_daily = (
        "orders_placed",
        "orders_paid",
        "orders_shipped",
        "orders_cancelled",
        "placed_cents",
        "paid_cents",
        "cancelled_cents",
    )
    for (day, currency), row in tables["daily_sales"].items():
        conn.execute(
            f"INSERT INTO analytics.daily_sales (day, currency, {', '.join(v11_daily)})"
            f" VALUES (%s, %s{', %s' * len(v11_daily)})",
            (day, currency, *[row.get(c, 0) for c in v11_daily]),
        )
    customers: dict[str, Counter[str]] = {}
    for (customer, _), row in tables["customer_sales"].items():
        total = customers.setdefault(customer, Counter())
        for c in ("orders_placed", "placed_cents", "paid_cents", "cancelled_cents"):
            total[c] += row[c]
    for customer, total in customers.items():
        conn.execute(
            "INSERT INTO analytics.customer_sales (customer_id, orders_placed, placed_cents,"
            " paid_cents, cancelled_cents, first_order_at, last_order_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (
                customer,
                total["orders_placed"],
                total["placed_cents"],
                total["paid_cents"],
                total["cancelled_cents"],
                DAY,
                DAY,
            ),
        )
    products: dict[str, Counter[str]] = {}
    for (sku, _), row in tables["product_sales"].items():
        products.setdefault(sku, Counter()).update(row)
    for sku, total in products.items():
        conn.execute(
            "INSERT INTO analytics.product_sales VALUES (%s, %s, %s, %s, %s)",
            (
                sku,
                total["units_placed"],
                total["placed_cents"],
                total["units_cancelled"],
                total["cancelled_cents"],
            ),
        )
    conn.execute(
        "INSERT INTO analytics.freshness VALUES ('t', %s, now(), %s)",
        (max(e.occurred_at for e in COUNTED), len(COUNTED)),
    )


def test_the_per_currency_tables_are_recomputed_from_what_the_database_knows(v11: Owner) -> None:
    actual = db_tables(v11)
    # Reachable: every event but the payment outside the journeys of the order cancelled later
    # (its refund is lost too); the other old payment counts for its customer, on no day.
    reachable = oracle([e for e in COUNTED if e is not FORGOTTEN_PAYMENT[1]])
    for table in ("customer_sales", "product_sales", "daily_product_sales", "order_status_counts"):
        assert actual[table] == reachable[table], table
    exact = oracle(COUNTED)
    for key, row in actual["daily_sales"].items():
        kept = {c: v for c, v in row.items() if c not in ("refunded_cents", "net_paid_cents")}
        expected = {c: v for c, v in exact["daily_sales"][key].items() if c in kept}
        assert kept == expected, key  # v1.1's counts, and the shipped amounts
        assert row["refunded_cents"] == reachable["daily_sales"][key]["refunded_cents"], key
        assert row["net_paid_cents"] == row["paid_cents"] - row["refunded_cents"]
    assert set(actual["daily_sales"]) == set(exact["daily_sales"])
    assert any(r["refunded_cents"] for r in actual["daily_sales"].values())


def test_order_state_knows_what_was_paid_and_cancelled(v11: Owner) -> None:
    rows = v11.query("SELECT order_id, paid, cancelled_at FROM aggregation.order_state")
    expected = {
        events[0].order["id"]: (
            any(e.event_type == "OrderPaid" for e in events if e is not FORGOTTEN_PAYMENT[1]),
            next((e.occurred_at for e in events if e.event_type == "OrderCancelled"), None),
        )
        for events in (PLACED, SHIPPED, REFUNDED, FORGOTTEN_PAYMENT, OLD_SHIPPED)
    }
    assert {r[0]: (r[1], r[2]) for r in rows} == expected


def test_the_bookkeeping_moved_to_its_schema_with_its_rows(v11: Owner) -> None:
    # Migration 0018 moves the v1.1 job's bookkeeping (partitions included) in place.
    where = (
        "SELECT relnamespace::regnamespace::text, count(*) FROM pg_class"
        " WHERE relname = 'applied_events' OR relname LIKE 'applied_events\\_%' AND relkind = 'r'"
        " GROUP BY 1"
    )
    partitions = v11.query("SELECT count(*) FROM aggregation.dedup_partitions")[0][0]
    assert partitions > 0
    assert v11.query(where) == [("aggregation", 1 + partitions)]
    assert v11.query("SELECT count(*) FROM aggregation.applied_events") == [(len(JOURNEYS),)]
    orders = len({e.order["id"] for e in COUNTED})
    assert v11.query("SELECT count(*) FROM aggregation.order_state") == [(orders,)]
    old = [t.replace("aggregation.", "analytics.", 1) for t in analytics.BOOKKEEPING]
    with psycopg.connect(v11.dsn) as conn:
        left = conn.execute(
            "SELECT t FROM unnest(%s::text[]) t WHERE to_regclass(t) IS NOT NULL", (old,)
        )
        assert left.fetchall() == []


def test_alembic_sees_no_drift_after_the_upgrade(v11: Owner) -> None:
    check = alembic(v11.database, "check")
    assert check.returncode == 0, check.stdout + check.stderr
