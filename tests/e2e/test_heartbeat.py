"""The slot advances while no order changes: Debezium's heartbeat query moves it (contract §5)."""

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from onceflow.paths import ROOT
from onceflow.settings import Settings
from stack.waiting import wait_for

MB = 1024 * 1024
# After the heartbeat's insert is decoded, the connector commits its LSN with its next heartbeat
# record, pgjdbc reports it to Postgres at its next status update (Debezium's
# status.update.interval.ms, 10 s), and Postgres moves the slot's restart_lsn at its next
# running-transactions record (at most every 15 s, LOG_SNAPSHOT_INTERVAL_MS). Measured: ~20 s
# on an idle machine; the bound leaves room for a loaded one.
STATUS_UPDATE_S = 10
SNAPSHOT_INTERVAL_S = 15
LOADED_MACHINE_S = 20
RETAINED = (
    "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint "
    "FROM pg_replication_slots WHERE slot_name = %s"
)


def _heartbeat_interval_s() -> float:
    config = json.loads((ROOT / "connect" / "orders-outbox.json").read_text())
    return int(config["heartbeat.interval.ms"]) / 1000


@pytest.fixture
def owner(settings: Settings) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
    with psycopg.connect(settings.dsn("owner"), autocommit=True) as conn:
        conn.execute("CREATE TABLE public.test_wal_filler (filler text)")
        try:
            yield conn
        finally:
            conn.execute("DROP TABLE public.test_wal_filler")


def test_wal_of_other_tables_is_released_without_order_changes(
    owner: psycopg.Connection[tuple[Any, ...]], settings: Settings
) -> None:
    owner.execute(
        "INSERT INTO public.test_wal_filler SELECT repeat(md5(i::text), 32) "
        "FROM generate_series(1, 70000) i"
    )
    retained = owner.execute(RETAINED, (settings.replication_slot,)).fetchone()
    assert retained is not None
    assert retained[0] >= 64 * MB

    def released() -> bool:
        row = owner.execute(RETAINED, (settings.replication_slot,)).fetchone()
        return row is not None and row[0] < 16 * MB

    wait_for(
        released,
        what="the slot to release the filler's WAL",
        timeout=2 * _heartbeat_interval_s()
        + STATUS_UPDATE_S
        + SNAPSHOT_INTERVAL_S
        + LOADED_MACHINE_S,
    )
