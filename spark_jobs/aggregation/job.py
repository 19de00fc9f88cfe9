"""The aggregation job: Kafka -> parse -> per-table deltas -> Postgres, streaming or backfill.

Both modes run the same query (source.read_orders -> sink.PostgresSink); they differ only in
trigger, starting offsets, batch size and checkpoint:
- streaming: processingTime trigger (default 1 s), resumes from its checkpoint;
- backfill: availableNow from the earliest offset with a fresh checkpoint, into empty tables
  (--reset empties them first), logging progress, then exits.
"""

import contextlib
import logging
import signal
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

import psycopg
from confluent_kafka import Consumer, TopicPartition
from pyspark.sql.streaming.query import StreamingQuery

from onceflow.schema.analytics import JOB_TABLES
from onceflow.settings import AggregationSettings, Settings, get_aggregation_settings, get_settings
from spark_jobs.aggregation.session import build_session
from spark_jobs.aggregation.sink import BatchResult, PostgresSink
from spark_jobs.aggregation.source import read_orders

log = logging.getLogger("onceflow.aggregation")

ANALYTICS_TABLES = tuple(table.name for table in JOB_TABLES)


class BackfillRefusedError(RuntimeError):
    """The analytics tables are not empty and --reset was not given."""


def configure_logging() -> None:
    """Log lines to stdout (the supervisor captures it)."""
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stdout,
        format="%(asctime)s %(levelname)-5s [%(name)s] %(message)s",
        force=True,
    )
    logging.getLogger("py4j").setLevel(logging.WARNING)


