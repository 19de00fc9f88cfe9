"""The fold alone (issue 28): what Postgres spends folding backfill batches, statement by
statement, with the bookkeeping's order ids as `text` (A) and as native `uuid` (B).

    .venv/bin/python -m bench.fold_bench --events 500000 --batch 250000 --rounds 3

No Kafka and no Spark: generated contract-section-4 events (bench.backfill_topic's, the same
for the same N) become the staging area's rows as the job stages them (bench.floor.staged_row:
the columns of spark_jobs/aggregation/staging.py), and each variant's scratch database is a
copy of a template migrated to head (B: then with its order ids converted to uuid, `UUID_KEYS`).
Each run copies a fresh database from its template, then, batch after batch, COPYs the batch
into aggregation.staged_records and folds it in one transaction as sink.py does (lock_writers,
the temp tables, unstage.load, merge.merge, release, the ledger row), timing every statement
and the backend's CPU (the kernel's count: /proc). Runs alternate A, B, B, A, … and the report
gives per-batch medians: the fold's wall time and CPU, and each statement's wall time.
"""

import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, LiteralString

import psycopg
import typer

from bench.backfill_topic import events
from bench.floor import TABLE_COLUMNS, Row, batches, staged_row
from bench.soak_sample import cpu_seconds
from onceflow.settings import get_settings
from spark_jobs.aggregation import merge, staging, unstage
from spark_jobs.aggregation.sink import BatchResult, ledger_row
from spark_jobs.aggregation.statements import FOLDER, sql
from stack import postgres
from tests.integration.databases import create_database, drop_database

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

TOPIC = "orders.events"
PARTITIONS = 3
QUERY_ID = "fold_bench"
# Variant B's schema: the bookkeeping's order ids as uuid. The views over the two tables are
# dropped (the bench COPYs into the staging area itself, and reads no view).
UUID_KEYS = """
DROP VIEW IF EXISTS aggregation.staging_inbox;
DROP VIEW IF EXISTS analytics.order_status_counts;
ALTER TABLE aggregation.staged_records ALTER COLUMN order_id TYPE uuid USING order_id::uuid;
ALTER TABLE aggregation.order_state ALTER COLUMN order_id TYPE uuid USING order_id::uuid;
ALTER TABLE aggregation.applied_events ALTER COLUMN order_id TYPE uuid USING order_id::uuid;
"""
# The fold's temp tables whose order id column follows the variant's.
_WITH_ORDER_ID = (staging.EVENTS, merge.NEW, staging.REFUNDS)


def temp_tables(order_id_type: str) -> list[staging.StagedTable]:
    """The temp tables holding an order id, with it as `order_id_type`."""
    return [
        replace(
            table,
            columns=tuple(
                replace(c, pg_type=order_id_type) if c.name == "order_id" else c
                for c in table.columns
            ),
        )
        for table in _WITH_ORDER_ID
    ]


@dataclass(frozen=True)
class Variant:
    """A or B: the type of its order ids, what makes its template from a migrated database,
    and the template (named per run)."""

    name: str
    order_id_type: str
    convert: LiteralString | None
    template: str = ""


VARIANTS = (Variant("A(text)", "text", None), Variant("B(uuid)", "uuid", UUID_KEYS))


def statement_name(query: str, names: dict[str, str]) -> str:
    """The sql/<name>.sql file a statement comes from, else its first words."""
    return names.get(query) or " ".join(query.split()[:4])


@dataclass
class Timings:
    """Wall seconds per statement name, and the backend's CPU seconds, of one fold."""

    statements: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    wall: float = 0.0
    cpu: float = 0.0


class TimedCursor(psycopg.Cursor[Any]):
    """A cursor that adds each statement's wall time to `timings.statements`."""

    timings: Timings
    names: dict[str, str]

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> "TimedCursor":
        started = time.perf_counter()
        try:
            return super().execute(query, params, **kwargs)
        finally:
            name = statement_name(str(query), self.names)
            self.timings.statements[name] += time.perf_counter() - started


def staged_batches(n: int, size: int) -> list[list[Row]]:
    """About n generated events as the staging area's rows (partition i % 3), in batches."""
    offsets = [0] * PARTITIONS
    rows: list[Row] = []
    for i, event in enumerate(events(n)):
        record, partition = event.record(), i % PARTITIONS
        headers: Any = record.headers
        rows.append(
            staged_row(
                TOPIC,
                partition,
                offsets[partition],
                None,
                record.key,
                record.value,
                headers,
            )
        )
        offsets[partition] += 1
    return list(batches(rows, size))


def make_template(name: str, convert: LiteralString | None) -> None:
    """A database migrated to head (then `convert`ed), to copy runs from."""
    create_database(name)
    if convert is not None:
        with psycopg.connect(postgres.superuser_conninfo(get_settings(), name)) as conn:
            conn.execute(convert)


@contextmanager
def copy_of(template: str) -> Iterator[str]:
    """A fresh database copied from `template`, dropped after."""
    name = f"fold_run_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres.superuser_conninfo(get_settings()), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    try:
        yield name
    finally:
        drop_database(name)


def stage(conn: psycopg.Connection[Any], batch_id: int, rows: Sequence[Row]) -> None:
    """COPY one batch into the staging area, as the executors leave it."""
    columns = ", ".join(TABLE_COLUMNS)
    statement = f"COPY {staging.AREA} ({columns}) FROM STDIN"
    with conn.cursor() as cur, cur.copy(statement) as copy:
        for row in rows:
            copy.write_row((QUERY_ID, batch_id, *row))
    conn.commit()


