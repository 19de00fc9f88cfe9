"""Continuous reconciliation on the running stack (services/reconcile): orders of a closed day
and a currency only this test uses (XTS, ISO 4217's code for tests) go through the real path
(schema orders → outbox → Debezium → topic → job → daily_sales); a clean run finds no difference
there; a corrupted daily_sales row, and separately a deleted one, is reported as exactly that
difference, naming the orders; the alert fires in the real Prometheus; the row put back, the
next run is clean again."""

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from onceflow.contract import SCHEMA_VERSION, EventType, OrderStatus
from onceflow.settings import Settings, get_settings
from onceflow.settings.reconcile import ReconcileSettings
from services.ops.cli import app
from services.reconcile import state
from services.reconcile.run import Named, Report, run_once
from stack.waiting import wait_for
from tests.integration.observability.prom import api, query, value

pytestmark = pytest.mark.integration
CURRENCY = "XTS"
DAY = datetime.now(UTC).date() - timedelta(days=3)  # closed, within the days checked and kept
CONFIG = ReconcileSettings(reconcile_job_wait_s=120, reconcile_named_orders=10_000)
Conn = psycopg.Connection[tuple[Any, ...]]
COLUMNS = (
    "orders_placed, orders_paid, orders_shipped, orders_cancelled, placed_cents, paid_cents, "
    "shipped_cents, cancelled_cents, refunded_cents"
)


def _at(hour: int) -> datetime:
    return datetime.combine(DAY, datetime.min.time(), UTC) + timedelta(hours=hour)


def _emit(owner: Conn, order_id: uuid.UUID, event_type: EventType, at: datetime) -> None:
    owner.execute(
        "SELECT orders.emit_event(%s, %s, %s, o.id, orders.order_json(o, orders.items_json(o.id)),"
        " %s, NULL) FROM orders.orders o WHERE o.id = %s",
        (uuid.uuid4(), event_type, SCHEMA_VERSION, at, order_id),
    )


def _order(owner: Conn, cents: int, hour: int, *changes: tuple[EventType, OrderStatus]) -> str:
    """An order placed at `hour` of DAY, then changed an hour apart, each change with its event,
    written as orders.place_order and transition_order do (their clock is now(), not DAY)."""
    order_id = uuid.uuid7() if hasattr(uuid, "uuid7") else uuid.uuid4()
    client = owner.execute("SELECT id FROM orders.clients ORDER BY created_at LIMIT 1").fetchone()
    assert client is not None
    with owner.transaction():
        owner.execute(
            "INSERT INTO orders.orders (id, customer_id, currency, status, total_cents, "
            "created_at, updated_at, client_id) VALUES (%s, 'c-reconcile', %s, 'PLACED', %s, "
            "%s, %s, %s)",
            (order_id, CURRENCY, cents, _at(hour), _at(hour), client[0]),
        )
        owner.execute(
            "INSERT INTO orders.order_items (order_id, line_no, sku, quantity, unit_price_cents)"
            " VALUES (%s, 1, 'RECONCILE-1', 1, %s)",
            (order_id, cents),
        )
        _emit(owner, order_id, EventType.PLACED, _at(hour))
    for step, (event_type, status) in enumerate(changes, 1):
        with owner.transaction():
            owner.execute(
                "UPDATE orders.orders SET status = %s, updated_at = %s WHERE id = %s",
                (status, _at(hour) + timedelta(minutes=step), order_id),
            )
            _emit(owner, order_id, event_type, _at(hour) + timedelta(minutes=step))
    return str(order_id)


def _ours(report: Report) -> list[Named]:
    return [d for d in report.differences if (d.day, d.currency) == (DAY, CURRENCY)]


def _run(settings: Settings) -> Report:
    """A run of DAY that compared all three sources: after the stack's own run if one holds the
    lock, and again while the topic is still being read (a first read of a long topic carries
    on over runs) or the job has not applied what was read."""
    done: list[Report] = []

    def ran() -> bool:
        report = run_once(settings=settings, config=CONFIG, since=DAY, until=DAY)
        done[:] = [] if report is None else [report]
        return bool(done) and done[0].compared == ("orders", "topic", "analytics")

    wait_for(ran, what=f"a reconciliation of {DAY} comparing all three", timeout=180, interval=1)
    return done[0]


@pytest.fixture(scope="module")
def settings() -> Settings:
    return get_settings()


@pytest.fixture(scope="module")
def owner(settings: Settings) -> Iterator[Conn]:
    with psycopg.connect(settings.dsn("owner"), autocommit=True) as conn:
        yield conn


@pytest.fixture(scope="module")
def orders(owner: Conn, settings: Settings) -> dict[str, str]:
    """Three orders of DAY in XTS (paid; paid then cancelled: a refund; placed), counted."""
    made = {
        "paid": _order(owner, 1200, 9, (EventType.PAID, OrderStatus.PAID)),
        "refunded": _order(
            owner,
            3400,
            10,
            (EventType.PAID, OrderStatus.PAID),
            (EventType.CANCELLED, OrderStatus.CANCELLED),
        ),
        "placed": _order(owner, 560, 11),
    }
    # Until the job has counted them: a run finds nothing on our day and currency.
    found: list[Report] = []

    def clean() -> bool:
        found[:] = [_run(settings)]
        return not _ours(found[0]) and DAY in found[0].active_days

    wait_for(clean, what=f"a clean reconciliation of {DAY} {CURRENCY}", timeout=120, interval=2)
    return made


def _row(owner: Conn) -> tuple[Any, ...]:
    row = owner.execute(
        f"SELECT {COLUMNS} FROM analytics.daily_sales WHERE day = %s AND currency = %s",
        (DAY, CURRENCY),
    ).fetchone()
    assert row is not None
    return tuple(row)


