"""The job's metrics endpoint and the journeys it records, on a real job (scratch pipeline):
the scraped counters equal what the ledger says was applied, offsets behind reach 0 once the
topic is read, freshness follows the newest event, and every applied event's journey (Kafka
position and timestamp, the batch that counted it, its notification) is a query."""

import socket
import urllib.request
import uuid
from collections import Counter
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from onceflow.settings import NotificationSettings
from onceflow.settings.kafka_auth import client_config
from services.notifications.transform import notification_id
from services.ops.journey import journey
from stack.waiting import wait_for
from tests.e2e.kafka_reader import read_events
from tests.integration.aggregation.conftest import Pipeline
from tests.integration.aggregation.history import Record, interleave, make_history, produce

pytestmark = pytest.mark.integration
P = "onceflow_aggregation_"


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample on the job's metrics port: (name, sorted labels) -> value."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    return samples[(P + name, tuple(sorted(labels.items())))]


def exported(
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float | None:
    """The sample, or None while the job has not exported it yet."""
    return samples.get((P + name, tuple(sorted(labels.items()))))


def test_metrics_match_the_ledger_and_journeys_say_where_each_event_went(
    pipeline: Pipeline,
) -> None:
    events = interleave(make_history(60, seed=21, days=2), seed=21)
    dupes = events[:15]
    bad = [Record(b"k", b"not json"), Record(b"k", None)]
    produce(pipeline.bootstrap, pipeline.topic, [e.record() for e in [*events, *dupes]] + bad)
    job = pipeline.start()
    try:
        pipeline.wait_applied(len(events), len(bad), job)
        ledger: list[Any] = []

        def counted() -> bool:
            ledger[:] = pipeline.query(
                "SELECT count(*), sum(records), sum(events_new), sum(duplicates),"
                " sum(dead_letters), sum(late_events) FROM aggregation.applied_batches"
            )[0]
            samples = scrape(pipeline.metrics_port)
            return exported(samples, "records_total") == ledger[1] and all(
                exported(samples, "offsets_behind", topic=pipeline.topic, partition=str(p)) == 0
                for p in range(3)
            )

        wait_for(counted, what="the metrics of every applied batch", timeout=60)
        samples = scrape(pipeline.metrics_port)
        batches, records, new, duplicates, dead, late = ledger
        assert (records, new, duplicates, dead, late) == (
            len(events) + len(dupes) + len(bad), len(events), len(dupes), len(bad), 0,
        )  # fmt: skip
        assert value(samples, "batches_total") == batches
        assert value(samples, "events_total", result="new") == new
        assert value(samples, "events_total", result="duplicate") == duplicates
        assert value(samples, "events_total", result="late") == 0
        assert value(samples, "dead_letters_total") == dead
        assert value(samples, "sink_seconds_count", stage="postgres") == batches
        assert value(samples, "batch_duration_seconds", part="triggerExecution") > 0
        assert (P + "input_rows_per_second", ()) in samples
        assert (P + "processed_rows_per_second", ()) in samples
        newest = max(e.occurred_at for e in events)
        lag = pipeline.query(f"SELECT extract(epoch FROM now() - '{newest.isoformat()}')")[0][0]
        assert abs(value(samples, "freshness_seconds") - float(lag)) < 30
        stamp = value(samples, "last_batch_timestamp_seconds")
        assert 0 < pipeline.query(f"SELECT extract(epoch FROM now()) - {stamp}")[0][0] < 600
    finally:
        assert job.stop() == 0
    check_journeys(pipeline, events, {e.event_id for e in dupes})


def check_journeys(pipeline: Pipeline, events: list[Any], duplicated: set[str]) -> None:
    """One order with several events, one of them produced twice: each hop of its journey
    equals its source."""
    per_order = Counter(e.order["id"] for e in events)
    order_id = next(
        o
        for o, n in per_order.items()
        if n >= 2 and any(e.event_id in duplicated for e in events if e.order["id"] == o)
    )
    mine = [e for e in events if e.order["id"] == order_id]
    settings = pipeline.settings.model_copy(update={"topic": pipeline.topic})
    group = NotificationSettings(notify_group=f"test-journey-{pipeline.id}")
    j = journey(settings=settings, order_id=order_id.upper(), notify=group)
    assert j is not None
    assert (j.order_id, j.status) == (order_id, None)  # not in this database's orders.orders
    assert [(h.event_id, h.event_type, h.occurred_at) for h in j.events] == [
        (e.event_id, e.event_type, e.occurred_at) for e in mine
    ]
    in_kafka = read_events(
        pipeline.bootstrap, pipeline.topic, keys=[order_id], expected=len(mine), timeout=60
    )
    first_copy: dict[str, tuple[int, int]] = {}
    for record in in_kafka:  # a duplicated event is remembered at its first copy
        first_copy.setdefault(record.value["event_id"], (record.partition, record.offset))
    batches = {
        (q, b): spans
        for q, b, spans in pipeline.query(
            "SELECT query_id, batch_id, offsets FROM aggregation.applied_batches"
        )
    }
    for hop in j.events:
        assert (hop.kafka_partition, hop.kafka_offset) == first_copy[hop.event_id]
        assert hop.kafka_timestamp is not None
        assert hop.batch is not None
        assert hop.batch.committed_at is not None
        span = batches[(hop.batch.query_id, hop.batch.batch_id)][str(hop.kafka_partition)]
        assert span["first"] <= (hop.kafka_offset or 0) <= span["last"]
        assert hop.notification.id == notification_id(hop.event_id)
        assert hop.notification.produced is False  # the group committed nothing yet

    # The group commits past the first event only: that one's notification was produced.
    first = j.events[0]
    assert first.kafka_partition is not None
    assert first.kafka_offset is not None
    committer = Consumer(
        {**client_config(pipeline.bootstrap, "tests"), "group.id": group.notify_group}
    )
    try:
        committer.commit(
            offsets=[TopicPartition(pipeline.topic, first.kafka_partition, first.kafka_offset + 1)],
            asynchronous=False,
        )
    finally:
        committer.close()
    again = journey(settings=settings, order_id=order_id, notify=group)
    assert again is not None
    assert [h.notification.produced for h in again.events] == [True] + [False] * (len(mine) - 1)
    assert again.as_dict()["events"][0]["notification"]["produced"] is True
    assert journey(settings=settings, order_id=str(uuid.uuid4()), notify=group) is None


def test_a_busy_metrics_port_stops_the_job_with_a_sentence(pipeline: Pipeline) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", pipeline.metrics_port))
        held.listen()
        job = pipeline.start()
        assert job.wait(60) == 2
    assert f"cannot serve metrics on 127.0.0.1:{pipeline.metrics_port}" in job.output()
    assert "ONCEFLOW_AGG_METRICS_PORT" in job.output()
