"""What Kafka's SASL/SCRAM and ACLs cost a client and the broker, against PLAINTEXT (not a test).

    .venv/bin/python -m bench.kafka_auth_bench --records 100000 --rounds 3

One Kafka node of its own (tests/integration/stack/sasl_node.py: rendered as `make up`
renders it with SASL on, every principal and the ACL table created) with a second, PLAINTEXT
listener whose anonymous principal is a super user (the migration listener's settings): the
same broker, log and topic through both doors. After a warm-up of each (a tenth of N, not
counted), each round runs both modes, in alternating order: a transactional producer writes N
outbox-sized records in transactions of 1,000 (as Connect does), then a read_committed
consumer reads them back (as the job and the processor).
SASL connects as the `tests` principal, whose every request the ACL table decides; PLAINTEXT
as the super user, whom it does not. Reported per mode: this process's CPU seconds (the
librdkafka clients), the broker's (the kernel's count for its process) and the wall time.
"""

import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from onceflow.watermarks import watermarks
from stack.waiting import wait_for
from tests.integration.stack.sasl_node import Node, pid_cpu_seconds, sasl_node

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
PARTITIONS = 3
TRANSACTION = 1_000
# About an outbox record: the event's JSON with two items.
VALUE = b"x" * 600


@dataclass(frozen=True)
class Cost:
    client_cpu: float
    broker_cpu: float
    wall: float


def _measured(node: Node, work: Callable[[], None]) -> Cost:
    client, broker, wall = time.process_time(), pid_cpu_seconds(node.pid), time.monotonic()
    work()
    return Cost(
        time.process_time() - client,
        pid_cpu_seconds(node.pid) - broker,
        time.monotonic() - wall,
    )


def _produce(config: dict[str, Any], topic: str, records: int) -> None:
    producer = Producer({**config, "transactional.id": f"{topic}-{uuid.uuid4()}"})
    producer.init_transactions(30)
    for start in range(0, records, TRANSACTION):
        producer.begin_transaction()
        for i in range(start, min(start + TRANSACTION, records)):
            producer.produce(topic, VALUE, f"k{i}".encode(), i % PARTITIONS)
            producer.poll(0)
        producer.commit_transaction(60)


def _consume(config: dict[str, Any], topic: str, offsets: list[int], records: int) -> None:
    consumer = Consumer(
        {**config, "group.id": f"{topic}-reader", "isolation.level": "read_committed"}
    )
    consumer.assign([TopicPartition(topic, p, offsets[p]) for p in range(PARTITIONS)])
    seen, deadline = 0, time.monotonic() + 300
    while seen < records and time.monotonic() < deadline:
        for message in consumer.consume(1000, 1.0):
            if message.error() is None:
                seen += 1
    consumer.close()
    if seen < records:
        raise SystemExit(f"read {seen} of {records} records back")


def _ends(config: dict[str, Any], topic: str) -> list[int]:
    consumer = Consumer({**config, "group.id": f"{topic}-ends"})
    ends = [watermarks(consumer, topic, p, timeout=30)[1] for p in range(PARTITIONS)]
    consumer.close()
    return ends


def _run(node: Node, mode: str, topic: str, records: int) -> tuple[Cost, Cost]:
    assert node.open_bootstrap is not None
    config = (
        node.config("tests")
        if mode == "sasl"
        else {"bootstrap.servers": node.open_bootstrap, "log_level": 0}
    )
    offsets = _ends(config, topic)
    wrote = _measured(node, lambda: _produce(config, topic, records))
    read = _measured(node, lambda: _consume(config, topic, offsets, records))
    return wrote, read


@app.command()
def main(records: int = 100_000, rounds: int = 3) -> None:
    """SASL/SCRAM + ACLs against PLAINTEXT on one node: produce and read back N records."""
    with (
        tempfile.TemporaryDirectory() as folder,
        sasl_node(Path(folder), with_open_listener=True) as node,
    ):
        topic = f"auth-bench-{uuid.uuid4().hex[:8]}"
        admin = AdminClient(node.config("tests"))
        admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(timeout=30)
        wait_for(
            lambda: all(
                p.leader >= 0
                for p in admin.list_topics(topic, timeout=10).topics[topic].partitions.values()
            ),
            what=f"{topic}'s partition leaders",
            timeout=60,
        )
        # Not counted: the first transactions, groups and JIT compilations of each door.
        for mode in ("sasl", "plaintext"):
            _run(node, mode, topic, max(records // 10, TRANSACTION))
        costs: dict[tuple[str, str], list[Cost]] = {}
        for n in range(rounds):
            for mode in ("sasl", "plaintext") if n % 2 == 0 else ("plaintext", "sasl"):
                wrote, read = _run(node, mode, topic, records)
                for step, cost in (("produce", wrote), ("consume", read)):
                    costs.setdefault((mode, step), []).append(cost)
                    print(
                        f"round {n + 1} {mode:9} {step:7}: client {cost.client_cpu:.2f} CPU-s, "
                        f"broker {cost.broker_cpu:.2f} CPU-s, wall {cost.wall:.2f} s",
                        flush=True,
                    )
        for step in ("produce", "consume"):
            medians = {
                mode: Cost(
                    *(
                        statistics.median(getattr(c, field) for c in costs[(mode, step)])
                        for field in ("client_cpu", "broker_cpu", "wall")
                    )
                )
                for mode in ("sasl", "plaintext")
            }
            sasl, plain = medians["sasl"], medians["plaintext"]
            print(
                f"{step} {records} records, medians of {rounds}: SASL client "
                f"{sasl.client_cpu:.2f} / broker {sasl.broker_cpu:.2f} CPU-s, wall "
                f"{sasl.wall:.2f} s; PLAINTEXT {plain.client_cpu:.2f} / {plain.broker_cpu:.2f}"
                f" CPU-s, {plain.wall:.2f} s; SASL/PLAINTEXT client "
                f"{sasl.client_cpu / plain.client_cpu:.2f}, broker "
                f"{sasl.broker_cpu / plain.broker_cpu:.2f}",
                flush=True,
            )


if __name__ == "__main__":
    app()
