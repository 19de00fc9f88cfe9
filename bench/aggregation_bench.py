"""Aggregation job benchmarks (not a test): backfill throughput and streaming freshness.

  .venv/bin/python -m bench.aggregation_bench backfill --events 1000000 [--floor]
  .venv/bin/python -m bench.aggregation_bench freshness --rate 200 --seconds 60

Both produce generated contract-section-4 events straight to a fresh bench topic on the
stack's broker and write into a fresh database (never the stack's `shop`), then clean up.
backfill: wall time of `python -m spark_jobs.aggregation --backfill` (JVM start included) and
the job's own records/s; with --floor, also as a ratio to bench/floor.py's rate on the same
topic in the same run (the floor: a lean read_committed consumer COPYing the same rows).
freshness: for every event, Kafka transaction commit -> the commit of the Postgres transaction
that counted it (aggregation.applied_batches.committed_at), p50/p99; and the job's CPU (driver and
Spark JVM, the kernel's count) from the load's start until its last event is applied.
"""

import bisect
import random
import re
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from confluent_kafka import Producer

from bench import floor as floor_bench
from bench.backfill_topic import backfill_topic, events
from bench.soak_sample import cpu_seconds, process_tree
from onceflow.settings.kafka_auth import client_config
from tests.integration.aggregation.conftest import Pipeline
from tests.integration.aggregation.history import delete_topic, order_events, produce
from tests.integration.databases import drop_database

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


def tree_cpu_until_exit(pid: int, poll: Callable[[], int | None]) -> float:
    """The CPU seconds of `pid` and its descendants (the Spark JVM), read until it exits: on a
    shared machine a CPU count moves far less with the neighbours' load than a wall time."""
    used = 0.0
    while poll() is None:
        used = max(used, cpu_seconds(process_tree(pid)))
        time.sleep(0.2)
    return used


@app.command()
def backfill(events: int = 1_000_000, floor: bool = False) -> None:
    """Backfill throughput: N events from the earliest offset into empty tables; with --floor,
    bench.floor reads the same topic before and after the job, and the job's rate is given as
    a ratio to the floor's (the median of those two runs)."""
    with backfill_topic(events) as (p, n):
        floors = [_floor(p)] if floor else []
        t0 = time.monotonic()
        # The job reads the scratch topic as the test suites' Kafka principal (ACLs).
        job = p.start("--backfill", kafka_principal="tests")
        cpu = tree_cpu_until_exit(job.proc.pid, job.proc.poll)
        code = job.wait(timeout=3600)
        wall = time.monotonic() - t0
        out = job.output()
        assert code == 0, out[-3000:]
        applied = p.query("SELECT events_applied FROM analytics.freshness")[0][0]
        assert applied == n, (applied, n)
        rates = re.findall(r"([\d,]+) records/s", out)
        own = rates[-1] if rates else "?"
        print(
            f"backfill: {n} events, wall {wall:.1f}s (JVM start included) = "
            f"{n / wall:,.0f} events/s; job's own rate at the end: {own} records/s; "
            f"job CPU {cpu:.1f} s (driver and JVM, by the kernel) = {n / cpu:,.0f} events/CPU-s"
        )
        for line in out.splitlines():
            if "onceflow.aggregation]" in line and "batch" in line:
                print("  ", line.split("] ", 1)[1])
        if floor:
            floors.append(_floor(p))
            rate = statistics.median(f.rate for f in floors)
            print(f"backfill / floor: {n / wall / rate:.2f} (floor {rate:,.0f} events/s, median)")


def _floor(p: Pipeline) -> floor_bench.Floor:
    """One floor run on the pipeline's topic, printed."""
    result = floor_bench.run(p.bootstrap, p.topic, p.database)
    print(floor_bench.describe(result))
    return result


@app.command()
def freshness(rate: int = 200, seconds: int = 60) -> None:
    """Streaming freshness at a steady event rate: Kafka commit -> Postgres commit, p50/p99."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Pipeline(Path(tmp))
        job = p.start(agg_trigger_interval="1 second", kafka_principal="tests")
        try:
            # Warm up: the first batch pays for JVM and code generation.
            warm = events(200)
            produce(p.bootstrap, p.topic, (e.record() for e in warm))
            p.wait_applied(len(warm), 0, job, timeout=240)
            offsets: dict[int, list[tuple[int, float]]] = {}
            lock = threading.Lock()
            producer = Producer(
                {
                    **client_config(p.bootstrap, "tests"),
                    "linger.ms": 1,
                    "transactional.id": f"bench-{uuid.uuid4()}",
                }
            )
            producer.init_transactions(30)
            pending: list[tuple[int, int]] = []

            def delivered(err: Any, msg: Any) -> None:
                if err is None:
                    pending.append((msg.partition(), msg.offset()))

            rng = random.Random(3)
            customers = [f"bench-{i}" for i in range(1000)]
            skus = [f"SKU-B-{i}" for i in range(100)]
            tick = 0.1  # one Kafka transaction every 100 ms
            per_tick = max(1, int(rate * tick))
            job_tree = process_tree(job.proc.pid)
            cpu_before = cpu_seconds(job_tree)
            start = time.monotonic()
            sent = 0
            while time.monotonic() - start < seconds:
                producer.begin_transaction()
                for _ in range(per_tick):
                    e = order_events(rng, datetime.now(UTC), customers, skus)[0]
                    r = e.record()
                    producer.produce(
                        p.topic, key=r.key, value=r.value, headers=r.headers, on_delivery=delivered
                    )
                producer.commit_transaction(30)
                committed = time.time()
                with lock:
                    for part, off in pending:
                        offsets.setdefault(part, []).append((off, committed))
                    pending.clear()
                sent += per_tick
                time.sleep(max(0.0, start + (sent / rate) - time.monotonic()))
            p.wait_applied(len(warm) + sent, 0, job, timeout=300)
            job_cpu = cpu_seconds(job_tree) - cpu_before
            loaded = time.monotonic() - start
            rows = p.query(
                "SELECT offsets, extract(epoch FROM committed_at) FROM aggregation.applied_batches"
            )
            ranges = sorted(
                (int(part), span["first"], span["last"], float(at))
                for o, at in rows
                for part, span in o.items()
            )
            latencies = []
            for part, pairs in offsets.items():
                spans = [r for r in ranges if r[0] == part]
                firsts = [s[1] for s in spans]
                for off, committed in pairs:
                    i = bisect.bisect_right(firsts, off) - 1
                    latencies.append(spans[i][3] - committed)
            latencies.sort()
            p50 = statistics.median(latencies)
            p99 = latencies[int(0.99 * (len(latencies) - 1))]
            print(
                f"freshness at {rate} events/s for {seconds}s ({len(latencies)} events): "
                f"p50 {p50:.2f}s p99 {p99:.2f}s max {latencies[-1]:.2f}s; "
                f"job CPU {job_cpu / loaded:.3f} CPU-s/s, {1e6 * job_cpu / sent:.0f} µs/event"
            )
        finally:
            job.stop()
            delete_topic(p.bootstrap, p.topic)
            drop_database(p.database)


if __name__ == "__main__":
    app()
