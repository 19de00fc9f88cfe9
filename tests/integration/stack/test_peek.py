"""`python -m stack.peek` is bounded: it prints the last N committed records of each partition
(transaction markers and aborted records take offsets, not places) and returns within seconds,
also while records keep arriving; `--follow` is the explicit way to tail."""

import re
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from onceflow.settings import get_settings
from onceflow.settings.kafka_auth import client_config
from stack.waiting import wait_for

pytestmark = pytest.mark.integration
BOOTSTRAP = get_settings().kafka_bootstrap
PARTITIONS = 2
RECORD = re.compile(r"^p(\d+)@(\d+) key=", re.MULTILINE)


@pytest.fixture
def topic() -> Iterator[str]:
    name = f"peek-{uuid.uuid4().hex[:10]}"
    admin = AdminClient(client_config(BOOTSTRAP, "tests"))
    admin.create_topics([NewTopic(name, num_partitions=PARTITIONS)])[name].result(timeout=30)
    yield name
    admin.delete_topics([name])[name].result(timeout=30)


def transactional() -> Producer:
    producer = Producer(
        {**client_config(BOOTSTRAP, "tests"), "transactional.id": f"peek-{uuid.uuid4()}"}
    )
    producer.init_transactions(30)
    return producer


def transaction(producer: Producer, topic: str, value: str, *, commit: bool = True) -> None:
    """One record on every partition, in one transaction (committed or aborted)."""
    producer.begin_transaction()
    for partition in range(PARTITIONS):
        producer.produce(topic, f'{{"v": "{value}"}}'.encode(), b"k", partition)
    assert producer.flush(30) == 0
    if commit:
        producer.commit_transaction(30)
    else:
        producer.abort_transaction(30)


def offsets(text: str) -> dict[int, list[int]]:
    """Each partition's offsets that peek printed."""
    shown: dict[int, list[int]] = {partition: [] for partition in range(PARTITIONS)}
    for partition, offset in RECORD.findall(text):
        shown[int(partition)].append(int(offset))
    return shown


def run_peek(topic: str, *args: str) -> tuple[dict[int, list[int]], float]:
    """Run `python -m stack.peek` as the README does (killed after 10 s): what it printed,
    and how long it took."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "stack.peek", topic, *args],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    return offsets(done.stdout), took


def test_last_5_prints_5_records_per_partition_past_markers_and_aborts(topic: str) -> None:
    producer = transactional()
    for n in range(8):
        transaction(producer, topic, f"committed-{n}")
    transaction(producer, topic, "aborted", commit=False)
    shown, _ = run_peek(topic, "--last", "5")
    # Each transaction: a record then a marker, so the 8th committed record is at offset 14.
    assert shown == {partition: [6, 8, 10, 12, 14] for partition in range(PARTITIONS)}


def test_returns_within_10_s_while_records_flow(topic: str) -> None:
    producer = transactional()
    for n in range(5):
        transaction(producer, topic, f"before-{n}")
    stop = threading.Event()
    written = Counter[str]()

    def flow() -> None:
        while not stop.is_set():
            transaction(producer, topic, "flowing")
            written["transactions"] += 1

    writer = threading.Thread(target=flow, daemon=True)
    writer.start()
    try:
        shown, took = run_peek(topic, "--last", "5")
    finally:
        stop.set()
        writer.join(30)
    assert took < 10
    assert written["transactions"] > 0  # records did arrive while peek read
    assert {partition: len(offsets) for partition, offsets in shown.items()} == {
        partition: 5 for partition in range(PARTITIONS)
    }


def test_follow_prints_the_last_records_then_new_ones(topic: str) -> None:
    producer = transactional()
    transaction(producer, topic, "before")
    tail = subprocess.Popen(
        [sys.executable, "-m", "stack.peek", topic, "--last", "1", "--follow"],
        stdout=subprocess.PIPE,
        text=True,
    )
    stdout, lines = tail.stdout, list[str]()
    assert stdout is not None
    reader = threading.Thread(target=lambda: lines.extend(iter(stdout.readline, "")))
    reader.start()
    try:
        wait_for(lambda: len(offsets("".join(lines))[1]) == 1, what="the last records", timeout=10)
        transaction(producer, topic, "after")
        wait_for(lambda: len(offsets("".join(lines))[1]) == 2, what="a new record", timeout=10)
    finally:
        tail.terminate()
        tail.wait(10)
        reader.join(10)
    assert offsets("".join(lines)) == {partition: [0, 2] for partition in range(PARTITIONS)}