def topic_offsets(bootstrap: str, topic: str) -> dict[int, tuple[int, int]]:
    """partition -> (low, high) watermark of the topic right now."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "onceflow-backfill-probe",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    try:
        meta = consumer.list_topics(topic, timeout=10).topics[topic]
        result = {}
        for partition in meta.partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
            result[partition] = (low, high)
        return result
    finally:
        consumer.close()


def prepare_backfill_tables(dsn: str, *, reset: bool) -> None:
    """Backfill writes into empty tables: refuse non-empty ones unless reset (then empty them)."""
    with psycopg.connect(dsn) as conn:
        used = [
            t
            for t in ANALYTICS_TABLES
            if conn.execute(f"SELECT EXISTS (SELECT 1 FROM analytics.{t})").fetchone() == (True,)
        ]
        if used and not reset:
            raise BackfillRefusedError(
                f"analytics tables are not empty ({', '.join(used)}): stop the streaming job, "
                "then run the backfill with --reset to rebuild them from the topic"
            )
        if used:
            log.warning("--reset: emptying analytics tables %s", ", ".join(used))
            conn.execute("TRUNCATE " + ", ".join(f"analytics.{t}" for t in ANALYTICS_TABLES))


class Progress:
    """Per-batch log lines; in backfill mode also the share of the topic done and the rate."""

    def __init__(self, watermarks: dict[int, tuple[int, int]] | None) -> None:
        self.watermarks = watermarks
        self.started = time.monotonic()
        self.events = 0
        self.records = 0
        self.done: dict[int, int] = {}

    def __call__(self, r: BatchResult) -> None:
        if r.skipped:
            return
        self.events += r.events_new
        self.records += r.records
        line = (
            f"batch {r.batch_id}: {r.records} records, {r.events_new} new events "
            f"({r.late_events} late), {r.duplicates} duplicates, {r.dead_letters} dead letters "
            f"(spark {r.spark_seconds:.2f}s, postgres {r.postgres_seconds:.2f}s)"
        )
        if self.watermarks:
            for partition, span in r.offsets.items():
                self.done[int(partition)] = span["last"] + 1
            total = sum(high - low for low, high in self.watermarks.values()) or 1
            covered = sum(
                min(self.done.get(p, low), high) - low for p, (low, high) in self.watermarks.items()
            )
            elapsed = time.monotonic() - self.started
            line += (
                f" | backfill {100 * covered / total:5.1f}% ({covered}/{total} offsets), "
                f"{self.records / elapsed:,.0f} records/s"
            )
        log.info(line)
        if r.late_events:
            log.warning(
                "batch %d: %d events occurred before the de-duplication horizon; counted and "
                "recorded in analytics.late_events",
                r.batch_id,
                r.late_events,
            )


class Stopper:
    """SIGTERM/SIGINT: finish the running micro-batch, then stop the query."""

    def __init__(self) -> None:
        self.requested = False

    def install(self) -> None:
        signal.signal(signal.SIGTERM, self._handle)
        signal.signal(signal.SIGINT, self._handle)

    @contextlib.contextmanager
    def shielding_children(self) -> Iterator[None]:
        """Start child processes (the Spark JVM) with SIGTERM ignored.

        A supervisor stopping the whole process group (stopasgroup) would otherwise make the
        JVM run its shutdown hooks at once, killing the micro-batch in flight; a JVM started
        with SIGTERM ignored keeps ignoring it, and this process stops Spark in order instead.
        """
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        log.info("received %s: stopping after the running micro-batch", signal.Signals(signum).name)
        self.requested = True


def _stop_gracefully(query: StreamingQuery, timeout: float = 50) -> None:
    """Let the running micro-batch finish (bounded), then stop the query.

    When the whole process group got the signal, the Spark JVM is already shutting down; any
    batch it interrupted is rolled back in Postgres and re-run from the checkpoint next time.
    """
    try:
        deadline = time.monotonic() + timeout
        while query.isActive and query.status.get("isTriggerActive"):
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        query.stop()
    except Exception as exc:  # the JVM is gone or going: nothing left to stop
        log.info("Spark stopped with the process group (%s)", type(exc).__name__)


def run(*, backfill: bool = False, reset: bool = False) -> int:
    """Run the job until it is stopped (streaming) or has caught up (backfill); exit code."""
    configure_logging()
    stopper = Stopper()
    stopper.install()
    conn: Settings = get_settings()
    agg: AggregationSettings = get_aggregation_settings()
    dsn = conn.dsn("spark")
    watermarks = None
    if backfill:
        try:
            prepare_backfill_tables(dsn, reset=reset)
        except BackfillRefusedError as exc:
            log.error("%s", exc)
            return 2
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        checkpoint: Path = agg.agg_backfill_checkpoint_root / stamp
        watermarks = topic_offsets(conn.kafka_bootstrap, conn.topic)
        log.info(
            "backfill of %s from the earliest offset (%d offsets) into %s",
            conn.topic,
            sum(h - lo for lo, h in watermarks.values()),
            conn.pg_database,
        )
    else:
        checkpoint = agg.agg_checkpoint_dir
    checkpoint.parent.mkdir(parents=True, exist_ok=True)

    with stopper.shielding_children():
        spark = build_session(
            agg, "onceflow-aggregation-backfill" if backfill else "onceflow-aggregation"
        )
    sink = PostgresSink(dsn, agg, conn.topic, checkpoint, on_batch=Progress(watermarks))
    try:
        stream = read_orders(spark, conn.kafka_bootstrap, conn.topic, agg, backfill=backfill)
        writer = (
            stream.writeStream.queryName("aggregation_backfill" if backfill else "aggregation")
            .foreachBatch(sink)
            .option("checkpointLocation", str(checkpoint))
        )
        writer = (
            writer.trigger(availableNow=True)
            if backfill
            else writer.trigger(processingTime=agg.agg_trigger_interval)
        )
        query = writer.start()
        log.info(
            "query %s (%s) started: topic %s -> postgres %s, checkpoint %s, Spark UI %s",
            query.id,
            "backfill" if backfill else "streaming",
            conn.topic,
            conn.pg_database,
            checkpoint,
            spark.sparkContext.uiWebUrl,
        )
        while query.isActive:
            if stopper.requested:
                _stop_gracefully(query)
                log.info("stopped on request")
                return 0
            query.awaitTermination(1)
        failure = query.exception()
        if failure is not None:
            log.error("query failed: %s", failure)
            return 1
        log.info("query stopped%s", " (backfill complete)" if backfill else "")
        return 0
    finally:
        sink.close()
        with contextlib.suppress(Exception):
            spark.stop()
