"""A replay remembers the fingerprint the job would have: services/ops/fingerprint.py equals
the job's (render.staged_rows, parse.fingerprint) on events of every type, long strings and
many items, with any key order, whitespace and escapes."""

import json

import pytest
from pyspark.sql import SparkSession

from services.ops.fingerprint import fingerprint
from spark_jobs.aggregation.render import staged_rows
from tests.oracle.events import MAX, event, record
from tests.spark.aggregation.records import raw_batch

EVENTS = [
    event("OrderPlaced"),
    event("OrderPaid", order={"customer_id": "c-" + "x" * 62}),
    event("OrderShipped", order={"customer_id": "c.1:x-y_z"}),
    event("OrderCancelled", occurred_at="2026-11-23T01:30:00.5+02:00"),
    event(
        "OrderPlaced",
        order={
            "items": [
                {"sku": f"SKU-{i}", "quantity": i, "unit_price_cents": 7} for i in range(1, 9)
            ],
            "total_cents": sum(i * 7 for i in range(1, 9)),
        },
    ),
]


@pytest.mark.parametrize("e", EVENTS, ids=lambda e: e["event_type"])
def test_the_fingerprint_is_the_jobs(spark: SparkSession, e: dict[str, object]) -> None:
    compact = json.dumps(e, separators=(",", ":"), sort_keys=True).encode()
    escaped = json.dumps(e, ensure_ascii=True, indent=1).encode()
    records = [record(e), record(e, value=compact), record(e, value=escaped)]
    rows = staged_rows(raw_batch(spark, records), MAX, "q", 0).select("error", "fingerprint")
    seen = [(r["error"], r["fingerprint"]) for r in rows.collect()]
    assert seen == [(None, fingerprint(e))] * 3
