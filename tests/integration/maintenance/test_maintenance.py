"""Maintenance on a scratch database: it removes exactly what is past its window, only once at
a time, and a dry run removes nothing."""

import itertools
import json
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from onceflow.settings import Settings
from services.maintenance.runner import LOCK_KEY, Removed, run_once
from services.maintenance.tasks import TASKS, Windows
from services.orders.entrypoints.app import create_app
from tests.integration.clients import bearer, new_client
from tests.integration.databases import create_database, drop_database

pytestmark = pytest.mark.integration
WINDOWS = Windows(idempotency_keys=timedelta(hours=24), dedup=timedelta(days=8))
ORDER = {
    "customer_id": "c-1",
    "currency": "EUR",
    "items": [{"sku": "A", "quantity": 1, "unit_price_cents": 5}],
}
Conn = psycopg.Connection[tuple[Any, ...]]


@pytest.fixture(scope="module")
def scratch() -> Iterator[Settings]:
    database = f"test_maintenance_{uuid.uuid4().hex[:8]}"
    try:
        yield create_database(database)
    finally:
        drop_database(database)


@pytest.fixture
def owner(scratch: Settings) -> Iterator[Conn]:
    with psycopg.connect(scratch.dsn("owner"), autocommit=True) as conn:
        yield conn


def _run(scratch: Settings, *, dry_run: bool = False) -> dict[str, int]:
    removed = run_once(settings=scratch, windows=WINDOWS, batch=2, dry_run=dry_run)
    assert removed is not None
    return {item.task: item.rows for item in removed}


def _ledger(owner: Conn, query_id: str, batch_id: int, age: str) -> None:
    owner.execute(
        "INSERT INTO aggregation.applied_batches (query_id, batch_id, topic, offsets, records, "
        "events_new, duplicates, dead_letters, committed_at) "
        "VALUES (%s, %s, 't', %s, 0, 0, 0, 0, now() - %s::interval)",
        (query_id, batch_id, json.dumps({}), age),
    )


def test_expired_keys_go_and_a_key_inside_24h_still_replays(scratch: Settings, owner: Conn) -> None:
    with TestClient(create_app(scratch), headers=bearer(new_client(scratch))) as client:
        fresh, old = f"fresh-{uuid.uuid4()}", f"old-{uuid.uuid4()}"
        for key in (fresh, old):
            assert (
                client.post("/orders", json=ORDER, headers={"Idempotency-Key": key}).status_code
                == 201
            )
        owner.execute(
            "UPDATE orders.idempotency_keys SET created_at = now() - interval '25 hours' "
            "WHERE key = %s",
            (old,),
        )
        assert _run(scratch, dry_run=True)["idempotency_keys"] == 1
        assert owner.execute("SELECT count(*) FROM orders.idempotency_keys").fetchone() == (2,)
        assert _run(scratch)["idempotency_keys"] == 1
        keys = owner.execute("SELECT key FROM orders.idempotency_keys").fetchall()
        assert keys == [(fresh,)]
        replay = client.post("/orders", json=ORDER, headers={"Idempotency-Key": fresh})
        assert replay.status_code == 201
        assert replay.headers["Idempotent-Replayed"] == "true"


def test_the_ledger_keeps_recent_rows_and_each_querys_newest(
    scratch: Settings, owner: Conn
) -> None:
    query, other = f"q-{uuid.uuid4()}", f"q-{uuid.uuid4()}"
    for batch_id in range(5):
        _ledger(owner, query, batch_id, "9 days")
    _ledger(owner, query, 5, "1 day")
    _ledger(owner, other, 0, "30 days")  # old, but its query's newest: a replay needs it
    assert _run(scratch)["ledger"] == 5
    rows = owner.execute(
        "SELECT query_id = %s, batch_id FROM aggregation.applied_batches ORDER BY 1, 2", (query,)
    ).fetchall()
    assert rows == [(False, 0), (True, 5)]


def test_staged_rows_of_queries_that_no_longer_run_go_after_the_window(
    scratch: Settings, owner: Conn
) -> None:
    # Batches a running query stages are folded (and deleted) within seconds; rows older than
    # the window belong to a query that stopped (a discarded checkpoint, a finished backfill).
    ages = ("7 hours", "7 hours", "7 hours", "5 hours")
    for offset, (age, error) in enumerate(itertools.product(ages, (None, "value is not JSON"))):
        owner.execute(
            "INSERT INTO aggregation.staged_records (query_id, batch_id, kafka_partition,"
            " kafka_offset, error, staged_at) VALUES ('gone', %s, 0, %s, %s, now() - %s::interval)",
            (offset // 2, offset, error, age),
        )
    assert _run(scratch, dry_run=True)["staged_records"] == 6
    assert owner.execute("SELECT count(*) FROM aggregation.staged_records").fetchone() == (8,)
    assert _run(scratch)["staged_records"] == 6
    left = owner.execute("SELECT DISTINCT batch_id FROM aggregation.staged_records").fetchall()
    assert left == [(3,)]
    owner.execute("DELETE FROM aggregation.staged_records")


def test_only_one_run_at_a_time(scratch: Settings) -> None:
    with psycopg.connect(scratch.dsn("app"), autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (LOCK_KEY,))
        assert run_once(settings=scratch, windows=WINDOWS, batch=10) is None
    assert run_once(settings=scratch, windows=WINDOWS, batch=10) == [
        Removed(task.name, 0) for task in TASKS
    ]


def _partitions_ahead(owner: Conn) -> list[tuple[str, timedelta]]:
    return owner.execute(
        "SELECT name, upper_bound - lower_bound FROM aggregation.dedup_partitions "
        "WHERE lower_bound > now() ORDER BY lower_bound"
    ).fetchall()


def test_a_new_partition_width_replaces_the_empty_partitions_made_ahead(
    scratch: Settings, owner: Conn
) -> None:
    run_once(settings=scratch, windows=WINDOWS, batch=10)
    ahead = _partitions_ahead(owner)
    assert [width for _, width in ahead] == [timedelta(days=1)] * 2
    holding = ahead[-1][0]  # an id from a clock ahead of ours: its partition must stay
    owner.execute(
        f'INSERT INTO aggregation."{holding}" SELECT gen_random_uuid(), lower_bound '
        "FROM aggregation.dedup_partitions WHERE name = %s",
        (holding,),
    )
    minutes = Windows(
        idempotency_keys=WINDOWS.idempotency_keys,
        dedup=WINDOWS.dedup,
        dedup_partition=timedelta(minutes=1),
    )
    try:
        run_once(settings=scratch, windows=minutes, batch=10)
        assert _partitions_ahead(owner) == [(holding, timedelta(days=1))]
        width = owner.execute("SELECT width FROM aggregation.dedup_state").fetchone()
        assert width == (timedelta(minutes=1),)
    finally:
        run_once(settings=scratch, windows=WINDOWS, batch=10)
