"""Notifications processor benchmark (not a test): one instance's throughput on a pre-produced
backlog, then the latency it adds at a steady event rate.

    .venv/bin/python -m bench.notify_bench [--events 1000000] [--rate 500] [--seconds 60]

Runs on private scratch topics and group (tests/integration/notifications/harness.py) on the
running local broker, deleted at the end. Throughput: N valid v1 events are produced first, then
ONE instance (`python -m services.notifications 1`) starts; the clock runs from the group's
first committed offsets to its committed offsets reaching the end of every input partition, and
the instance's CPU time (/proc/<pid>/stat utime+stime) over the same span is divided by the
events it committed. Latency: with the instance caught up, events at --rate for --seconds;
latency = the notification visible to a read_committed reader - the input's delivery report,
matched by the eventId header. Prints a Markdown table for docs/benchmarks.md.

An A/B of the processor's code: `git archive <commit> | tar -x -C /tmp/a`, then
`--tree /tmp/a --tree . [--rounds 3] --events 200000` runs each tree's processor (its own
services/ and onceflow/, on this environment) on a fresh backlog of its own, interleaved
ABBA, and prints throughput and CPU per event per round with their medians.
"""

import json
import os
import platform
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any, cast

import typer
from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition

from onceflow.settings.kafka_auth import client_config
from onceflow.watermarks import watermarks
from stack.topics import PARTITIONS
from tests.integration.notifications.harness import Instance, Scratch
from tests.oracle.events import event

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
EVENT_MARK, ORDER_MARK = "EVENT-ID-MARK", "ORDER-ID-MARK"

Headers = list[tuple[str, str | bytes | None]]


def _uuid_prefix() -> str:
    """The first 24 characters of a random UUID (its version and variant digits included)."""
    return str(uuid.uuid4())[:24]


@dataclass(frozen=True)
class Template:
    """One valid OrderPlaced event whose ids are filled in per event: distinct UUIDs made by
    string formatting (a random prefix + a 12-hex-digit counter), no json.dumps per event."""

    value: str
    event_prefix: str
    order_prefix: str

    @classmethod
    def new(cls) -> "Template":
        now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
        e = event(event_id=EVENT_MARK, occurred_at=now, order={"id": ORDER_MARK})
        return cls(json.dumps(e), _uuid_prefix(), _uuid_prefix())

    def event_id_of(self, key: bytes) -> str:
        """The event id of the record whose key (order id) is `key`."""
        return self.event_prefix + key.decode()[len(self.order_prefix) :]

    def record(self, i: int) -> tuple[bytes, bytes, Headers]:
        """Event i: key = its order id, headers id/eventType as the connector writes them."""
        event_id, order_id = f"{self.event_prefix}{i:012x}", f"{self.order_prefix}{i:012x}"
        value = self.value.replace(EVENT_MARK, event_id).replace(ORDER_MARK, order_id)
        headers: Headers = [("id", event_id.encode()), ("eventType", b"OrderPlaced")]
        return order_id.encode(), value.encode(), headers


def machine() -> str:
    """CPU model, cores and RAM of this machine."""
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo if "model name" in line), "?")
    meminfo = Path("/proc/meminfo").read_text().split()
    ram_gb = int(meminfo[meminfo.index("MemTotal:") + 1]) / 1024**2
    return f"{model}, {os.cpu_count()} cores, {ram_gb:.0f} GB RAM, {platform.machine()}"


def cpu_seconds(pid: int) -> float:
    """utime+stime of process `pid`."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def produce_backlog(scratch: Scratch, template: Template, events: int) -> float:
    """Produce `events` events as fast as the idempotent producer goes; the seconds it took."""
    producer = Producer(
        {
            **client_config(scratch.settings.kafka_bootstrap, "tests"),
            "enable.idempotence": True,
            "linger.ms": 50,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 500_000,
        }
    )
    started, topic = time.monotonic(), scratch.input_topic
    for i in range(events):
        key, value, headers = template.record(i)
        while True:
            try:
                producer.produce(topic, value, key, headers=headers)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(300) == 0, "the backlog was not fully delivered"
    return time.monotonic() - started


def end_offsets(scratch: Scratch) -> list[TopicPartition]:
    """The high watermark of every input partition (the backlog is not transactional)."""
    consumer = Consumer(
        {**client_config(scratch.settings.kafka_bootstrap, "tests"), "group.id": "x"}
    )
    try:
        ends = []
        for p in range(PARTITIONS):
            _low, high = watermarks(consumer, scratch.input_topic, p, timeout=30)
            ends.append(TopicPartition(scratch.input_topic, p, high))
        return ends
    finally:
        consumer.close()


def committed_reader(scratch: Scratch) -> Callable[[], int]:
    """A function returning the group's committed input offsets, summed over partitions."""
    consumer = Consumer(
        {
            **client_config(scratch.settings.kafka_bootstrap, "tests"),
            "group.id": scratch.notify.notify_group,  # never joins: committed() only
            "enable.auto.commit": False,
        }
    )
    partitions = [TopicPartition(scratch.input_topic, p) for p in range(PARTITIONS)]

    def total() -> int:
        return sum(max(tp.offset, 0) for tp in consumer.committed(partitions, timeout=30))

    return total