def fold(
    conn: psycopg.Connection[Any], batch_id: int, rows: Sequence[Row], variant: Variant
) -> Timings:
    """Fold one staged batch as sink.py does, timed."""
    timings = Timings()
    names = {sql(p.stem): p.stem for p in FOLDER.glob("*.sql")}
    dead = sum(1 for row in rows if row[-1] is not None)
    counts = staging.Counts(len(rows), dead)
    pid = conn.info.backend_pid
    cpu0, started = cpu_seconds([pid]), time.perf_counter()
    with conn.transaction():
        cur = conn.cursor()
        assert isinstance(cur, TimedCursor)
        cur.timings, cur.names = timings, names
        cur.execute("SELECT aggregation.lock_writers()")
        for table in temp_tables(variant.order_id_type):
            cur.execute(table.create())
        merge.prepare(cur)
        unstage.load(cur, QUERY_ID, batch_id, counts)
        merged = merge.merge(cur, TOPIC, query_id=QUERY_ID, batch_id=batch_id)
        unstage.release(cur, QUERY_ID, batch_id)
        # The ledger row's cost does not depend on its counts: only the batch's offsets.
        result = BatchResult(QUERY_ID, batch_id, records=merged.records, offsets=merged.offsets)
        cur.execute(sql("ledger_insert"), ledger_row(result, TOPIC))
    timings.wall = time.perf_counter() - started
    timings.cpu = cpu_seconds([pid]) - cpu0
    if merged.events_new + merged.dead_letters == 0:
        raise RuntimeError(f"batch {batch_id} of {variant.name} folded nothing")
    return timings


def run(variant: Variant, staged: Sequence[Sequence[Row]]) -> list[Timings]:
    """Every batch, staged then folded, in a fresh copy of the variant's template."""
    with copy_of(variant.template) as database:
        conninfo = postgres.superuser_conninfo(get_settings(), database)
        with psycopg.connect(conninfo, cursor_factory=TimedCursor) as conn:
            out = []
            for batch_id, rows in enumerate(staged):
                stage(conn, batch_id, rows)
                out.append(fold(conn, batch_id, rows, variant))
            return out


def alternate(variants: Sequence[Variant], rounds: int) -> Iterator[Variant]:
    """A, B, B, A, A, B, …: each variant first in half of the rounds."""
    for r in range(rounds):
        yield from (variants if r % 2 == 0 else reversed(variants))


def median_of(runs: Sequence[Sequence[Timings]], batch: int) -> Timings:
    """The per-statement, wall and CPU medians of one batch over runs."""
    folds = [r[batch] for r in runs]
    names = dict.fromkeys(n for t in folds for n in t.statements)
    return Timings(
        statements={n: statistics.median(t.statements.get(n, 0.0) for t in folds) for n in names},
        wall=statistics.median(t.wall for t in folds),
        cpu=statistics.median(t.cpu for t in folds),
    )


def report(results: dict[str, list[list[Timings]]], top: int = 8) -> str:
    """Per batch: each variant's median fold (wall, CPU) and its largest statements, B ÷ A."""
    (a, runs_a), (b, runs_b) = results.items()
    lines = []
    for batch in range(len(runs_a[0])):
        ma, mb = median_of(runs_a, batch), median_of(runs_b, batch)
        lines.append(
            f"batch {batch}: fold wall {a} {ma.wall:.2f}s, {b} {mb.wall:.2f}s"
            f" (B/A {mb.wall / ma.wall:.2f}); backend CPU {a} {ma.cpu:.2f}s, {b} {mb.cpu:.2f}s"
            f" (B/A {mb.cpu / ma.cpu:.2f})"
        )
        largest = sorted(ma.statements, key=lambda n: -ma.statements[n])[:top]
        for name in largest:
            sa, sb = ma.statements[name], mb.statements.get(name, 0.0)
            lines.append(f"  {name:<40} {sa:7.2f}s {sb:7.2f}s  B/A {sb / sa if sa else 0:.2f}")
    return "\n".join(lines)


@app.command()
def main(events: int = 500_000, batch: int = 250_000, rounds: int = 3) -> None:
    """A/B of the fold with text and uuid order ids, alternating, medians per batch."""
    t0 = time.monotonic()
    staged = staged_batches(events, batch)
    print(
        f"staged rows: {sum(map(len, staged))} in {len(staged)} batches"
        f" ({time.monotonic() - t0:.0f}s)"
    )
    suffix = uuid.uuid4().hex[:8]
    variants = [replace(v, template=f"fold_{v.order_id_type}_{suffix}") for v in VARIANTS]
    results: dict[str, list[list[Timings]]] = {v.name: [] for v in variants}
    try:
        for v in variants:
            make_template(v.template, v.convert)
        for variant in alternate(variants, rounds):
            load = Path("/proc/loadavg").read_text().split()[:3]
            timings = run(variant, staged)
            results[variant.name].append(timings)
            print(
                f"{time.strftime('%H:%M:%S', time.gmtime())} {variant.name}: folds"
                f" {[round(t.wall, 2) for t in timings]} s, CPU"
                f" {[round(t.cpu, 2) for t in timings]} s (load {' '.join(load)})",
                flush=True,
            )
    finally:
        for v in variants:
            drop_database(v.template)
    print(report(results))


if __name__ == "__main__":
    app()
