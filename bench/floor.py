"""The machine's floor for a backfill (issue 28): a topic read as fast as one lean
`read_committed` consumer can, and the rows the aggregation job would stage for it COPYed into
an unlogged table shaped like the staging area, on the same machine.

    .venv/bin/python -m bench.floor --events 1000000

produces generated contract-section-4 events to a fresh topic (as `bench.aggregation_bench
backfill` does), reads them once with confluent-kafka (assigned partitions, no group, stops at
every partition's end), parses each record with the product's reader (onceflow.events: the
fast path, else the exact one, whose reason makes a dead letter), builds the staging area's row
(onceflow/schema/staged.py, the columns of spark_jobs/aggregation/staging.py) and COPYs it, one
COPY and one transaction per batch of the job's backfill size, into an UNLOGGED copy of
aggregation.staged_records (its columns, defaults and index) in a scratch database.
`bench.aggregation_bench backfill --floor` runs it beside the job in the same run and reports
the job's rate as a ratio to it.

What is not the job's: the content fingerprint is blake2b over the event's sorted JSON (C
code, as a lean writer would hash), not Spark's xxhash64 of the typed event (the pure-Python
port, services/ops/fingerprint.py, costs ~70 us an event and would make the floor a measure of
Python); and there is no fold, no ledger: the floor is the read, the parse and the staging
write only.
"""

import hashlib
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import orjson
import psycopg
import typer
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from bench.backfill_topic import backfill_topic
from bench.soak_sample import cpu_seconds
from onceflow import contract as C  # noqa: N812
from onceflow.events import InvalidEventError, read
from onceflow.settings import get_aggregation_settings, get_settings
from onceflow.settings.kafka_auth import client_config
from spark_jobs.aggregation import staging
from stack import postgres

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

# The staging area's columns, in the order a COPY below sends them.
TABLE_COLUMNS = (*staging.KEY, *staging.COLUMNS)
QUERY_ID = "floor"
BEGINNING = -2  # confluent_kafka.OFFSET_BEGINNING
_RANK = {status.value: rank for status, rank in C.STATUS_RANK.items()}
_WITH_ITEMS = frozenset({C.EventType.PLACED.value, C.EventType.CANCELLED.value})
_NO_EVENT = (None,) * (len(staging.EVENTS.names) - len(staging.POSITION))
_NO_DEAD_LETTER = (None,) * (len(staging.COLUMNS) - len(staging.EVENTS.names))
Row = tuple[Any, ...]


def _instant(text: str) -> datetime:
    """An RFC 3339 time the reader accepted (a lower-case `t` or `z` included)."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return datetime.fromisoformat(text.upper())


def _day(at: datetime) -> date:
    return at.astimezone(UTC).date()


def content_fingerprint(doc: dict[str, Any]) -> int:
    """A signed 64-bit hash of the event's content (its keys sorted), as a bigint column."""
    digest = hashlib.blake2b(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS), digest_size=8)
    return int.from_bytes(digest.digest(), "little", signed=True)


def staged_row(
    topic: str,
    partition: int,
    offset: int,
    timestamp_ms: int | None,
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes | None]] | None,
    max_bytes: int = C.MAX_EVENT_BYTES,
) -> Row:
    """The staging area's columns after its key (staging.COLUMNS) for one record: a valid
    event's, or a dead letter's (topic, key, value and the reader's reason), as
    spark_jobs/aggregation/render.staged_rows makes them."""
    try:
        event, doc = read(key, value, headers, max_bytes)
    except InvalidEventError as exc:
        return (partition, offset, *_NO_EVENT, topic, key, value, str(exc))
    order = doc["order"]
    at = _instant(event.occurred_at)
    stamp = None if timestamp_ms is None else datetime.fromtimestamp(timestamp_ms / 1000, UTC)
    items = orjson.dumps(order["items"]).decode() if event.event_type in _WITH_ITEMS else None
    return (
        partition,
        offset,
        stamp,
        event.event_id,
        event.event_type,
        at,
        _day(at),
        event.order_id,
        event.customer_id,
        event.currency,
        order["status"],
        _RANK.get(order["status"]),
        event.total_cents,
        items,
        content_fingerprint(doc),
        *_NO_DEAD_LETTER,
    )


def batches(rows: Iterable[Row], size: int) -> Iterator[list[Row]]:
    """`rows` in lists of at most `size` (the last one shorter), none empty."""
    if size < 1:
        raise ValueError(f"a batch holds at least one row, not {size}")
    batch: list[Row] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def create_table(table: str) -> str:
    """An UNLOGGED copy of the staging area: its columns, defaults and index."""
    return (
        f"CREATE UNLOGGED TABLE {table} (LIKE {staging.AREA} INCLUDING DEFAULTS INCLUDING INDEXES)"
    )


def copy_statement(table: str) -> str:
    """The COPY that loads TABLE_COLUMNS rows into `table`."""
    return f"COPY {table} ({', '.join(TABLE_COLUMNS)}) FROM STDIN"


