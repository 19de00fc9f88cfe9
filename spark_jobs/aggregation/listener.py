"""Spark's progress events -> the job's metrics (docs/observability.md, job `aggregation`).

`progress_values` is the pure mapping from one progress (a dict: StreamingQueryProgress is one,
and so is its JSON parsed) to metric values; `MetricsListener` feeds it to JobMetrics. Spark
delivers listener events asynchronously, after the batch, on its listener bus: nothing here
runs inside a micro-batch.
"""

import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql.streaming.listener import (
    QueryIdleEvent,
    QueryProgressEvent,
    QueryStartedEvent,
    QueryTerminatedEvent,
    StreamingQueryListener,
)

from spark_jobs.aggregation.metrics import JobMetrics

log = logging.getLogger("onceflow.aggregation.metrics")

Offsets = dict[str, dict[int, int]]  # topic -> partition -> offset


@dataclass(frozen=True)
class ProgressValues:
    """What one progress event says, as metric values."""

    batch_id: int
    input_rows_per_second: float
    processed_rows_per_second: float
    # durationMs, in seconds, per part (triggerExecution, addBatch, getBatch, ...).
    durations: dict[str, float]
    # (topic, partition) -> the source's latest offset minus the batch's end offset.
    offsets_behind: dict[tuple[str, int], int]


def _rate(value: object) -> float:
    """A rows/s figure; absent or NaN (a first batch has no previous trigger) is 0."""
    if not isinstance(value, int | float) or math.isnan(value):
        return 0.0
    return float(value)


def kafka_offsets(value: object) -> Offsets:
    """A Kafka source's offsets (`{"topic": {"0": 12, ...}}`, as JSON text or parsed); {} for
    anything else (another kind of source, or none yet)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    if not isinstance(value, dict):
        return {}
    return {
        str(topic): {int(p): int(o) for p, o in parts.items()}
        for topic, parts in value.items()
        if isinstance(parts, dict)
    }


def offsets_behind(source: Mapping[str, Any]) -> dict[tuple[str, int], int]:
    """Per partition: the source's latest offset minus the batch's end offset (never negative).

    With read_committed the latest offset is the last stable offset, which counts transaction
    markers: the batch that reads up to it leaves 0 behind. The Kafka source's own metrics
    minOffsetsBehindLatest / avg / max are the same figure, aggregated over partitions.
    """
    latest, end = kafka_offsets(source.get("latestOffset")), kafka_offsets(source.get("endOffset"))
    return {
        (topic, partition): max(0, high - done)
        for topic, parts in latest.items()
        for partition, high in parts.items()
        if (done := end.get(topic, {}).get(partition)) is not None
    }


def progress_values(progress: Mapping[str, Any]) -> ProgressValues:
    """The metric values of one StreamingQueryProgress (or its JSON, parsed)."""
    behind: dict[tuple[str, int], int] = {}
    for source in progress.get("sources") or ():
        behind.update(offsets_behind(source))
    return ProgressValues(
        batch_id=int(progress.get("batchId", -1)),
        input_rows_per_second=_rate(progress.get("inputRowsPerSecond")),
        processed_rows_per_second=_rate(progress.get("processedRowsPerSecond")),
        durations={str(part): ms / 1000 for part, ms in (progress.get("durationMs") or {}).items()},
        offsets_behind=behind,
    )


class MetricsListener(StreamingQueryListener):
    """Records every progress event in JobMetrics; an idle query's rates are 0."""

    def __init__(self, metrics: JobMetrics) -> None:
        self.metrics = metrics

    def onQueryStarted(self, event: QueryStartedEvent) -> None:  # noqa: N802 (Spark's API)
        pass

    def onQueryProgress(self, event: QueryProgressEvent) -> None:  # noqa: N802
        try:
            self.metrics.observe_progress(progress_values(event.progress))
        except Exception:  # a metrics bug must never reach Spark's listener bus
            log.exception("could not record a progress event")

    def onQueryIdle(self, event: QueryIdleEvent) -> None:  # noqa: N802, ARG002
        self.metrics.observe_idle()

    def onQueryTerminated(self, event: QueryTerminatedEvent) -> None:  # noqa: N802
        pass