@dataclass
class Throughput:
    events: int  # committed between the first observation and the end
    seconds: float
    cpu_seconds: float
    startup_seconds: float  # process start -> first committed offsets

    @property
    def rate(self) -> float:
        return self.events / self.seconds

    @property
    def cpu_us_per_event(self) -> float:
        return self.cpu_seconds / self.events * 1e6


def measure_throughput(instance: Instance, committed: Callable[[], int], end: int) -> Throughput:
    """Poll the group's committed offsets every 0.5 s, from the first commit to `end`."""
    spawned, pid = time.monotonic(), instance.process.pid
    first = committed()
    while first == 0:
        assert instance.process.poll() is None, "the instance exited"
        time.sleep(0.5)
        first = committed()
    t0, cpu0 = time.monotonic(), cpu_seconds(pid)
    last, reported = first, t0
    while last < end:
        assert instance.process.poll() is None, "the instance exited"
        time.sleep(0.5)
        last = committed()
        if time.monotonic() - reported >= 10:
            reported = time.monotonic()
            print(f"  {last:,}/{end:,} committed, {reported - t0:.0f}s", flush=True)
    t1, cpu1 = time.monotonic(), cpu_seconds(pid)
    return Throughput(last - first, t1 - t0, cpu1 - cpu0, t0 - spawned)


class Visibility(threading.Thread):
    """Reads the notifications topic (read_committed) from its current end; notes when each
    event id's notification first became visible (monotonic clock)."""

    def __init__(self, scratch: Scratch) -> None:
        super().__init__(daemon=True)
        self.seen: dict[str, float] = {}
        self.ready, self.done = threading.Event(), threading.Event()
        self._consumer = Consumer(
            {
                **client_config(scratch.settings.kafka_bootstrap, "tests"),
                "group.id": f"bench-reader-{uuid.uuid4()}",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
                "fetch.wait.max.ms": 10,  # the instrument must not add its own wait
            }
        )
        # Explicit end offsets: OFFSET_END is resolved lazily and could skip the first records.
        ends = []
        for p in range(PARTITIONS):
            tp = TopicPartition(scratch.notify.notify_topic, p)
            ends.append(TopicPartition(tp.topic, p, self._consumer.get_watermark_offsets(tp)[1]))
        self._consumer.assign(ends)

    def run(self) -> None:
        try:
            while not self.done.is_set():
                messages = self._consumer.consume(1000, 0.05)
                now = time.monotonic()
                self.ready.set()
                for message in messages:
                    self._note(message, now)
        finally:
            self._consumer.close()

    def _note(self, message: Message, now: float) -> None:
        error = message.error()
        if error is not None:
            if error.code() != KafkaError._PARTITION_EOF:
                raise RuntimeError(error.str())
            return
        pairs = cast(list[tuple[str, bytes | None]], message.headers() or [])
        event_id = dict(pairs).get("eventId")
        if event_id is not None:
            self.seen.setdefault(event_id.decode(), now)


def produce_steady(
    scratch: Scratch, template: Template, rate: int, seconds: float, first: int
) -> dict[str, float]:
    """Events at `rate`/s for `seconds`; event id -> when its delivery report arrived."""
    delivered: dict[str, float] = {}

    def on_delivery(error: KafkaError | None, message: Message) -> None:
        key = message.key()
        if error is None and key is not None:  # headers are not in delivery reports
            delivered[template.event_id_of(key)] = time.monotonic()

    producer = Producer(
        {
            **client_config(scratch.settings.kafka_bootstrap, "tests"),
            "enable.idempotence": True,
            "linger.ms": 0,
            "on_delivery": on_delivery,
        }
    )
    start, count = time.monotonic(), int(rate * seconds)
    for n in range(count):
        while (wait := start + n / rate - time.monotonic()) > 0:
            producer.poll(wait)  # serves delivery reports while pacing
        key, value, headers = template.record(first + n)
        producer.produce(scratch.input_topic, value, key, headers=headers)
        producer.poll(0)
    assert producer.flush(60) == 0
    return delivered