@dataclass(frozen=True)
class Floor:
    """One floor run: what it read and staged, how long it took, the CPU it used."""

    records: int
    dead_letters: int
    seconds: float
    reader_cpu: float  # this process (consume, parse, COPY client side)
    postgres_cpu: float  # the backend that ran the COPYs

    @property
    def rate(self) -> float:
        """Records per wall second."""
        return self.records / self.seconds


class _Records:
    """A topic's records from the earliest offset to every partition's end, read_committed."""

    def __init__(self, bootstrap: str, topic: str, principal: str) -> None:
        self.consumer = Consumer(
            {
                **client_config(bootstrap, principal),
                "group.id": f"onceflow-floor-{uuid.uuid4().hex[:8]}",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "fetch.max.bytes": 64 * 1024 * 1024,
                "max.partition.fetch.bytes": 16 * 1024 * 1024,
                "queued.max.messages.kbytes": 256 * 1024,
            }
        )
        metadata = self.consumer.list_topics(topic, timeout=30).topics[topic]
        if metadata.error is not None:
            raise KafkaException(metadata.error)
        self.partitions = sorted(metadata.partitions)
        self.consumer.assign([TopicPartition(topic, p, BEGINNING) for p in self.partitions])

    def messages(self, timeout: float) -> Iterator[Message]:
        deadline = time.monotonic() + timeout
        ended: set[int] = set()
        try:
            while len(ended) < len(self.partitions):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the topic was not read to its end in {timeout:.0f} s")
                for msg in self.consumer.consume(10_000, timeout=1.0):
                    err = msg.error()
                    if err is None:
                        yield msg
                    elif err.code() == KafkaError._PARTITION_EOF:
                        ended.add(msg.partition() or 0)
                    else:
                        raise KafkaException(err)
        finally:
            self.consumer.close()


def _headers(msg: Message) -> list[tuple[str, bytes | None]] | None:
    """A record's headers as the reader takes them (confluent-kafka gives them as a list)."""
    headers: Any = msg.headers()
    return headers  # type: ignore[no-any-return]


def _local_backend(conn: psycopg.Connection[Any]) -> int | None:
    """The pid of the connection's backend when it runs on this machine."""
    pid = conn.info.backend_pid
    try:
        local = Path(f"/proc/{pid}/comm").read_text().strip() == "postgres"
    except OSError:
        return None
    return pid if local else None


def run(
    bootstrap: str,
    topic: str,
    database: str,
    *,
    principal: str = "tests",
    batch_rows: int | None = None,
    timeout: float = 1800,
) -> Floor:
    """Read `topic` to its end and COPY its staged rows into a fresh unlogged table of
    `database` (dropped after); the Postgres backend's CPU is read from /proc when Postgres
    runs on this machine (else 0)."""
    settings, job = get_settings(), get_aggregation_settings()
    size = batch_rows or job.agg_backfill_max_offsets_per_trigger
    table = f"public.floor_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres.superuser_conninfo(settings, database)) as conn:
        conn.execute(create_table(table))
        conn.commit()
        try:
            backend = _local_backend(conn)
            pg0 = cpu_seconds([backend]) if backend else 0.0
            started, process0 = time.monotonic(), time.process_time()
            records = _Records(bootstrap, topic, principal)
            rows = (
                staged_row(
                    topic,
                    m.partition() or 0,
                    m.offset() or 0,
                    m.timestamp()[1],
                    m.key(),
                    m.value(),
                    _headers(m),
                    job.agg_max_event_bytes,
                )
                for m in records.messages(timeout)
            )
            n = dead = 0
            for batch_id, batch in enumerate(batches(rows, size)):
                cur = conn.cursor()
                with cur.copy(copy_statement(table)) as copy:
                    for row in batch:
                        copy.write_row((QUERY_ID, batch_id, *row))
                conn.commit()
                n += cur.rowcount  # as Postgres counted them
                dead += sum(1 for row in batch if row[-1] is not None)
            seconds = time.monotonic() - started
            reader_cpu = time.process_time() - process0
            pg_cpu = cpu_seconds([backend]) - pg0 if backend else 0.0
        finally:
            conn.rollback()
            conn.execute(f"DROP TABLE IF EXISTS {table}")
            conn.commit()
    return Floor(n, dead, seconds, reader_cpu, pg_cpu)


def describe(floor: Floor) -> str:
    """One line for a benchmark's output."""
    return (
        f"floor: {floor.records} records ({floor.dead_letters} dead letters) in"
        f" {floor.seconds:.1f}s = {floor.rate:,.0f} events/s; CPU: reader {floor.reader_cpu:.1f}"
        f" s, Postgres backend {floor.postgres_cpu:.1f} s"
    )


@app.command()
def main(events: int = 1_000_000, runs: int = 1) -> None:
    """The floor for ~N generated events on a fresh topic and database (then removed)."""
    with backfill_topic(events) as (p, _):
        for _ in range(runs):
            print(describe(run(p.bootstrap, p.topic, p.database)))


if __name__ == "__main__":
    app()
