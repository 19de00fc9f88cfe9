"""The job's Prometheus metrics, served on 127.0.0.1:<agg_metrics_port> (docs/observability.md).

Two feeds: Spark's progress events (listener.py: rows/s, batch duration parts, offsets behind
the topic end) and the sink's result of each micro-batch (records, events, dead letters, the
Spark and Postgres seconds, the newest event applied). Recording is a few in-memory updates;
the HTTP server runs on its own daemon thread, so a scrape never touches a batch. The two
series of AggregationStale start from stores that outlive the process (staleness.py): whether
input waits (the checkpoint, read at each scrape) and when a batch last committed (the ledger,
read at start), so a job that restarts again and again on one batch stays stale.
"""

import logging
import math
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    start_http_server,
)

from spark_jobs.aggregation import staleness
from spark_jobs.aggregation.sink import BatchResult

if TYPE_CHECKING:
    from spark_jobs.aggregation.listener import ProgressValues

log = logging.getLogger("onceflow.aggregation.metrics")
PREFIX = "onceflow_aggregation_"
SECONDS_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class MetricsPortError(RuntimeError):
    """The metrics port cannot be bound (said in one sentence)."""


class JobMetrics:
    """Every series the job exports, in one registry (the process's default one in the job)."""

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        def gauge(name: str, doc: str, labels: tuple[str, ...] = ()) -> Gauge:
            return Gauge(PREFIX + name, doc, labels, registry=registry)

        def counter(name: str, doc: str, labels: tuple[str, ...] = ()) -> Counter:
            return Counter(PREFIX + name, doc, labels, registry=registry)

        self.input_rate = gauge("input_rows_per_second", "Input rows/s of the last progress")
        self.processed_rate = gauge(
            "processed_rows_per_second", "Processed rows/s of the last progress"
        )
        self.duration = gauge(
            "batch_duration_seconds", "The last batch's durationMs parts, in seconds", ("part",)
        )
        self.behind = gauge(
            "offsets_behind",
            "The topic's latest offset minus the last batch's end offset",
            ("topic", "partition"),
        )
        self.batches = counter("batches_total", "Micro-batches applied (one ledger row each)")
        self.records = counter("records_total", "Kafka records in applied micro-batches")
        self.events = counter(
            "events_total",
            "Valid events read: new (counted), late (counted, before the horizon), duplicate",
            ("result",),
        )
        self.dead_letters = counter("dead_letters_total", "Records recorded as dead letters")
        self.conflicts = counter(
            "conflicting_duplicates_total",
            "Of the dead letters: copies of a counted event id with other content",
        )
        self.sink_seconds = Histogram(
            PREFIX + "sink_seconds",
            "Seconds per applied batch: spark (parse, render, stage on the executors),"
            " postgres (the fold transaction)",
            ("stage",),
            buckets=SECONDS_BUCKETS,
            registry=registry,
        )
        self.freshness = gauge(
            "freshness_seconds", "Now minus occurred_at of the newest event applied"
        )
        self.last_batch = gauge(
            "last_batch_timestamp_seconds",
            "When the query's newest batch committed (the ledger's time; before its first, when"
            " the query was created)",
        )
        self.input_waiting = gauge(
            "input_waiting", "1 while a batch Spark planned is not committed (the checkpoint)"
        )
        self.newest_event_at: datetime | None = None
        self.last_batch_at: float | None = None
        self.checkpoint: Path | None = None
        self.freshness.set_function(self._freshness)
        self.last_batch.set_function(lambda: _or_nan(self.last_batch_at))
        self.input_waiting.set_function(self._input_waiting)
        for result in ("new", "late", "duplicate"):
            self.events.labels(result)  # present at 0 from the start
        for stage in ("spark", "postgres"):
            self.sink_seconds.labels(stage)

    def _freshness(self) -> float:
        newest = self.newest_event_at
        return math.nan if newest is None else (datetime.now(UTC) - newest).total_seconds()

    def _input_waiting(self) -> float:
        checkpoint = self.checkpoint
        return math.nan if checkpoint is None else float(staleness.batch_pending(checkpoint))

    def watch(self, checkpoint: Path) -> None:
        """At start: input waits while this checkpoint has a batch planned and not committed."""
        self.checkpoint = checkpoint

    def restore_last_batch(self, dsn: str, checkpoint: Path) -> None:
        """At start: the query's newest batch in the ledger. With none, staleness counts from
        the query's creation (from now, for a query not created yet): never from 1970. With
        the ledger unreadable it stays unknown (NaN) until a batch commits."""
        try:
            last = staleness.last_commit(dsn, checkpoint)
        except Exception as exc:  # only a metric: the batches will say what is wrong
            log.warning("last batch time unknown until a batch commits: %s", exc)
            return
        self.last_batch_at = last or staleness.created_at(checkpoint) or time.time()

    def observe_progress(self, values: "ProgressValues") -> None:
        """One progress event of the streaming query."""
        self.input_rate.set(values.input_rows_per_second)
        self.processed_rate.set(values.processed_rows_per_second)
        for part, seconds in values.durations.items():
            self.duration.labels(part).set(seconds)
        for (topic, partition), behind in values.offsets_behind.items():
            self.behind.labels(topic, str(partition)).set(behind)

    def observe_idle(self) -> None:
        """The query waits for data: nothing flows."""
        self.input_rate.set(0)
        self.processed_rate.set(0)

    def observe_batch(self, result: BatchResult) -> None:
        """What the sink did with one micro-batch (a skipped replay changes no count). Runs
        after the batch's commit: a failure here is logged, never raised into the batch."""
        try:
            self._observe_batch(result)
        except Exception:
            log.exception("could not record batch %d", result.batch_id)

    def _observe_batch(self, result: BatchResult) -> None:
        if result.newest_event_at is not None:
            self.newest_event_at = result.newest_event_at
        if result.skipped or not result.records:
            return  # nothing committed: no ledger row
        self.last_batch_at = time.time()
        self.batches.inc()
        self.records.inc(result.records)
        self.events.labels("new").inc(result.events_new - result.late_events)
        self.events.labels("late").inc(result.late_events)
        self.events.labels("duplicate").inc(result.duplicates)
        self.dead_letters.inc(result.dead_letters)
        self.conflicts.inc(result.conflicts)
        self.sink_seconds.labels("spark").observe(result.spark_seconds)
        self.sink_seconds.labels("postgres").observe(result.postgres_seconds)


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else value


def serve(port: int, registry: CollectorRegistry = REGISTRY, host: str = "127.0.0.1") -> None:
    """Serve `registry` on http://<host>:<port>/metrics from a daemon thread (host is
    ONCEFLOW_METRICS_HOST: loopback locally, 0.0.0.0 in a container); MetricsPortError when the
    port cannot be bound."""
    try:
        start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        raise MetricsPortError(
            f"cannot serve metrics on {host}:{port}: {exc.strerror or exc} (is another "
            "aggregation job running? stop it, or set ONCEFLOW_AGG_METRICS_PORT)"
        ) from exc
