"""Scratch topics, processor instances as real processes, input producers and a read_committed
reader of what the processors wrote: the notifications processor tested on the real broker."""

import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from confluent_kafka import (
    Consumer,
    IsolationLevel,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewPartitions, OffsetSpec

from onceflow.paths import ROOT
from onceflow.settings import NotificationSettings, RetentionSettings, Settings, get_settings
from onceflow.settings.kafka_auth import client_config
from onceflow.watermarks import watermarks
from stack import topics
from stack.waiting import NotReadyError, port_open, wait_for
from tests.e2e.kafka_reader import Record as Committed
from tests.e2e.kafka_reader import read_until
from tests.oracle.events import Record, event, record


def free_port_base(count: int) -> int:
    """A base port such that base+1..base+count are free now, below the kernel's ephemeral
    range (so no outgoing connection takes one of them in the meantime)."""
    while True:
        base = random.randrange(20_000, 30_000)
        try:
            with contextlib.ExitStack() as held:
                for port in range(base + 1, base + count + 1):
                    probe = held.enter_context(socket.socket())
                    probe.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base


def topic_partitions(bootstrap: str, topic: str) -> list[int]:
    """The topic's partitions now."""
    admin = AdminClient(client_config(bootstrap, "tests"))
    return sorted(admin.list_topics(topic, timeout=30).topics[topic].partitions)


def raise_partitions(bootstrap: str, topic: str, count: int) -> None:
    """Raise the topic's partition count to `count` (docs/operations.md), and wait until the
    metadata shows them."""
    admin = AdminClient(client_config(bootstrap, "tests"))
    (future,) = admin.create_partitions([NewPartitions(topic, count)]).values()
    future.result(timeout=30)
    wait_for(
        lambda: len(topic_partitions(bootstrap, topic)) == count,
        what="the new partitions",
        timeout=30,
    )


@dataclass
class Scratch:
    """A private copy of the processor's topics and group."""

    state_dir: Path
    name: str = field(default_factory=lambda: f"test-notify-{uuid.uuid4().hex[:10]}")
    settings: Settings = field(default_factory=get_settings)
    port_base: int = field(default_factory=lambda: free_port_base(10))
    instances: list["Instance"] = field(default_factory=list)
    tree: Path = ROOT  # the source tree whose processor runs (a benchmark's older commit)

    @property
    def notify(self) -> NotificationSettings:
        return NotificationSettings(
            notify_topic=f"{self.name}-out",
            notify_dlq_topic=f"{self.name}-dlq",
            notify_changelog_topic=f"{self.name}-seen",
            notify_group=self.name,
            notify_state_dir=self.state_dir,
            notify_metrics_port_base=self.port_base,
        )

    @property
    def input_topic(self) -> str:
        return f"{self.name}-in"

    def partitions(self) -> list[int]:
        """The input topic's partitions now."""
        return topic_partitions(self.settings.kafka_bootstrap, self.input_topic)

    def create(self) -> None:
        wanted = topics.pipeline_topics(
            self.settings.model_copy(update={"topic": self.input_topic}),
            self.notify,
            RetentionSettings(),
        )
        topics.ensure_topics(self.settings.kafka_bootstrap, wanted)
        names = [t.name for t in wanted]
        admin = AdminClient(client_config(self.settings.kafka_bootstrap, "tests"))
        wait_for(
            lambda: self._ready(admin, names), what="the scratch topics' partitions", timeout=60
        )

    @staticmethod
    def _ready(admin: AdminClient, names: list[str]) -> bool:
        """Every partition of these topics has a leader that answers for its log. Records a test
        produced within ~0.1 s of creating its topics were seen lost now and then (one order's
        records: no delivery report, not in the topic) until the test waited for this."""
        listed = admin.list_topics(timeout=30).topics
        request = {}
        for name in names:
            topic = listed.get(name)
            if topic is None or topic.error is not None or not topic.partitions:
                return False
            if any(p.error is not None or p.leader < 0 for p in topic.partitions.values()):
                return False
            latest = OffsetSpec.latest()  # type: ignore[no-untyped-call]
            request.update({TopicPartition(name, p): latest for p in topic.partitions})
        try:
            for future in admin.list_offsets(request, request_timeout=30).values():
                future.result()
        except KafkaException:
            return False
        return True

    def tell(self) -> None:
        """Print what each instance logged above INFO (a failed test shows it as captured
        output: a CI run keeps no files)."""
        for instance in self.instances:
            instance.dump_stacks()  # a live one may be where the test got stuck
            lines = instance.log.read_text(errors="replace").splitlines()
            told = [line for line in lines if '"level":"INFO"' not in line]
            print(f"--- instance {instance.n} ({instance.log.name}): {len(told)} lines above INFO")
            print("\n".join(line[:600] for line in told[-40:]))

    def delete(self) -> None:
        for instance in self.instances:  # left running by a failed test
            if instance.process.poll() is None:
                instance.process.kill()
                instance.process.wait(30)
        admin = AdminClient(client_config(self.settings.kafka_bootstrap, "tests"))
        names = [self.input_topic, *(f"{self.name}-{s}" for s in ("out", "dlq", "seen"))]
        for future in admin.delete_topics(names).values():
            future.result(timeout=30)

    def env(self, **extra: str) -> dict[str, str]:
        notify = self.notify
        return {
            **os.environ,
            "ONCEFLOW_TOPIC": self.input_topic,
            "ONCEFLOW_NOTIFY_TOPIC": notify.notify_topic,
            "ONCEFLOW_NOTIFY_DLQ_TOPIC": notify.notify_dlq_topic,
            "ONCEFLOW_NOTIFY_CHANGELOG_TOPIC": notify.notify_changelog_topic,
            "ONCEFLOW_NOTIFY_GROUP": notify.notify_group,
            "ONCEFLOW_NOTIFY_STATE_DIR": str(self.state_dir),
            "ONCEFLOW_NOTIFY_METRICS_PORT_BASE": str(self.port_base),
            **extra,
        }


class Instance:
    """One processor process (instance n of the scratch group)."""

    def __init__(self, scratch: Scratch, n: int, log: Path, **env: str) -> None:
        self.n = n
        scratch.instances.append(self)
        self.log = log
        self._log = log.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "services.notifications", str(n)],
            cwd=scratch.tree,
            env=scratch.env(**env),
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        # Its metrics port opens once it handles SIGTERM (so stop() means a clean stop).
        wait_for(
            lambda: port_open("127.0.0.1", scratch.port_base + n),
            what=f"notifications instance {n}",
            timeout=60,
        )

    def status(self) -> str:
        """The process state letter of /proc (R, S, T = stopped, ...)."""
        return Path(f"/proc/{self.process.pid}/stat").read_text().split(") ")[1][0]

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    def stop(self, timeout: float = 60) -> int:
        """SIGTERM and wait; the exit code. One that does not stop in time leaves its threads'
        stacks in its log (and the test fails saying so)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.dump_stacks()
            raise AssertionError(
                f"instance {self.n} did not stop within {timeout:.0f} s of SIGTERM"
            ) from None
        self._log.close()
        return code

    def dump_stacks(self) -> None:
        """A running instance writes every thread's stack to its log (faulthandler, SIGUSR1)."""
        if self.process.poll() is not None:
            return
        size = self.log.stat().st_size
        self.process.send_signal(signal.SIGUSR1)
        with contextlib.suppress(NotReadyError):
            wait_for(lambda: self.log.stat().st_size > size, what="a stack dump", timeout=5)