@dataclass
class Latency:
    sent: int
    matched: int
    p50: float
    p99: float
    max: float
    cpu_us_per_event: float


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile of sorted `values`."""
    return values[min(len(values) - 1, int(q * len(values)))]


def measure_latency(
    scratch: Scratch, instance: Instance, template: Template, rate: int, seconds: float, first: int
) -> Latency:
    """Steady input at `rate`: input delivered -> notification visible, per event id."""
    reader = Visibility(scratch)
    reader.start()
    assert reader.ready.wait(30), "the notifications reader did not start"
    cpu0 = cpu_seconds(instance.process.pid)
    delivered = produce_steady(scratch, template, rate, seconds, first)
    deadline = time.monotonic() + 60
    while len(reader.seen) < len(delivered) and time.monotonic() < deadline:
        time.sleep(0.5)
    cpu = cpu_seconds(instance.process.pid) - cpu0
    reader.done.set()
    reader.join(30)
    latencies = sorted(reader.seen[e] - t for e, t in delivered.items() if e in reader.seen)
    assert latencies, "no notification became visible"
    return Latency(
        sent=len(delivered),
        matched=len(latencies),
        p50=percentile(latencies, 0.5) * 1e3,
        p99=percentile(latencies, 0.99) * 1e3,
        max=latencies[-1] * 1e3,
        cpu_us_per_event=cpu / len(delivered) * 1e6,
    )


def report(
    scratch: Scratch, events: int, produce_s: float, t: Throughput, lat: Latency, rate: int
) -> None:
    """The Markdown summary: machine, settings, figures, targets."""
    notify = scratch.notify
    print(f"\nmachine: {machine()}; load average {os.getloadavg()[0]:.1f} at the end")
    print(
        f"settings: batch {notify.notify_batch_records} records / {notify.notify_batch_ms} ms, "
        f"transaction timeout {notify.notify_transaction_timeout_ms} ms, 1 instance, "
        f"{PARTITIONS} input partitions"
    )
    print("\n| measure | value | target |")
    print("|---|---|---|")
    print(f"| backlog pre-produced | {events:,} events in {produce_s:.1f} s | |")
    print(f"| instance start → first committed offsets | {t.startup_seconds:.1f} s | |")
    print(
        f"| throughput (first commit → all input committed) | {t.events:,} events in "
        f"{t.seconds:.1f} s = **{t.rate:,.0f} events/s** | ≥ 20,000 events/s |"
    )
    print(f"| instance CPU per event (backlog) | {t.cpu_us_per_event:.0f} µs | |")
    print(
        f"| added latency at {rate} events/s ({lat.matched:,}/{lat.sent:,} matched) | "
        f"p50 {lat.p50:.0f} ms, **p99 {lat.p99:.0f} ms**, max {lat.max:.0f} ms | p99 ≤ 300 ms |"
    )
    print(f"| instance CPU per event (at {rate}/s) | {lat.cpu_us_per_event:.0f} µs | |")


def scrape(scratch: Scratch, n: int) -> dict[str, float]:
    """The instance's own counters: transactions, commit seconds, notified records."""
    url = f"http://127.0.0.1:{scratch.notify.metrics_port(n)}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    wanted = {
        'onceflow_notifications_transactions_total{outcome="committed"}': "transactions",
        "onceflow_notifications_commit_seconds_sum": "commit_seconds",
        'onceflow_notifications_records_total{outcome="notified"}': "notified",
    }
    values = dict(line.rsplit(" ", 1) for line in text.splitlines() if line[:1] != "#")
    return {name: float(values.get(metric, "0")) for metric, name in wanted.items()}


def batches(before: dict[str, float], after: dict[str, float]) -> str:
    """Records per transaction and commit time per transaction between two scrapes."""
    txns = after["transactions"] - before["transactions"]
    if txns <= 0:
        return "no transaction"
    records = (after["notified"] - before["notified"]) / txns
    commit_ms = (after["commit_seconds"] - before["commit_seconds"]) / txns * 1e3
    return f"{txns:,.0f} transactions, {records:.0f} records and {commit_ms:.0f} ms commit each"