def _prometheus_differences() -> float:
    samples = query('onceflow_reconcile_differences{job="maintenance"}')
    return value(samples[0]) if samples else -1.0


def _alert_firing_with(differences: float) -> bool:
    alerts = api("/api/v1/alerts")["alerts"]
    return any(
        a["labels"]["alertname"] == "ReconciliationDifferences"
        and a["state"] == "firing"
        and float(a["value"]) == differences
        for a in alerts
    )


def test_a_clean_day_has_no_difference(orders: dict[str, str], settings: Settings) -> None:
    report = _run(settings)
    assert _ours(report) == []
    assert report.days_checked == 1
    assert (report.first_day, report.last_day) == (DAY, DAY)


def test_a_corrupted_row_is_exactly_that_difference_and_the_alert_fires(
    orders: dict[str, str], owner: Conn, settings: Settings
) -> None:
    assert _ours(_run(settings)) == []
    before = state.current(settings).differences  # other days' open differences, if any
    paid_cents = _row(owner)[5]
    owner.execute(
        "UPDATE analytics.daily_sales SET paid_cents = paid_cents + 7 "
        "WHERE day = %s AND currency = %s",
        (DAY, CURRENCY),
    )
    try:
        (found,) = _ours(_run(settings))
        assert (found.event_type, found.measure) == (EventType.PAID, "cents")
        assert (found.orders, found.topic, found.analytics) == (None, paid_cents, paid_cents + 7)
        assert {orders["paid"], orders["refunded"]} <= set(found.order_ids)
        assert orders["placed"] not in found.order_ids
        cli = CliRunner().invoke(
            app, ["reconcile", "--since", DAY.isoformat(), "--until", DAY.isoformat(), "--json"]
        )
        assert cli.exit_code == 0, cli.output
        shown = [d for d in json.loads(cli.output)["differences"] if d["currency"] == CURRENCY]
        assert [(d["measure"], d["analytics"]) for d in shown] == [("cents", paid_cents + 7)]
        # It names at most ONCEFLOW_RECONCILE_NAMED_ORDERS of the orders involved.
        assert set(shown[0]["order_ids"]) <= set(found.order_ids)
        assert shown[0]["involved"] == found.involved
        # The stack's Prometheus scrapes the series from the maintenance process (which reads
        # the last reports), and the rule fires with one difference more than before.
        expected = before + 1
        wait_for(
            lambda: _prometheus_differences() == expected and _alert_firing_with(expected),
            what=f"ReconciliationDifferences firing with {expected} in Prometheus",
            timeout=45,
            interval=1,
        )
    finally:  # the value it had (another writer may have changed the row meanwhile)
        owner.execute(
            "UPDATE analytics.daily_sales SET paid_cents = %s WHERE day = %s AND currency = %s",
            (paid_cents, DAY, CURRENCY),
        )
        # Store DAY's clean result whatever failed above: no difference (nor the critical
        # alert, which has no `for:`) is left to the tests after this one.
        clean = _run(settings)
    assert _ours(clean) == []
    wait_for(
        lambda: _prometheus_differences() == before,
        what="the difference gone from Prometheus",
        timeout=45,
        interval=1,
    )


def test_a_deleted_row_is_a_difference_of_each_of_its_values(
    orders: dict[str, str], owner: Conn, settings: Settings
) -> None:
    row = _row(owner)
    owner.execute(
        "DELETE FROM analytics.daily_sales WHERE day = %s AND currency = %s", (DAY, CURRENCY)
    )
    try:
        found = _ours(_run(settings))
    finally:
        owner.execute(
            f"INSERT INTO analytics.daily_sales (day, currency, {COLUMNS}) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (DAY, CURRENCY, *row),
        )
        # The run above stored DAY's differences: replace them by a clean result now, before
        # any assertion below can fail and leave them (and the alert) to later tests.
        clean = _run(settings)
    names = [c.strip() for c in COLUMNS.split(",")]
    said = dict(zip(names, row, strict=True))
    expected = {
        (EventType.PLACED, "events"): said["orders_placed"],
        (EventType.PAID, "events"): said["orders_paid"],
        (EventType.CANCELLED, "events"): said["orders_cancelled"],
        (EventType.PLACED, "cents"): said["placed_cents"],
        (EventType.PAID, "cents"): said["paid_cents"],
        (EventType.CANCELLED, "cents"): said["cancelled_cents"],
        (EventType.CANCELLED, "refunded_cents"): said["refunded_cents"],
    }
    assert {(d.event_type, d.measure): d.topic for d in found} == expected
    assert all(d.analytics == 0 for d in found)
    placed = next(d for d in found if (d.event_type, d.measure) == (EventType.PLACED, "events"))
    assert placed.orders == said["orders_placed"]
    assert set(orders.values()) <= set(placed.order_ids)
    refunds = next(d for d in found if d.measure == "refunded_cents")
    assert orders["refunded"] in refunds.order_ids
    assert orders["paid"] not in refunds.order_ids
    assert _ours(clean) == []


def test_bad_days_are_refused_in_a_sentence() -> None:
    runner = CliRunner()
    shown = runner.invoke(app, ["reconcile", "--since", "yesterday"])
    assert shown.exit_code == 1
    assert "--since 'yesterday' is not a day: give it as YYYY-MM-DD" in shown.output
    today = date.today().isoformat()
    shown = runner.invoke(app, ["reconcile", "--until", "2999-01-01"])
    assert shown.exit_code == 1
    assert "2999-01-01 is not closed yet" in shown.output, today
