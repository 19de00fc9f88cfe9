"""The content fingerprint the executors stage (parse.fingerprint, migration 0012): the same
event in other bytes (key order, whitespace, escapes) has the same one, other content another
(tests/spark/ops/test_fingerprint.py holds it equal to services/ops/fingerprint.py)."""

import json
from typing import Any

from pyspark.sql import SparkSession

from tests.spark.aggregation.records import event, record, staged


def fingerprints(spark: SparkSession, values: list[bytes], e: dict[str, Any]) -> list[str]:
    """The fingerprint staged for each value (a record of `e`'s key and headers), as text."""
    key, _value, *rest = record(e)
    out = staged(spark, [(key, value, *rest) for value in values])
    assert out["t_dead"] == []
    rows = sorted(out["t_events"], key=lambda r: int(r["kafka_offset"]))
    return [r["fingerprint"] for r in rows]


def test_the_same_event_in_other_bytes_has_the_same_fingerprint(spark: SparkSession) -> None:
    e = event()
    as_written = json.dumps(e).encode()
    values = [
        as_written,
        json.dumps(e, sort_keys=True, indent=2).encode(),
        json.dumps(dict(reversed(list(e.items())))).encode(),
        as_written.replace(b'"SKU-1"', b'"SKU\\u002d1"'),
    ]
    assert len(set(fingerprints(spark, values, e))) == 1


def test_other_content_has_another_fingerprint(spark: SparkSession) -> None:
    e = event()
    changed = [
        {**e, "occurred_at": "2026-11-22T23:59:59.999998Z"},
        {**e, "order": {**e["order"], "updated_at": "2026-11-23T00:00:00Z"}},
        {**e, "order": {**e["order"], "items": [*reversed(e["order"]["items"])]}},
    ]
    values = [json.dumps(x).encode() for x in (e, *changed)]
    assert len(set(fingerprints(spark, values, e))) == len(values)
