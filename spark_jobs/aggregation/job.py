"""The aggregation job: Kafka -> parse -> per-table deltas -> Postgres, streaming or backfill.

Both modes run the same query (source.read_orders -> sink.PostgresSink); they differ only in
trigger, starting offsets, batch size and checkpoint:
- streaming: processingTime trigger (default 1 s), resumes from its checkpoint;
- backfill: availableNow from the earliest offset with a fresh checkpoint, into empty tables
  (--reset empties them first), logging progress, then exits.
Both serve their metrics on 127.0.0.1:<agg_metrics_port> (metrics.py; a busy port is an error).
"""

import contextlib
import logging
import sys
from datetime import UTC, datetime
from pathlib import Path

from onceflow.settings import (
    AggregationSettings,
    Settings,
    get_aggregation_settings,
    get_observability_settings,
    get_settings,
)
from spark_jobs.aggregation.backfill import (
    BackfillRefusedError,
    prepare_backfill_tables,
    topic_offsets,
)
from spark_jobs.aggregation.listener import MetricsListener
from spark_jobs.aggregation.metrics import JobMetrics, MetricsPortError, serve
from spark_jobs.aggregation.progress import Progress
from spark_jobs.aggregation.session import build_session
from spark_jobs.aggregation.sink import BatchResult, PostgresSink
from spark_jobs.aggregation.source import read_orders
from spark_jobs.aggregation.stopping import Stopper, stop_gracefully

log = logging.getLogger("onceflow.aggregation")


def configure_logging() -> None:
    """Log lines to stdout (the supervisor captures it)."""
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stdout,
        format="%(asctime)s %(levelname)-5s [%(name)s] %(message)s",
        force=True,
    )
    logging.getLogger("py4j").setLevel(logging.WARNING)


def newest_event_at(sink: PostgresSink) -> datetime | None:
    """Freshness before the first batch: the newest event applied so far (None if unknown)."""
    try:
        return sink.newest_event_at()
    except Exception as exc:  # only a metric: the batches will say what is wrong
        log.warning("freshness unknown until the first batch: %s", exc)
        return None


def run(*, backfill: bool = False, reset: bool = False) -> int:
    """Run the job until it is stopped (streaming) or has caught up (backfill); exit code."""
    configure_logging()
    stopper = Stopper()
    stopper.install()
    conn: Settings = get_settings()
    agg: AggregationSettings = get_aggregation_settings()
    dsn = conn.dsn("spark")
    watermarks = None
    metrics = JobMetrics()
    try:
        observe = get_observability_settings()
        serve(observe.agg_metrics_port, host=observe.metrics_host)
    except MetricsPortError as exc:
        log.error("%s", exc)
        return 2
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
    metrics.watch(checkpoint)
    metrics.restore_last_batch(dsn, checkpoint)

    with stopper.shielding_children():
        spark = build_session(
            agg, "onceflow-aggregation-backfill" if backfill else "onceflow-aggregation"
        )
    spark.streams.addListener(MetricsListener(metrics))
    progress = Progress(watermarks)

    def on_batch(result: BatchResult) -> None:
        progress(result)
        metrics.observe_batch(result)

    sink = PostgresSink(conn, agg, checkpoint, on_batch=on_batch)
    try:
        metrics.newest_event_at = newest_event_at(sink)
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
                stop_gracefully(query)
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