def throughput_of(tree: Path, events: int) -> Throughput:
    """One instance of the processor in `tree` on a fresh backlog of `events` events."""
    with tempfile.TemporaryDirectory(prefix="notify-bench-") as tmp:
        scratch = Scratch(Path(tmp), name=f"bench-notify-{uuid.uuid4().hex[:10]}", tree=tree)
        scratch.create()
        try:
            produce_backlog(scratch, Template.new(), events)
            end = sum(tp.offset for tp in end_offsets(scratch))
            instance = Instance(scratch, 1, Path(tmp) / "instance.log")
            result = measure_throughput(instance, committed_reader(scratch), end)
            assert instance.stop() == 0, (Path(tmp) / "instance.log").read_text()[-3000:]
            return result
        finally:
            scratch.delete()


def compare(trees: list[Path], rounds: int, events: int) -> None:
    """Throughput and CPU per event of each tree's processor, interleaved ABBA round by round
    (a drift of the machine hits every tree alike); per-round figures and medians."""
    results: dict[Path, list[Throughput]] = {tree: [] for tree in trees}
    for round_ in range(rounds):
        for tree in trees if round_ % 2 == 0 else trees[::-1]:
            t = throughput_of(tree, events)
            results[tree].append(t)
            print(
                f"  round {round_ + 1} {tree}: {t.rate:,.0f} events/s, "
                f"{t.cpu_us_per_event:.1f} µs/event",
                flush=True,
            )
    print(f"\nmachine: {machine()}; load average {os.getloadavg()[0]:.1f} at the end")
    print(f"{events:,} events per run, {rounds} rounds, one instance, {PARTITIONS} partitions")
    print("\n| tree | events/s per round | median | CPU µs/event per round | median |")
    print("|---|---|---|---|---|")
    for tree, runs in results.items():
        rates = [r.rate for r in runs]
        cpus = [r.cpu_us_per_event for r in runs]
        print(
            f"| {tree} | {', '.join(f'{r:,.0f}' for r in rates)} | **{median(rates):,.0f}** | "
            f"{', '.join(f'{c:.1f}' for c in cpus)} | **{median(cpus):.1f}** |"
        )


@app.command()
def main(
    events: int = 1_000_000,
    rate: int = 500,
    seconds: float = 60,
    batch_records: int | None = None,
    batch_ms: int | None = None,
    tree: list[Path] | None = None,
    rounds: int = 3,
) -> None:
    """Throughput of one instance on a backlog, then its added latency at a steady rate. With
    --tree (repeated: source trees, e.g. `git archive <commit>` of an older commit, and `.`):
    only the throughput of each, interleaved for --rounds rounds."""
    env: dict[str, Any] = {"ONCEFLOW_NOTIFY_BATCH_RECORDS": batch_records}
    env["ONCEFLOW_NOTIFY_BATCH_MS"] = batch_ms
    extra = {k: str(v) for k, v in env.items() if v is not None}
    os.environ.update(extra)  # Scratch.notify (the report) and the instance read the same
    if tree:
        compare([t.resolve() for t in tree], rounds, events)
        return
    with tempfile.TemporaryDirectory(prefix="notify-bench-") as tmp:
        scratch = Scratch(Path(tmp), name=f"bench-notify-{uuid.uuid4().hex[:10]}")
        scratch.create()
        try:
            template = Template.new()
            produce_s = produce_backlog(scratch, template, events)
            end = sum(tp.offset for tp in end_offsets(scratch))
            print(f"pre-produced {end:,} events in {produce_s:.1f}s", flush=True)
            instance = Instance(scratch, 1, Path(tmp) / "instance.log")
            scrapes = [scrape(scratch, 1)]
            throughput = measure_throughput(instance, committed_reader(scratch), end)
            scrapes.append(scrape(scratch, 1))
            print(f"throughput: {throughput.rate:,.0f} events/s", flush=True)
            latency = measure_latency(scratch, instance, template, rate, seconds, events)
            scrapes.append(scrape(scratch, 1))
            assert instance.stop() == 0, (Path(tmp) / "instance.log").read_text()[-3000:]
            report(scratch, events, produce_s, throughput, latency, rate)
            print(f"| transactions (backlog) | {batches(scrapes[0], scrapes[1])} | |")
            print(f"| transactions (at {rate}/s) | {batches(scrapes[1], scrapes[2])} | |")
        finally:
            scratch.delete()


if __name__ == "__main__":
    app()
