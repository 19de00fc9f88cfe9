"""Conflicting duplicates on real Kafka, Postgres and Spark: a record whose event id was counted
with other content (in the same batch or an earlier one; another occurred_at included) is a
dead letter "event id reused with different content" with its raw key and value, the first copy
stays counted, and an exact re-delivery in other bytes is a silent duplicate."""

import json
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from onceflow.event_definition import REUSED_ID
from stack.waiting import wait_for
from tests.integration.aggregation.conftest import Pipeline
from tests.integration.aggregation.history import (
    Event,
    Record,
    interleave,
    iso,
    make_history,
    produce,
)
from tests.integration.aggregation.tables import assert_exact

pytestmark = pytest.mark.integration


def reserialised(event: Event) -> Record:
    """The same event in other bytes: keys sorted, indented."""
    r = event.record()
    value = json.dumps(json.loads(r.value or b"{}"), sort_keys=True, indent=1).encode()
    return replace(r, value=value)


def later_update(event: Event) -> Event:
    """The same event id and occurred_at with another order (a later updated_at)."""
    updated_at = iso(event.occurred_at + timedelta(seconds=1))
    assert event.order["updated_at"] != updated_at
    return replace(event, order={**event.order, "updated_at": updated_at})


def bytes_of(value: Any) -> bytes | None:
    return None if value is None else bytes(value)


def test_an_event_id_reused_with_other_content_is_a_dead_letter(pipeline: Pipeline) -> None:
    events = interleave(make_history(60, seed=21, days=3), seed=21)
    first, second, third = events[0], events[1], events[2]
    # One batch: the events, two copies with other content, one exact re-delivery.
    in_batch = [
        replace(first, occurred_at=first.occurred_at + timedelta(hours=1)).record(),
        later_update(second).record(),
    ]
    produce(
        pipeline.bootstrap,
        pipeline.topic,
        [*(e.record() for e in events), *in_batch, reserialised(first)],
    )
    job = pipeline.start()
    try:
        pipeline.wait_applied(len(events), len(in_batch), job)
        # Later batches: a conflict with an event counted earlier, and exact re-deliveries.
        later = [replace(third, occurred_at=third.occurred_at - timedelta(days=1)).record()]
        produce(pipeline.bootstrap, pipeline.topic, [*later, reserialised(second), third.record()])
        pipeline.wait_applied(len(events), len(in_batch) + len(later), job)
        # Every record read, the re-deliveries too (they may come in a batch after the others).
        produced = len(events) + 3 + len(in_batch) + len(later)
        wait_for(
            lambda: (
                pipeline.query("SELECT sum(records) FROM aggregation.applied_batches")
                == [(produced,)]
            ),
            what=f"{produced} records in the ledger",
            timeout=120,
        )
    finally:
        assert job.stop() == 0
    assert_exact(pipeline, events)
    dead = pipeline.query("SELECT key, value, error FROM analytics.dead_letters")
    assert sorted((bytes_of(k), bytes_of(v), e) for k, v, e in dead) == sorted(
        (r.key, r.value, REUSED_ID) for r in [*in_batch, *later]
    )
    ledger = pipeline.query(
        "SELECT sum(events_new), sum(duplicates), sum(dead_letters), sum(records)"
        " FROM aggregation.applied_batches"
    )
    conflicts = len(in_batch) + len(later)
    assert ledger == [(len(events), 3, conflicts, len(events) + 3 + conflicts)]
    fingerprints = pipeline.query(
        "SELECT count(*), count(fingerprint) FROM aggregation.applied_events"
    )
    assert fingerprints == [(len(events), len(events))]
