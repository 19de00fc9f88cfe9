"""What the soak benchmark watches every 30 s: state sizes, retained WAL, topic bytes on disk,
each component's memory and file descriptors, and freshness."""

import os
from pathlib import Path
from typing import Any

import psycopg

from onceflow.settings import Settings
from stack import postgres, supervisor

# (table, count its rows exactly): the state that must stay bounded, then business data.
TABLES = (
    ("aggregation.applied_events", True),
    ("aggregation.applied_batches", True),
    ("aggregation.late_events", True),
    ("orders.idempotency_keys", True),
    ("orders.outbox", True),
    ("orders.orders", False),
    ("aggregation.order_state", False),
)
COMPONENTS = ("postgres", "kafka", "connect", "api", "maintenance", "aggregation")


def process_tree(root: int) -> list[int]:
    """root and all its descendants (uvicorn workers, the Spark JVM under its Python driver)."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        parents.setdefault(ppid, []).append(int(stat.parent.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(parents.get(pid, []))
    return found


TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> float:
    """CPU seconds (user + system, all threads) used so far by these processes; 0 for a gone one."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def process_usage(pid: int) -> tuple[int, int]:
    """(PSS bytes, open file descriptors) of one process, 0s when it is gone. PSS splits shared
    pages among their users: Postgres' shared buffers, counted once per backend by RSS, made a
    component of many processes look as if it grew with its connections."""
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
        pss_kb = next(int(line.split()[1]) for line in rollup if line.startswith("Pss:"))
        return pss_kb * 1024, len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, ValueError, StopIteration):
        return 0, 0


def _database(settings: Settings) -> dict[str, float]:
    values: dict[str, float] = {}
    conninfo = postgres.superuser_conninfo(settings, settings.pg_database)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for table, exact in TABLES:
            rows_sql = (
                f"SELECT count(*) FROM {table}"
                if exact
                else f"SELECT n_live_tup FROM pg_stat_user_tables WHERE relid = '{table}'::regclass"
            )
            values[f"rows {table}"] = _one(conn, rows_sql)
            values[f"bytes {table}"] = _one(
                conn,
                f"SELECT coalesce((SELECT sum(pg_total_relation_size(relid)) FROM "
                f"pg_partition_tree('{table}')), pg_total_relation_size('{table}'))",
            )
        values["wal retained bytes"] = _one(
            conn,
            "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn) "
            "FROM pg_replication_slots WHERE slot_name = %s",
            settings.replication_slot,
        )
        values["freshness s"] = _one(
            conn, "SELECT extract(epoch FROM now() - max(last_event_at)) FROM analytics.freshness"
        )
    return values


def _one(conn: psycopg.Connection[Any], sql: str, *params: object) -> float:
    row = conn.execute(sql, params or None).fetchone()
    return float(row[0]) if row and row[0] is not None else 0.0


def sample(settings: Settings) -> dict[str, float]:
    """One sample of every watched value."""
    values = _database(settings)
    logs = [settings.data.kafka(node.program) for node in settings.layout.kafka]
    values["topic bytes on disk"] = float(
        sum(
            f.stat().st_size
            for log_dir in logs
            for f in log_dir.glob(f"{settings.topic}-*/*")
            if f.is_file()
        )
    )
    info = {p["name"]: p["pid"] for p in supervisor.proxy().supervisor.getAllProcessInfo()}
    for name in COMPONENTS:
        rss, fds = 0, 0
        for pid in process_tree(int(info.get(name, 0))) if info.get(name) else []:
            r, f = process_usage(pid)
            rss, fds = rss + r, fds + f
        values[f"pss {name}"], values[f"fds {name}"] = float(rss), float(fds)
    return values