class Input:
    """Produces v1 events (one order per customer, each order's events in order) and poison."""

    def __init__(self, scratch: Scratch) -> None:
        self.topic = scratch.input_topic
        self._producer = Producer(
            {
                **client_config(scratch.settings.kafka_bootstrap, "tests"),
                "enable.idempotence": True,
                "topic.metadata.refresh.interval.ms": 2000,  # sees added partitions soon
            }
        )
        # The topic's partitions known before the first record (see Scratch._ready).
        listed = self._producer.list_topics(self.topic, timeout=30).topics[self.topic]
        assert listed.error is None, f"{self.topic}: {listed.error}"
        assert listed.partitions, f"{self.topic} has no partitions"
        self.event_ids: list[str] = []
        self.sent: list[Record] = []  # the valid records, to send again as duplicates
        self.poison: dict[bytes, str] = {}  # raw value -> the dead letter's error
        self.sequence: dict[str, list[str]] = {}  # customer -> its event ids, in order
        self.landed: dict[bytes, int] = {}  # a delivered value -> its partition
        self.offsets: dict[bytes, tuple[int, int]] = {}  # a delivered value -> partition, offset
        self.values: dict[str, bytes] = {}  # event id -> its record's value
        self.refused: dict[bytes, str] = {}  # a value the broker never took -> the error

    def order(self, *, events: int = 2) -> None:
        """Produce one order's first `events` events (placed, paid, shipped)."""
        order_id, customer = str(uuid.uuid4()), f"c-{uuid.uuid4().hex[:12]}"
        for event_type in ("OrderPlaced", "OrderPaid", "OrderShipped")[:events]:
            # Now: events far in the past would fall outside the de-duplication window.
            now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
            e = event(event_type, order={"id": order_id, "customer_id": customer}, occurred_at=now)
            self.sent.append(record(e))
            self.send(self.sent[-1])
            self.values[e["event_id"]] = self.sent[-1][1] or b""
            self.event_ids.append(e["event_id"])
            self.sequence.setdefault(customer, []).append(e["event_id"])

    def send(self, r: Record, *, partition: int = -1) -> None:
        """Produce `r` (to `partition`; -1: where the partitioner puts its key)."""
        key, value, _topic, _partition, _offset, headers = r
        self._producer.produce(
            self.topic, value, key, partition=partition, headers=headers, on_delivery=self._landed
        )
        self._producer.poll(0)

    def _landed(self, error: KafkaError | None, message: Message) -> None:
        value, partition, offset = message.value(), message.partition(), message.offset()
        if error is not None and value is not None:
            self.refused[value] = error.str()
        if error is None and value is not None and partition is not None:
            self.landed[value] = partition
            if offset is not None:
                self.offsets[value] = (partition, offset)

    def where(self, event_ids: set[str]) -> str:
        """Where these events' records landed (partition@offset), for a failure message."""
        index = {e: i for i, e in enumerate(self.event_ids)}
        found = sorted((index.get(e, -1), e) for e in event_ids)
        total = len(self.event_ids)
        return ", ".join(f"#{i}/{total} {self._where(self.values.get(e, b''))}" for i, e in found)

    def _where(self, value: bytes) -> str:
        if value in self.offsets:
            partition, offset = self.offsets[value]
            return f"{partition}@{offset}"
        return f"not delivered ({self.refused.get(value, 'no delivery report yet')})"

    def poison_record(self, *, pad: int = 0) -> None:
        """A record that is not JSON; padded past the event size limit, an oversized one."""
        value = f"not an event {uuid.uuid4()}".encode() + b" " * pad
        self.send((b"poison", value, None, None, None, []))
        size = len(value)
        limit = NotificationSettings().notify_max_event_bytes
        self.poison[value] = (
            f"oversized: {size} bytes > {limit}" if size > limit else "value is not JSON"
        )

    def flush(self) -> None:
        assert self._producer.flush(30) == 0


