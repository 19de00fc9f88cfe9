"""One run of both real consumers over one scratch topic carrying every case, and what they
left behind: the aggregation job's tables and dead letters, the notifications processor's
notifications and dead letters (read_committed, to the end), and whether either stopped.

The job and one processor instance start, the cases are produced (one Kafka transaction each,
on the case's partition), and the run waits until the job's ledger covers every produced record
and the processor's group committed past it; then the later cases' records (a reused event id
whose first copy both stages have counted by then), and the same wait. Then both are checked
alive and stopped
(SIGTERM), and only then are the output topics read, up to the high watermarks of that moment:
no writer is left to add anything after them.
"""

import json
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition

from onceflow import contract
from onceflow.settings.kafka_auth import client_config
from stack import topics
from stack.waiting import NotReadyError, wait_for
from tests.e2e.kafka_reader import Record as Committed
from tests.e2e.kafka_reader import TopicReader
from tests.integration.aggregation.conftest import Job, Pipeline
from tests.integration.aggregation.history import Record
from tests.integration.aggregation.tables import db_tables
from tests.integration.notifications.harness import Instance, Scratch
from tests.integration.poison.cases import Case, build_cases

# Both consumers' value limit: the contract's (a record above it is "oversized").
LIMIT = contract.MAX_EVENT_BYTES
# The scratch topic's and the producer's message limit: room for the 1 MB string, which the
# broker's default (1 MiB) would refuse, so the consumers, not the transport, judge it.
MAX_MESSAGE = 2 * 1024 * 1024
AGGREGATION_TIMEOUT = 480.0
NOTIFICATIONS_TIMEOUT = 240.0
READ_TIMEOUT = 120.0

Position = tuple[int, int]  # partition, offset


@dataclass(frozen=True)
class DeadRow:
    """A row of analytics.dead_letters."""

    position: Position
    key: bytes | None
    value: bytes | None
    error: str


@dataclass
class Results:
    """What both stages did with the cases."""

    cases: list[Case]
    positions: dict[str, Position]  # case -> where its record landed
    landed: dict[tuple[str, int], Position] = field(default_factory=dict)  # (case, nth record)
    problems: list[str] = field(default_factory=list)  # waits that failed, stages that stopped
    job_log: Path | None = None
    notify_log: Path | None = None
    job_exit: int | None = None
    notify_exit: int | None = None
    dead_rows: list[DeadRow] = field(default_factory=list)
    applied: dict[str, list[Position]] = field(default_factory=dict)  # event id -> rows
    tables: dict[str, Any] = field(default_factory=dict)
    order_state: dict[str, str] = field(default_factory=dict)
    notifications: list[dict[str, Any]] = field(default_factory=list)
    dlq: list[Committed] = field(default_factory=list)

    def case(self, name: str) -> Case:
        (found,) = [c for c in self.cases if c.name == name]
        return found

    def logs(self) -> str:
        """The tail of both stages' logs, for a failure message."""
        tails = []
        for log in (self.job_log, self.notify_log):
            if log is not None and log.exists():
                tails.append(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}")
        return "\n".join(tails)


def source(dead_letter: Committed) -> Position:
    """Where the processor's dead letter came from (its headers; (-1, -1) when absent)."""
    headers = {k: (v or b"").decode() for k, v in dead_letter.headers}
    return int(headers.get("sourcePartition", -1)), int(headers.get("sourceOffset", -1))


def prepare(scratch: Scratch, pipeline: Pipeline) -> None:
    """One input topic for both stages: the scratch one, its message limit raised."""
    scratch.create()
    raised = topics.Topic(scratch.input_topic, {"max.message.bytes": str(MAX_MESSAGE)})
    topics.ensure_topics(scratch.settings.kafka_bootstrap, [raised])
    pipeline.topic = scratch.input_topic


