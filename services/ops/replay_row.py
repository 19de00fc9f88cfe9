"""A valid v1 event as the one row the job's executors would stage for it (the columns of
spark_jobs/aggregation/staging.EVENTS), so a replay is folded by the job's own statements."""

import json
from datetime import UTC, datetime
from typing import Any

from psycopg.types.json import Jsonb

from onceflow import contract as C  # noqa: N812
from onceflow.events import OrderEvent
from services.ops.fingerprint import fingerprint
from spark_jobs.aggregation import staging

# The events product_sales counts carry their items (render.counted_items).
WITH_ITEMS = (C.EventType.PLACED, C.EventType.CANCELLED)


def staged_row(*, event: OrderEvent, value: bytes, partition: int, offset: int) -> dict[str, Any]:
    """The staging area's row (staging.COLUMNS) of `event`, read from the record at
    (`partition`, `offset`) whose valid v1 `value` it is."""
    event_type = C.EventType(event.event_type)
    status = C.STATUS_AFTER[event_type]
    occurred_at = datetime.fromisoformat(event.occurred_at)
    doc = json.loads(value)
    items = doc["order"]["items"] if event_type in WITH_ITEMS else None
    row: dict[str, Any] = {
        "kafka_partition": partition,
        "kafka_offset": offset,
        "kafka_timestamp": None,  # analytics.dead_letters does not keep it
        "event_id": event.event_id,
        "event_type": event.event_type,
        "occurred_at": occurred_at,
        "day": occurred_at.astimezone(UTC).date(),
        "order_id": event.order_id,
        "customer_id": event.customer_id,
        "currency": event.currency,
        "status": status.value,
        "status_rank": C.STATUS_RANK[status],
        "total_cents": event.total_cents,
        "items": None if items is None else Jsonb(items),
        "fingerprint": fingerprint(doc),
    }
    if set(row) != set(staging.EVENTS.names):  # the job's staged columns changed
        raise RuntimeError(f"replay_row does not fill {staging.EVENTS.name} as the job does")
    return row