@dataclass
class Output:
    notifications: list[dict[str, Any]]
    dead_letters: list[tuple[bytes | None, dict[str, str]]]


@contextlib.contextmanager
def group_view(scratch: Scratch) -> Iterator[tuple[Consumer, list[TopicPartition]]]:
    """A consumer in the processors' group (never subscribed: it only reads the group's
    committed offsets) and the input's partitions."""
    consumer = Consumer(
        {**client_config(scratch.settings.kafka_bootstrap, "tests"), "group.id": scratch.name}
    )
    try:
        yield consumer, [TopicPartition(scratch.input_topic, p) for p in scratch.partitions()]
    finally:
        consumer.close()


def _ends(consumer: Consumer, parts: list[TopicPartition]) -> dict[int, int]:
    """Each of `parts`'s high watermark, by partition."""
    return {
        tp.partition: watermarks(consumer, tp.topic, tp.partition, timeout=30)[1] for tp in parts
    }


def wait_caught_up(scratch: Scratch, timeout: float) -> None:
    """Wait until the processors' group has committed every input partition up to its end."""
    with group_view(scratch) as (consumer, parts):
        ends = _ends(consumer, parts)

        def done() -> bool:
            committed = consumer.committed(parts, timeout=30)
            return all(tp.offset >= ends[tp.partition] for tp in committed)

        wait_for(done, what="the processors to commit all input", timeout=timeout)


def group_positions(scratch: Scratch) -> str:
    """The processors' committed offsets against each input partition's end (a failure's
    evidence: which partition stopped short, and where)."""
    with group_view(scratch) as (consumer, parts):
        committed = consumer.committed(parts, timeout=30)
        ends = _ends(consumer, parts)
        return ", ".join(f"{tp.partition}: {tp.offset}/{ends[tp.partition]}" for tp in committed)