class Input:
    """A transactional producer of the cases, remembering where each record landed."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self._producer = Producer(
            {
                **client_config(bootstrap, "tests"),
                "transactional.id": f"poison-{uuid.uuid4()}",
                "enable.idempotence": True,
                "message.max.bytes": MAX_MESSAGE,
                "linger.ms": 5,
            }
        )
        self._producer.init_transactions(30)
        self.landed: dict[tuple[str, int], Position] = {}  # (case, index in its records)
        self._failed: list[str] = []

    def produce(self, case: Case, indices: range) -> None:
        """Records `indices` of the case (its order's first event, the record, the rest) in
        one transaction, on the case's partition."""
        records: list[Record] = [
            *(e.record() for e in case.before),
            case.record,
            *(e.record() for e in case.after),
        ]
        self._producer.begin_transaction()
        for n in indices:
            r = records[n]
            self._producer.produce(
                self.topic,
                value=r.value,
                key=r.key,
                headers=r.headers or None,
                partition=case.partition,
                on_delivery=self._delivered(case.name, n),
            )
        self._producer.commit_transaction(60)
        assert self._producer.flush(30) == 0
        assert not self._failed, f"records not delivered: {self._failed}"

    def _delivered(self, name: str, n: int) -> Any:
        def report(error: KafkaError | None, message: Message) -> None:
            partition, offset = message.partition(), message.offset()
            if error is not None or partition is None or offset is None:
                self._failed.append(f"{name} #{n}: {error}")
            else:
                self.landed[(name, n)] = (partition, offset)

        return report

    def last(self) -> dict[int, int]:
        """The offset of the last record produced on each partition."""
        last: dict[int, int] = defaultdict(lambda: -1)
        for partition, offset in self.landed.values():
            last[partition] = max(last[partition], offset)
        return dict(last)


def _ledger_covers(pipeline: Pipeline, job: Job, last: dict[int, int]) -> bool:
    """The job is running and its ledger reached the last produced record of each partition."""
    assert job.proc.poll() is None, f"the aggregation job exited ({job.proc.returncode})"
    covered: dict[int, int] = defaultdict(lambda: -1)
    for (offsets,) in pipeline.query("SELECT offsets FROM aggregation.applied_batches"):
        for partition, span in offsets.items():
            covered[int(partition)] = max(covered[int(partition)], int(span["last"]))
    return all(covered[p] >= offset for p, offset in last.items())


def _committed_all(scratch: Scratch, instance: Instance, last: dict[int, int]) -> bool:
    """The processor is running and its group committed each partition past the last produced
    record (not to the high watermark: a transaction's commit marker follows that record)."""
    assert instance.process.poll() is None, (
        f"the notifications processor exited ({instance.process.returncode})"
    )
    consumer = Consumer(
        {**client_config(scratch.settings.kafka_bootstrap, "tests"), "group.id": scratch.name}
    )
    try:
        parts = [TopicPartition(scratch.input_topic, p) for p in last]
        committed = consumer.committed(parts, timeout=30)
        return all(tp.offset > last[tp.partition] for tp in committed)
    finally:
        consumer.close()


def _wait(results: Results, what: str, check: Any, timeout: float) -> None:
    try:
        wait_for(check, what=what, timeout=timeout, interval=1.0)
    except (NotReadyError, AssertionError) as exc:
        results.problems.append(f"{what}: {exc}")


def run(scratch: Scratch, pipeline: Pipeline, tmp: Path) -> Results:
    """Start both stages, produce every case, wait until both are quiet, stop them, collect."""
    cases = build_cases(LIMIT)
    # A few batches, so bad records meet the job in different batches.
    job = pipeline.start(agg_max_event_bytes=str(LIMIT), agg_max_offsets_per_trigger="120")
    try:
        instance = Instance(
            scratch, 1, tmp / "notifications-1.log", ONCEFLOW_NOTIFY_MAX_EVENT_BYTES=str(LIMIT)
        )
    except BaseException:
        job.stop()
        raise
    results = Results(cases, {})
    results.job_log, results.notify_log = job.log, tmp / "notifications-1.log"

    def quiet() -> None:
        last = feed.last()
        _wait(
            results,
            "the aggregation job's ledger to cover every record",
            lambda: _ledger_covers(pipeline, job, last),
            AGGREGATION_TIMEOUT,
        )
        _wait(
            results,
            "the notifications processor to commit all input",
            lambda: _committed_all(scratch, instance, last),
            NOTIFICATIONS_TIMEOUT,
        )

    try:
        feed = Input(scratch.settings.kafka_bootstrap, scratch.input_topic)
        # First everything but the later cases' records; those follow once both stages
        # counted the events before them (a reused id then meets a remembered one).
        for case in cases:
            size = len(case.around) + 1
            feed.produce(case, range(len(case.before) if case.later else size))
        quiet()
        for case in cases:
            if case.later:
                feed.produce(case, range(len(case.before), len(case.around) + 1))
        quiet()
        # Still the processes that started: neither stage stopped or restarted.
        if job.proc.poll() is not None:
            results.problems.append(f"the aggregation job exited ({job.proc.returncode})")
        if instance.process.poll() is not None:
            code = instance.process.returncode
            results.problems.append(f"the notifications processor exited ({code})")
    finally:
        job_exit, notify_exit = job.stop(), instance.stop()
    results.job_exit, results.notify_exit = job_exit, notify_exit
    results.landed = feed.landed
    for case in cases:
        mine = len(case.before)
        results.positions[case.name] = feed.landed[(case.name, mine)]
    collect(results, scratch, pipeline)
    return results


def collect(results: Results, scratch: Scratch, pipeline: Pipeline) -> None:
    """Both stages' outputs, once they stopped: the database, and both output topics to the
    high watermarks taken now (read_committed)."""
    results.dead_rows = [
        DeadRow((p, o), None if k is None else bytes(k), None if v is None else bytes(v), e)
        for p, o, k, v, e in pipeline.query(
            "SELECT kafka_partition, kafka_offset, key, value, error FROM analytics.dead_letters"
        )
    ]
    for event_id, p, o in pipeline.query(
        "SELECT event_id::text, kafka_partition, kafka_offset FROM aggregation.applied_events"
    ):
        results.applied.setdefault(event_id, []).append((p, o))
    results.tables = db_tables(pipeline)
    results.order_state = dict(
        pipeline.query("SELECT order_id, status FROM aggregation.order_state")
    )
    notify = scratch.notify
    reader = TopicReader(
        scratch.settings.kafka_bootstrap, [notify.notify_topic, notify.notify_dlq_topic]
    )
    try:
        records = reader.read_to(reader.high_watermarks(), time.monotonic() + READ_TIMEOUT)
    finally:
        reader.close()
    records.sort(key=lambda r: (r.topic, r.partition, r.offset))
    for r in records:
        if r.topic == notify.notify_topic:
            assert r.value is not None
            headers = {k: (v or b"").decode() for k, v in r.headers}
            results.notifications.append({**json.loads(r.value), "_headers": headers})
        else:
            results.dlq.append(r)
