"""The staleness series start from what outlives the job: the checkpoint says whether input
waits, the ledger (or the query's creation) when a batch last committed; never 1970."""

import math
import time
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from spark_jobs.aggregation import staleness
from spark_jobs.aggregation.metrics import JobMetrics
from spark_jobs.aggregation.sink import BatchResult

P = "onceflow_aggregation_"


def _log(checkpoint: Path, kind: str, *batches: int) -> None:
    folder = checkpoint / kind
    folder.mkdir(parents=True, exist_ok=True)
    for batch in batches:
        (folder / str(batch)).write_text("v1\n")
        (folder / f".{batch}.crc").write_bytes(b"crc")  # Spark's checksum files are not batches


def _sample(registry: CollectorRegistry, name: str) -> float:
    value = registry.get_sample_value(P + name)
    assert value is not None
    return value


def test_input_waits_while_a_planned_batch_is_not_committed(tmp_path: Path) -> None:
    assert not staleness.batch_pending(tmp_path)  # a new query: nothing planned
    _log(tmp_path, "offsets", 0)
    assert staleness.batch_pending(tmp_path)
    _log(tmp_path, "commits", 0)
    assert not staleness.batch_pending(tmp_path)
    _log(tmp_path, "offsets", 1, 2, 10)  # 10 > 9: compared as numbers, not as names
    _log(tmp_path, "commits", 1, 2, 9)
    assert staleness.batch_pending(tmp_path)
    _log(tmp_path, "commits", 10)
    assert not staleness.batch_pending(tmp_path)


def test_the_gauges_read_the_checkpoint_at_each_scrape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = CollectorRegistry()
    job = JobMetrics(registry)
    assert math.isnan(_sample(registry, "input_waiting"))  # no checkpoint yet
    assert math.isnan(_sample(registry, "last_batch_timestamp_seconds"))
    monkeypatch.setattr(staleness, "last_commit", lambda dsn, checkpoint: 1_700_000_000.0)
    job.watch(tmp_path)
    job.restore_last_batch("dsn", tmp_path)
    assert _sample(registry, "input_waiting") == 0
    assert _sample(registry, "last_batch_timestamp_seconds") == 1_700_000_000.0
    _log(tmp_path, "offsets", 7)
    assert _sample(registry, "input_waiting") == 1
    job.observe_batch(BatchResult("q", 7, skipped=True))  # a replay of a committed batch
    job.observe_batch(BatchResult("q", 8))  # no records: no ledger row
    assert _sample(registry, "last_batch_timestamp_seconds") == 1_700_000_000.0
    job.observe_batch(BatchResult("q", 9, records=3, events_new=3))
    assert abs(_sample(registry, "last_batch_timestamp_seconds") - time.time()) < 5


def test_a_query_without_a_batch_in_the_ledger_is_stale_since_its_creation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(staleness, "last_commit", lambda dsn, checkpoint: None)
    registry = CollectorRegistry()
    before = time.time()
    JobMetrics(registry).restore_last_batch("dsn", tmp_path)  # not created yet: from now
    assert before <= _sample(registry, "last_batch_timestamp_seconds") <= time.time()
    (tmp_path / "metadata").write_text('{"id":"q"}')
    created = (tmp_path / "metadata").stat().st_mtime
    registry = CollectorRegistry()
    JobMetrics(registry).restore_last_batch("dsn", tmp_path)
    assert _sample(registry, "last_batch_timestamp_seconds") == created


def test_an_unreadable_ledger_leaves_the_time_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def down(dsn: str, checkpoint: Path) -> float | None:
        raise OSError("connection refused")

    monkeypatch.setattr(staleness, "last_commit", down)
    registry = CollectorRegistry()
    JobMetrics(registry).restore_last_batch("dsn", tmp_path)
    assert math.isnan(_sample(registry, "last_batch_timestamp_seconds"))
    assert "last batch time unknown until a batch commits: connection refused" in caplog.text


def test_a_new_query_has_no_ledger_time_without_asking_postgres(tmp_path: Path) -> None:
    assert staleness.last_commit("postgresql://nobody@127.0.0.1:1/none", tmp_path) is None
