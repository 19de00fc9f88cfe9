"""`onceflow-ops lag` measures the job read_committed: on a real broker, a job that applied the
last record of every partition is 0 behind, although each transaction leaves a commit marker
after its last record (the end offset counted it as 1 behind per partition)."""

import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaError, Message, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from onceflow.settings import get_settings
from onceflow.settings.kafka_auth import client_config
from services.ops.lag import PartitionLag, partition_lags

pytestmark = pytest.mark.integration
BOOTSTRAP = get_settings().kafka_bootstrap


@pytest.fixture
def topic() -> Iterator[str]:
    name = f"ops-lag-{uuid.uuid4().hex[:10]}"
    admin = AdminClient(client_config(BOOTSTRAP, "tests"))
    admin.create_topics([NewTopic(name, num_partitions=3)])[name].result(timeout=30)
    yield name
    admin.delete_topics([name])[name].result(timeout=30)


class Transactions:
    """One transactional producer; each transaction's record offsets, as delivered."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.producer = Producer(
            {**client_config(BOOTSTRAP, "tests"), "transactional.id": f"ops-lag-{uuid.uuid4()}"}
        )
        self.producer.init_transactions(30)

    def open(self, partition: int, records: int) -> list[int]:
        """Begin a transaction and write `records` records into it, delivered, not ended."""
        offsets: list[int] = []

        def delivered(error: KafkaError | None, message: Message) -> None:
            assert error is None, error
            offsets.append(int(message.offset() or 0))

        self.producer.begin_transaction()
        for i in range(records):
            self.producer.produce(self.topic, f"v{i}".encode(), b"k", partition, delivered)
        assert self.producer.flush(30) == 0
        return offsets

    def commit(self, partition: int, records: int) -> list[int]:
        offsets = self.open(partition, records)
        self.producer.commit_transaction(30)
        return offsets

    def abort(self, partition: int, records: int) -> list[int]:
        offsets = self.open(partition, records)
        self.producer.abort_transaction(30)
        return offsets


def by_partition(lags: list[PartitionLag]) -> dict[int, PartitionLag]:
    return {lag.partition: lag for lag in lags}


def test_a_caught_up_job_is_zero_behind(topic: str) -> None:
    txn = Transactions(topic)
    first, second = txn.commit(0, 3), txn.commit(0, 2)
    kept = txn.commit(1, 1)
    txn.abort(1, 2)  # a trailing aborted transaction: nothing for a read_committed reader
    lags = by_partition(partition_lags(BOOTSTRAP, topic, {0: second[-1], 1: kept[-1]}))
    assert [lag.behind for lag in lags.values()] == [0, 0, 0]
    # The end offsets are past the last records: commit (and abort) markers follow them.
    assert lags[0].end_offset == second[-1] + 2 == lags[0].stable_offset
    assert lags[1].end_offset > kept[-1] + 1
    assert (lags[2].end_offset, lags[2].applied_through) == (0, None)
    assert first[-1] + 2 == second[0]  # each transaction's marker takes one offset


def test_behind_counts_from_the_first_committed_record_not_applied(topic: str) -> None:
    txn = Transactions(topic)
    first, second = txn.commit(0, 3), txn.commit(0, 2)
    lags = by_partition(partition_lags(BOOTSTRAP, topic, {0: first[-1]}))
    # The 2 records of the second transaction and its commit marker.
    assert lags[0].behind == lags[0].stable_offset - second[0] == 3
    never_applied = by_partition(partition_lags(BOOTSTRAP, topic, {}))
    assert never_applied[0].behind == never_applied[0].end_offset == 7


def test_an_open_transaction_is_shown_and_not_counted(topic: str) -> None:
    txn = Transactions(topic)
    done = txn.commit(0, 2)
    txn.open(0, 4)
    try:
        (lag, *_) = partition_lags(BOOTSTRAP, topic, {0: done[-1]})
        assert lag.open_transaction
        assert (lag.stable_offset, lag.end_offset, lag.behind) == (done[-1] + 2, done[-1] + 6, 0)
    finally:
        txn.producer.abort_transaction(30)
    (lag, *_) = partition_lags(BOOTSTRAP, topic, {0: done[-1]})
    assert (lag.open_transaction, lag.behind) == (False, 0)
