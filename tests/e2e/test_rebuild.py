"""`onceflow-ops analytics rebuild` while orders flow through the API and the job runs
(docs/analytics.md, "Rebuilding a table while the stream runs"): the rebuilt tables equal the
per-currency oracle of the events (tests/e2e/exactly_once.py), no event is missed or counted
twice across the swap, the job is never stopped and keeps counting after it; --dry-run changes
nothing; an unknown table is refused.

The tables are first rebuilt once before the baseline, so what a rebuild cannot reach of other
tests' history (records produced to the topic without an order in the orders schema) is settled
before the oracle's baseline and the swap under test changes only what the test broke."""

import json
import subprocess
import sys
import time
import uuid
from typing import Any

import httpx
import psycopg
import pytest
from typer.testing import CliRunner

from onceflow import recompute
from onceflow.settings import Settings
from services.ops import analytics_rebuild
from services.ops.cli import app
from stack import supervisor
from stack.waiting import wait_for
from tests.e2e import analytics, exactly_once
from tests.e2e.writer import Writer

pytestmark = pytest.mark.integration
JOB = "aggregation"


def ops(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "services.ops.cli", "analytics", "rebuild", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def rebuild(*args: str) -> dict[str, Any]:
    done = ops(*args, "--json")
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def placed(conn: analytics.Conn) -> int:
    row = conn.execute(
        "SELECT coalesce(sum(orders_placed), 0) FROM analytics.daily_sales"
    ).fetchone()
    assert row is not None
    return int(row[0])


def swap_with_folds_meanwhile(settings: Settings, conn: analytics.Conn) -> dict[str, Any]:
    """A rebuild of every table (in-process) that waits, between its snapshot and its lock,
    until the job folded a batch of the flowing orders: the swap must keep what that fold
    added (the path a rebuild takes whenever the job commits during its snapshot)."""

    def a_fold_meanwhile() -> None:
        before = placed(conn)
        wait_for(
            lambda: placed(conn) > before, what="a batch folded after the snapshot", timeout=120
        )

    report = analytics_rebuild.rebuild(
        settings.dsn("owner"),
        list(recompute.TABLES),
        dry_run=False,
        after_snapshot=a_fold_meanwhile,
    )
    return {"tables": [vars(t) for t in report.tables]}


def changes(report: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    return {t["table"]: (t["missing"], t["extra"], t["different"]) for t in report["tables"]}


def corrupt(conn: analytics.Conn, customer: str, sku: str, ghost: str) -> dict[str, Any]:
    """Break one row of each kind the swap repairs: a customer's sum (different), a row no
    event made (extra), a SKU's day deleted (missing); returns what the rows now hold."""
    with conn.transaction():
        conn.execute(
            "UPDATE analytics.customer_sales SET placed_cents = placed_cents + 7"
            " WHERE customer_id = %s",
            (customer,),
        )
        conn.execute(
            "INSERT INTO analytics.customer_sales (customer_id, currency, orders_placed)"
            " VALUES (%s, 'EUR', 1)",
            (ghost,),
        )
        conn.execute("DELETE FROM analytics.daily_product_sales WHERE sku = %s", (sku,))
    return state(conn, customer, sku, ghost)


def repaired_day(found: dict[str, tuple[int, int, int]]) -> bool:
    """Whether the rebuild finds the sku's deleted day: missing, or different when the job folded
    one of the flowing orders for that sku after the DELETE (the row is back, holding only the
    new orders: a race of the stream, not a fault)."""
    missing, _extra, different = found["daily_product_sales"]
    return missing + different >= 1


def state(conn: analytics.Conn, customer: str, sku: str, ghost: str) -> dict[str, Any]:
    return {
        "customer": analytics.customer_sales(conn, [customer]),
        "ghost": analytics.customer_sales(conn, [ghost]),
        "sku days": analytics.daily_product_sales(conn, [sku]),
    }


def oids(conn: analytics.Conn) -> list[int]:
    """The tables' OIDs, which the job's prepared statements name: the swap keeps them."""
    rows = conn.execute(
        "SELECT to_regclass(t)::oid FROM unnest(%s::text[]) t",
        ([f"analytics.{t}" for t in recompute.TABLES],),
    ).fetchall()
    return [int(oid) for (oid,) in rows]


def job() -> tuple[int, int]:
    info = supervisor.proxy().supervisor.getProcessInfo(JOB)
    assert info["statename"] == "RUNNING"
    return int(info["pid"]), int(info["start"])


def test_a_rebuild_while_orders_flow_counts_every_event_once(
    api: httpx.Client, analyst: analytics.Conn, settings: Settings, writer: Writer
) -> None:
    analytics.barrier(api, analyst)
    # Settle what earlier tests left that a rebuild cannot reach (in-process: no CLI start-up).
    analytics_rebuild.rebuild(settings.dsn("owner"), list(recompute.TABLES), dry_run=False)
    before = exactly_once.baseline(settings)
    running, tables = job(), oids(analyst)
    writer.start()
    writer.wait_more()
    (customer, _), *_ = dict(writer.expected.customers)  # a copy: the writer keeps adding
    (sku, _), *_ = dict(writer.expected.products)
    wait_for(
        lambda: bool(analytics.customer_sales(analyst, [customer])),
        what="the writer's first customer counted",
        timeout=120,
    )
    wait_for(
        lambda: bool(analytics.daily_product_sales(analyst, [sku])),
        what="the writer's first sku counted",
        timeout=120,
    )
    ghost = f"rebuild-ghost-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(settings.dsn("owner"), autocommit=True) as owner:
        broken = corrupt(owner, customer, sku, ghost)
        try:
            dry = rebuild("--dry-run", "--tables", "customer_sales,daily_product_sales")
            assert [t["table"] for t in dry["tables"]] == [
                "customer_sales",
                "daily_product_sales",
            ]
            found = changes(dry)
            assert found["customer_sales"][1:] >= (1, 1), found  # the ghost, the customer's sum
            assert repaired_day(found), found  # the deleted day of the sku
            assert state(owner, customer, sku, ghost) == broken, "the dry run changed a table"

            writer.wait_more()  # orders keep flowing into the swap
            swapped = rebuild()
        except BaseException:
            # Leave no corrupted row to the tests after this one (their oracles read these
            # tables): repair in-process, then report the failure.
            only = ["customer_sales", "daily_product_sales"]
            analytics_rebuild.rebuild(settings.dsn("owner"), only, dry_run=False)
            raise
        swapped_at = time.time()
        applied = changes(swapped)
        assert applied["customer_sales"][1:] >= (1, 1), applied
        assert repaired_day(applied), applied
        assert not state(owner, customer, sku, ghost)["ghost"]

    meanwhile = swap_with_folds_meanwhile(settings, analyst)
    assert any(t["folded_since_snapshot"] for t in meanwhile["tables"]), meanwhile
    # The tables were whole before it: the swap keeps the fold and changes nothing else.
    assert set(changes(meanwhile).values()) == {(0, 0, 0)}, meanwhile

    writer.wait_more()  # the API kept taking writes after the swap
    expected = writer.finish()
    exactly_once.assert_counted_once(settings, expected, before, timeout=180)
    assert job() == running, "the aggregation job was restarted"
    assert oids(analyst) == tables, "a table was replaced, not rewritten in place"
    counted_at = analyst.execute("SELECT max(last_applied_at) FROM analytics.freshness").fetchone()
    assert counted_at is not None
    assert counted_at[0].timestamp() > swapped_at, "the job counted nothing after the swap"


def test_an_unknown_table_is_refused_in_a_sentence() -> None:
    done = CliRunner().invoke(app, ["analytics", "rebuild", "--tables", "daily_sales,customers"])
    assert done.exit_code == 1
    assert "unknown table 'customers'" in done.stderr
    assert "daily_sales, customer_sales, product_sales, daily_product_sales" in done.stderr
    assert done.exception is None or isinstance(done.exception, SystemExit)


def test_a_swap_past_its_lock_budget_gives_up_and_changes_nothing(settings: Settings) -> None:
    ghost = f"rebuild-ghost-{uuid.uuid4().hex[:8]}"
    only = ["customer_sales"]
    with psycopg.connect(settings.dsn("owner"), autocommit=True) as owner:
        owner.execute(
            "INSERT INTO analytics.customer_sales (customer_id, currency, orders_placed)"
            " VALUES (%s, 'EUR', 1)",
            (ghost,),
        )
        try:
            with pytest.raises(analytics_rebuild.RebuildError, match="past its budget"):
                analytics_rebuild.rebuild(
                    settings.dsn("owner"), only, dry_run=False, lock_budget=0.001
                )
            assert analytics.customer_sales(owner, [ghost]), "the refused swap changed the table"
            analytics_rebuild.rebuild(settings.dsn("owner"), only, dry_run=False)
            assert not analytics.customer_sales(owner, [ghost])
        finally:  # never leave the ghost row to later tests
            owner.execute("DELETE FROM analytics.customer_sales WHERE customer_id = %s", (ghost,))
