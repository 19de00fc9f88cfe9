"""The job's metrics without Spark: a progress event (as Spark's JSON, or as pyspark's
StreamingQueryProgress dict with offsets as JSON text) -> metric values, and the sink's batch
results -> counters, under the names docs/observability.md promises."""

import json
import math
import socket
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from spark_jobs.aggregation.listener import kafka_offsets, offsets_behind, progress_values
from spark_jobs.aggregation.metrics import JobMetrics, MetricsPortError, serve
from spark_jobs.aggregation.sink import BatchResult

TOPIC = "outbox.event.order"
# A progress event as Spark 4 writes it (StreamingQueryProgress.json), trimmed.
PROGRESS: dict[str, Any] = {
    "id": "4f3c2c9e-7f6a-4a8e-9d55-0c1d7e1b2a10",
    "runId": "0b7f2b36-51a4-4c3b-9d8e-5d0f3f7c9a11",
    "name": "aggregation",
    "timestamp": "2026-11-23T13:00:00.000Z",
    "batchId": 12,
    "batchDuration": 1834,
    "numInputRows": 300,
    "inputRowsPerSecond": 150.0,
    "processedRowsPerSecond": 163.6,
    "durationMs": {
        "addBatch": 1500,
        "commitOffsets": 40,
        "getBatch": 0,
        "latestOffset": 12,
        "queryPlanning": 30,
        "triggerExecution": 1834,
        "walCommit": 45,
    },
    "stateOperators": [],
    "sources": [
        {
            "description": f"KafkaV2[Subscribe[{TOPIC}]]",
            "startOffset": {TOPIC: {"0": 100, "1": 90, "2": 80}},
            "endOffset": {TOPIC: {"2": 180, "1": 190, "0": 200}},
            "latestOffset": {TOPIC: {"2": 180, "1": 250, "0": 230}},
            "numInputRows": 300,
            "inputRowsPerSecond": 150.0,
            "processedRowsPerSecond": 163.6,
            "metrics": {
                "avgOffsetsBehindLatest": "30.0",
                "maxOffsetsBehindLatest": "60",
                "minOffsetsBehindLatest": "0",
            },
        }
    ],
    "sink": {"description": "ForeachBatchSink", "numOutputRows": -1},
}


def test_a_progress_event_maps_to_rates_duration_parts_and_offsets_behind() -> None:
    values = progress_values(PROGRESS)
    assert values.batch_id == 12
    assert (values.input_rows_per_second, values.processed_rows_per_second) == (150.0, 163.6)
    assert values.durations["triggerExecution"] == 1.834
    assert values.durations["addBatch"] == 1.5
    assert set(values.durations) == set(PROGRESS["durationMs"])
    assert values.offsets_behind == {(TOPIC, 0): 30, (TOPIC, 1): 60, (TOPIC, 2): 0}


def test_offsets_behind_agree_with_the_kafka_sources_own_metrics() -> None:
    (source,) = PROGRESS["sources"]
    behind = offsets_behind(source).values()
    reported = source["metrics"]
    assert min(behind) == int(reported["minOffsetsBehindLatest"])
    assert max(behind) == int(reported["maxOffsetsBehindLatest"])
    assert sum(behind) / len(behind) == float(reported["avgOffsetsBehindLatest"])


def test_pyspark_progress_objects_hold_offsets_as_json_text() -> None:
    source = {
        **PROGRESS["sources"][0],
        "endOffset": json.dumps({TOPIC: {"0": 5}}),
        "latestOffset": json.dumps({TOPIC: {"0": 9}}),
    }
    assert offsets_behind(source) == {(TOPIC, 0): 4}


def test_a_first_batch_has_no_rates_and_a_source_without_offsets_nothing_behind() -> None:
    first = {
        **PROGRESS,
        "inputRowsPerSecond": math.nan,
        "sources": [{**PROGRESS["sources"][0], "latestOffset": None, "startOffset": None}],
    }
    del first["processedRowsPerSecond"]
    values = progress_values(first)
    assert (values.input_rows_per_second, values.processed_rows_per_second) == (0.0, 0.0)
    assert values.offsets_behind == {}
    assert kafka_offsets("None") == kafka_offsets("not json") == kafka_offsets(None) == {}


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


def test_progress_and_batch_results_are_recorded_under_the_documented_names() -> None:
    registry = CollectorRegistry()
    metrics = JobMetrics(registry)
    metrics.observe_progress(progress_values(PROGRESS))
    p = "onceflow_aggregation_"
    assert sample(registry, p + "input_rows_per_second") == 150.0
    assert sample(registry, p + "processed_rows_per_second") == 163.6
    assert sample(registry, p + "batch_duration_seconds", part="walCommit") == 0.045
    assert sample(registry, p + "offsets_behind", topic=TOPIC, partition="1") == 60
    newest = datetime.now(UTC) - timedelta(seconds=30)
    applied = BatchResult(
        "q", 12, records=300, events_new=250, duplicates=40, late_events=5, dead_letters=10,
        spark_seconds=0.8, postgres_seconds=0.3, newest_event_at=newest,
    )  # fmt: skip
    metrics.observe_batch(applied)
    metrics.observe_batch(BatchResult("q", 12, skipped=True))  # a replay: no count changes
    metrics.observe_batch(BatchResult("q", 13))  # no records: nothing was written
    assert sample(registry, p + "batches_total") == 1
    assert sample(registry, p + "records_total") == 300
    assert sample(registry, p + "events_total", result="new") == 245
    assert sample(registry, p + "events_total", result="late") == 5
    assert sample(registry, p + "events_total", result="duplicate") == 40
    assert sample(registry, p + "dead_letters_total") == 10
    assert sample(registry, p + "sink_seconds_count", stage="spark") == 1
    assert sample(registry, p + "sink_seconds_sum", stage="postgres") == 0.3
    freshness = sample(registry, p + "freshness_seconds")
    assert freshness is not None
    assert 30 <= freshness < 40
    stamp = sample(registry, p + "last_batch_timestamp_seconds")
    assert stamp is not None
    assert abs(stamp - datetime.now(UTC).timestamp()) < 5
    metrics.observe_idle()
    assert sample(registry, p + "input_rows_per_second") == 0


def test_freshness_is_not_a_number_until_an_event_was_applied() -> None:
    registry = CollectorRegistry()
    JobMetrics(registry)
    value = sample(registry, "onceflow_aggregation_freshness_seconds")
    assert value is not None
    assert math.isnan(value)


def test_a_busy_port_is_a_readable_error_and_a_free_one_serves() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(MetricsPortError, match=f"127.0.0.1:{port}.*ONCEFLOW_AGG_METRICS_PORT"):
            serve(port, CollectorRegistry())
    registry = CollectorRegistry()
    JobMetrics(registry).observe_progress(progress_values(PROGRESS))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    serve(free, registry)
    with urllib.request.urlopen(f"http://127.0.0.1:{free}/metrics", timeout=5) as response:
        body = response.read().decode()
    assert f'onceflow_aggregation_offsets_behind{{partition="1",topic="{TOPIC}"}} 60.0' in body


def test_a_failure_to_record_a_batch_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    metrics = JobMetrics(CollectorRegistry())
    broken = BatchResult("q", 1, records=1, events_new=0, late_events=1)  # impossible: -1 new
    metrics.observe_batch(broken)
    assert "could not record batch 1" in caplog.text
