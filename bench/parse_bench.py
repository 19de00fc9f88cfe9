"""What parsing and validating costs the aggregation job, per valid record and once per JVM, in
CPU seconds of the process tree (Python driver + Spark JVM; the kernel's count: steadier than wall
time on a shared machine).

`python -m bench.parse_bench --records 200000 --rounds 5` builds N valid records (the backfill
bench's history), caches them as raw Kafka rows in a local SparkSession with the job's jars, and
evaluates the job's staging rows (`render.staged_rows`) into Spark's no-op sink, round after
round, printing one JSON line: the CPU seconds and the wall time per round for the staged rows
(`staged`), the parse alone (`parse`: classify, the annotated event columns and the error) and a
plain scan of the cached rows (`scan`), with their medians. Each plan's first evaluation
(`first_cpu`) is not in its rounds; the staged rows go first, so theirs is what a fresh job pays
before its first batch is warm: building the columns (py4j), analysis, optimisation, code
generation and the JIT (`fixed_cpu`: first minus the median round).

Run from another checkout (cwd = its root, this file copied into its bench/) to measure another
version of the parser in the same conditions; alternate the checkouts run by run (A B A B).
"""

import json
import os
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import typer
from pyspark.sql import DataFrame

from bench.soak_sample import cpu_seconds, process_tree
from onceflow.settings import AggregationSettings
from spark_jobs.aggregation import parse, render
from spark_jobs.aggregation.session import build_session
from tests.integration.aggregation.history import Event, make_history
from tests.spark.aggregation.records import RAW

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

MAX_EVENT_BYTES = 1_048_576
AT = datetime(2026, 11, 25, tzinfo=UTC)


def _wire(value: Any) -> Any:
    """`value` with every object's keys in jsonb's order (shorter first, then bytewise)."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(k.encode()), k.encode()))
        return {k: _wire(value[k]) for k in keys}
    if isinstance(value, list):
        return [_wire(v) for v in value]
    return value


def _rows(n: int, form: str) -> list[tuple[Any, ...]]:
    """N valid records: `dumps` as the backfill bench writes them (json.dumps), or `wire` as
    the connector writes them (jsonb's key order, no spaces)."""
    events: list[Event] = make_history(max(1, int(n / 2.2)), seed=11, days=30, n_customers=5000)
    rows = []
    for offset, e in enumerate(events[:n]):
        r = e.record()
        value = r.value
        if form == "wire" and value is not None:
            value = json.dumps(_wire(json.loads(value)), separators=(",", ":")).encode()
        rows.append((r.key, value, "bench", offset % 3, offset, AT, r.headers))
    return rows


def _measure(pids: list[int], run: Callable[[], None]) -> tuple[float, float]:
    cpu, wall = cpu_seconds(pids), time.monotonic()
    run()
    return cpu_seconds(pids) - cpu, time.monotonic() - wall


def _noop(df: DataFrame) -> Callable[[], None]:
    return lambda: df.write.format("noop").mode("overwrite").save()


@app.command()
def main(records: int = 200_000, rounds: int = 5, form: str = "dumps", partitions: int = 2) -> None:
    settings = AggregationSettings(
        agg_ui_enabled=False, agg_shuffle_partitions=2, agg_spark_master="local[2]"
    )
    spark = build_session(settings, "onceflow-parse-bench")
    pids = process_tree(os.getpid())  # this driver and its Spark JVM
    raw = spark.createDataFrame(_rows(records, form), RAW).repartition(partitions).cache()
    raw.count()
    raw.select("key", "value", "headers").write.format("noop").mode("overwrite").save()
    columns = ["event_id", "event_type", "occurred_at", "order_id", "total_cents", "items"]
    # Each plan is built inside its first evaluation, so that one counts the columns' building.
    # The parse alone: what every staged row needs from it (the fingerprint, where a version
    # has one, belongs to the staging, not to the parse).
    plans: dict[str, Callable[[], DataFrame]] = {
        "staged": lambda: render.staged_rows(raw, MAX_EVENT_BYTES, "bench", 1),
        "parse": lambda: parse.annotated(parse.classify(raw, MAX_EVENT_BYTES)).select(
            *columns, "error"
        ),
        "scan": lambda: raw.select("key", "value", "headers"),
    }
    results: dict[str, Any] = {"records": records, "form": form}
    for name, plan in plans.items():
        built: list[DataFrame] = []

        def first(plan: Callable[[], DataFrame] = plan, built: list[DataFrame] = built) -> None:
            built.append(plan())
            _noop(built[0])()

        first_cpu, _ = _measure(pids, first)
        samples = [_measure(pids, _noop(built[0])) for _ in range(rounds)]
        median = statistics.median(c for c, _ in samples)
        results[name] = {
            "cpu": [round(c, 2) for c, _ in samples],
            "wall": [round(w, 2) for _, w in samples],
            "cpu_median": round(median, 3),
            "first_cpu": round(first_cpu, 2),
            "fixed_cpu": round(first_cpu - median, 2),
        }
        if name == "parse":
            results["dead_letters"] = built[0].where("error IS NOT NULL").count()
    results["cwd"] = os.getcwd()
    print(json.dumps(results))
    spark.stop()


if __name__ == "__main__":
    app()