def committed_reader(scratch: Scratch, topic_names: list[str]) -> Consumer:
    """A read_committed consumer of `topic_names` from their beginning, in a group of its own."""
    consumer = Consumer(
        {
            **client_config(scratch.settings.kafka_bootstrap, "tests"),
            "group.id": f"reader-{uuid.uuid4()}",
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe(topic_names)
    return consumer


def read_output(scratch: Scratch, *, notifications: int, dead: int, timeout: float) -> Output:
    """Both output topics (read_committed), read to their end once at least the counts
    arrived: any extra record, which would be a duplicate, is read too."""
    notify = scratch.notify

    def enough(records: list[Committed]) -> bool:
        sent = sum(r.topic == notify.notify_topic for r in records)
        return sent >= notifications and len(records) - sent >= dead

    records = read_until(
        scratch.settings.kafka_bootstrap,
        [notify.notify_topic, notify.notify_dlq_topic],
        enough=enough,
        timeout=timeout,
    )
    out = Output([], [])
    for r in records:
        headers = {k: (v or b"").decode() for k, v in r.headers}
        if r.topic == notify.notify_topic:
            assert r.value is not None
            out.notifications.append(
                {**json.loads(r.value), "_headers": headers, "_partition": r.partition}
            )
        else:
            out.dead_letters.append((r.value, headers))
    return out


def assert_exactly_once(source: Input, out: Output, *, ordered: bool = True) -> None:
    """One notification per input event, none missing, each customer's in order (unless not
    `ordered`); the dead letters are exactly the poison records."""
    assert len(source.event_ids) >= 100, "the test produced too little input to prove anything"
    counts = Counter(n["event_id"] for n in out.notifications)
    duplicated = {e: c for e, c in counts.items() if c > 1}
    assert not duplicated, f"{len(duplicated)} events notified more than once"
    missing = set(source.event_ids) - set(counts)
    assert not missing, f"{len(missing)} of {len(source.event_ids)} events have no notification"
    assert set(counts) == set(source.event_ids)
    for n in out.notifications:
        assert n["_headers"] == {"id": n["notification_id"], "eventId": n["event_id"]}
    by_customer: dict[str, list[str]] = {}
    for n in out.notifications:
        by_customer.setdefault(n["customer_id"], []).append(n["event_id"])
    if ordered:
        assert by_customer == source.sequence
    else:
        assert {c: sorted(ids) for c, ids in by_customer.items()} == {
            c: sorted(ids) for c, ids in source.sequence.items()
        }
    assert {v or b"": h["error"] for v, h in out.dead_letters} == source.poison
    assert len(out.dead_letters) == len(source.poison)


def check(scratch: Scratch, source: Input, timeout: float = 120, *, ordered: bool = True) -> None:
    """Once the group committed all input: one notification per event, the poison dead."""
    source.flush()
    wait_caught_up(scratch, timeout)
    out = read_output(
        scratch, notifications=len(source.event_ids), dead=len(source.poison), timeout=timeout
    )
    assert_exactly_once(source, out, ordered=ordered)


def open_transactions(scratch: Scratch) -> str:
    """Per notifications partition, its last stable offset against its end: a gap is a
    transaction still open there, which holds every read_committed reader back."""
    admin = AdminClient(client_config(scratch.settings.kafka_bootstrap, "tests"))
    topic = scratch.notify.notify_topic
    parts = topic_partitions(scratch.settings.kafka_bootstrap, topic)
    ends = {}
    for level in (IsolationLevel.READ_COMMITTED, IsolationLevel.READ_UNCOMMITTED):
        request = {TopicPartition(topic, p): OffsetSpec.latest() for p in parts}  # type: ignore[no-untyped-call]
        answers = admin.list_offsets(request, isolation_level=level, request_timeout=30)
        ends[level] = {tp.partition: f.result().offset for tp, f in answers.items()}
    stable, end = ends[IsolationLevel.READ_COMMITTED], ends[IsolationLevel.READ_UNCOMMITTED]
    return ", ".join(f"{p}: {stable[p]}/{end[p]}" for p in parts)


def wait_notified(
    scratch: Scratch, source: Input, ids: list[str], *, not_before: float, timeout: float
) -> None:
    """Wait until every one of `ids` (events of `source`) has a committed notification and the
    monotonic clock has passed `not_before`; AssertionError after `timeout` seconds, saying
    where the missing events' records are and where the group's committed offsets stand."""
    wanted = set(ids)
    consumer = committed_reader(scratch, [scratch.notify.notify_topic])
    deadline = time.monotonic() + timeout
    try:
        while wanted or time.monotonic() < not_before:
            assert time.monotonic() < deadline, (
                f"{len(wanted)} events still not notified; their records at "
                f"{source.where(set(list(wanted)[:10]))}; the group's committed offsets / ends: "
                f"{group_positions(scratch)}; the notifications' stable offsets / ends: "
                f"{open_transactions(scratch)}"
            )
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                wanted.discard(json.loads(message.value() or b"{}").get("event_id"))
    finally:
        consumer.close()
