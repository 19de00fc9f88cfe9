"""The order topic's partition count raised from 3 to 6 while the aggregation job runs and input
flows (docs/operations.md, 'Raising the partition count'): the job takes the new partitions on
its own and counts each event once, also every earlier event replayed after the change (whose
key now maps to another partition): its set of applied event ids is global."""

import functools
import threading
from datetime import UTC, datetime, timedelta

import pytest
from confluent_kafka import KafkaError, Message, Producer

from onceflow.settings.kafka_auth import client_config
from stack.waiting import wait_for
from tests.integration.aggregation.conftest import Pipeline
from tests.integration.aggregation.history import Event, interleave, make_history, produce
from tests.integration.aggregation.tables import assert_exact
from tests.integration.notifications.harness import raise_partitions, topic_partitions

pytestmark = pytest.mark.integration
RAISED = 6


class Flow:
    """Produces events one by one at a steady rate (not transactional, as a replaying tool
    would), noting the partition each landed on."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.topic = pipeline.topic
        self.landed: dict[str, int] = {}  # event id -> partition
        self._producer = Producer(
            {
                **client_config(pipeline.bootstrap, "tests"),
                "enable.idempotence": True,
                "topic.metadata.refresh.interval.ms": 1000,  # sees added partitions soon
            }
        )

    def send(self, events: list[Event], per_second: float = 0) -> None:
        stop = threading.Event()
        for e in events:
            r = e.record()
            self._producer.produce(
                self.topic,
                r.value,
                r.key,
                headers=r.headers,
                on_delivery=functools.partial(self._landed, e.event_id),
            )
            self._producer.poll(0)
            if per_second:
                stop.wait(1 / per_second)
        assert self._producer.flush(30) == 0

    def sees(self, count: int) -> bool:
        metadata = self._producer.list_topics(self.topic, timeout=10)
        return len(metadata.topics[self.topic].partitions) == count

    def _landed(self, event_id: str, error: KafkaError | None, message: Message) -> None:
        partition = message.partition()
        if error is None and partition is not None:
            self.landed[event_id] = partition


def test_raising_the_partition_count_while_input_flows(pipeline: Pipeline) -> None:
    assert len(topic_partitions(pipeline.bootstrap, pipeline.topic)) < RAISED
    now = datetime.now(UTC)
    events = interleave(make_history(50, seed=22, start=now - timedelta(days=2), days=1), seed=22)
    first, rest = events[: len(events) // 3], events[len(events) // 3 :]
    produce(pipeline.bootstrap, pipeline.topic, [e.record() for e in first])
    job = pipeline.start()
    try:
        pipeline.wait_applied(len(first), 0, job)
        flow = Flow(pipeline)
        flowing = threading.Thread(target=flow.send, args=(rest, 40), daemon=True)
        flowing.start()
        raise_partitions(pipeline.bootstrap, pipeline.topic, RAISED)
        flowing.join(60)
        assert not flowing.is_alive()
        wait_for(lambda: flow.sees(RAISED), what="the producer to see them", timeout=30)
        # Every event of before the change again, with its key: many map elsewhere now.
        flow.send(first)
        assert any(flow.landed[e.event_id] >= 3 for e in first)
        pipeline.wait_applied(len(events), 0, job)

        def replays_seen() -> bool:
            ledger = pipeline.query(
                "SELECT coalesce(sum(duplicates), 0) FROM aggregation.applied_batches"
            )
            return bool(ledger[0][0] >= len(first))

        wait_for(replays_seen, what="every replay read as a duplicate", timeout=120)
    finally:
        assert job.stop() == 0
    assert_exact(pipeline, events)
    ledger = pipeline.query("SELECT sum(duplicates) FROM aggregation.applied_batches")
    assert ledger == [(len(first),)]
