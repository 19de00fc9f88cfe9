"""bench/floor.py's pure parts: the staging area's row it builds for a record, its batches and
its statements."""

import json
from datetime import UTC, date, datetime
from typing import Any

import pytest

from bench import floor
from onceflow import contract
from onceflow.events import InvalidEventError, read
from spark_jobs.aggregation import staging
from tests.integration.aggregation.history import Record, make_history

TOPIC = "orders"


def _history() -> list[Record]:
    return [e.record() for e in make_history(20, seed=5)]


def _row(record: Record, offset: int = 7) -> dict[str, Any]:
    headers: Any = record.headers
    row = floor.staged_row(TOPIC, 2, offset, 1_700_000_000_000, record.key, record.value, headers)
    assert len(row) == len(staging.COLUMNS)
    return dict(zip(staging.COLUMNS, row, strict=True))


def test_a_valid_event_fills_the_event_columns_and_leaves_the_dead_letter_ones_empty() -> None:
    for record in _history():
        headers: Any = record.headers
        event, doc = read(record.key, record.value, headers)
        row = _row(record)
        assert (row["kafka_partition"], row["kafka_offset"]) == (2, 7)
        assert row["kafka_timestamp"] == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
        assert row["event_id"] == event.event_id == doc["event_id"].lower()
        assert row["event_type"] == event.event_type
        assert row["occurred_at"] == datetime.fromisoformat(event.occurred_at)
        assert row["order_id"] == event.order_id
        assert row["status"] == doc["order"]["status"]
        assert row["status_rank"] == contract.STATUS_RANK[contract.OrderStatus(row["status"])]
        assert row["total_cents"] == event.total_cents
        assert isinstance(row["fingerprint"], int)
        assert -(2**63) <= row["fingerprint"] < 2**63
        assert [row[c] for c in ("topic", "key", "value", "error")] == [None] * 4


def test_only_placed_and_cancelled_events_carry_their_items() -> None:
    rows = [_row(r) for r in _history()]
    counted = {contract.EventType.PLACED.value, contract.EventType.CANCELLED.value}
    assert any(r["event_type"] in counted for r in rows)
    assert any(r["event_type"] not in counted for r in rows)
    for r, record in zip(rows, _history(), strict=True):
        assert record.value is not None
        items = json.loads(record.value)["order"]["items"]
        if r["event_type"] in counted:
            assert json.loads(r["items"]) == items
        else:
            assert r["items"] is None


def test_the_day_is_the_utc_date_of_an_instant_with_an_offset() -> None:
    record = _history()[0]
    assert record.value is not None
    doc = json.loads(record.value)
    doc["occurred_at"] = "2026-03-01T23:30:00-02:00"
    row = _row(Record(record.key, json.dumps(doc).encode(), record.headers))
    assert row["error"] is None, row["error"]
    assert row["day"] == date(2026, 3, 2)


def test_a_dead_letter_keeps_its_bytes_and_the_readers_reason() -> None:
    record = _history()[0]
    broken = b'{"event_id": 1}'
    headers: Any = record.headers
    with pytest.raises(InvalidEventError) as refused:
        read(record.key, broken, headers)
    row = _row(Record(record.key, broken, record.headers), offset=9)
    assert (row["kafka_partition"], row["kafka_offset"]) == (2, 9)
    assert (row["topic"], row["key"], row["value"]) == (TOPIC, record.key, broken)
    assert row["error"] == str(refused.value)
    assert all(row[c] is None for c in staging.EVENTS.names if c not in staging.POSITION)


def test_the_fingerprint_follows_the_content_not_the_key_order() -> None:
    doc = {"a": 1, "b": {"c": "x", "d": [1, 2]}}
    same = {"b": {"d": [1, 2], "c": "x"}, "a": 1}
    assert floor.content_fingerprint(doc) == floor.content_fingerprint(same)
    assert floor.content_fingerprint(doc) != floor.content_fingerprint({**doc, "a": 2})


def test_batches_cut_rows_at_the_size_and_keep_the_rest() -> None:
    rows = [(i,) for i in range(7)]
    assert [len(b) for b in floor.batches(rows, 3)] == [3, 3, 1]
    assert [r for b in floor.batches(rows, 3) for r in b] == rows
    assert list(floor.batches([], 3)) == []
    with pytest.raises(ValueError, match="at least one row"):
        list(floor.batches(rows, 0))


def test_the_statements_name_the_staging_area_and_its_columns() -> None:
    assert floor.TABLE_COLUMNS[:2] == staging.KEY
    assert floor.TABLE_COLUMNS[2:] == staging.COLUMNS
    assert staging.AREA in floor.create_table("public.f")
    assert floor.create_table("public.f").startswith("CREATE UNLOGGED TABLE public.f ")
    assert floor.copy_statement("public.f") == (
        f"COPY public.f ({', '.join(floor.TABLE_COLUMNS)}) FROM STDIN"
    )
