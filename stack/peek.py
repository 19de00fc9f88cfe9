"""Show the last records of a topic (default: the order topic) as a read_committed consumer
sees them, and return: each partition is read up to its end offset as of the start, however fast
records arrive. `--follow` then tails the topic until Ctrl-C."""

import json
import time
from typing import cast

import typer
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition
from rich.console import Console

from onceflow.settings import get_settings
from onceflow.settings.kafka_auth import client_config
from onceflow.watermarks import watermarks

console = Console()
POLL_S = 0.5


class PeekError(RuntimeError):
    """The topic cannot be read: said in one sentence."""


def _text(raw: str | bytes | None) -> str:
    return raw.decode() if isinstance(raw, bytes) else (raw or "")


def show(message: Message) -> None:
    """Print one record: partition@offset, key and headers, then its value (JSON if it is)."""
    pairs = cast(list[tuple[str, bytes | None]], message.headers() or [])
    headers = {name: _text(raw) for name, raw in pairs}
    console.print(
        f"[bold]p{message.partition()}@{message.offset()}[/] "
        f"key={_text(message.key())} headers={headers}",
        highlight=False,
        soft_wrap=True,  # one line per record, however narrow the terminal
    )
    try:
        console.print_json(json.dumps(json.loads(_text(message.value()))))
    except (ValueError, UnicodeDecodeError):
        console.print(repr(message.value()), highlight=False)  # a dead letter's raw value


def _read(
    consumer: Consumer, topic: str, starts: dict[int, int], ends: dict[int, int], deadline: float
) -> dict[int, list[Message]]:
    """Each partition's committed records from its start up to (not including) its end, all
    partitions read at once."""
    found: dict[int, list[Message]] = {partition: [] for partition in starts}
    pending = {partition for partition, start in starts.items() if start < ends[partition]}
    consumer.assign([TopicPartition(topic, p, starts[p]) for p in sorted(pending)])
    while pending and time.monotonic() < deadline:
        message = consumer.poll(POLL_S)
        if message is None or message.partition() not in pending:
            continue
        partition, error = cast(int, message.partition()), message.error()
        if error is not None and error.code() != KafkaError._PARTITION_EOF:
            raise PeekError(f"reading {topic} partition {partition}: {error.str()}")
        if error is not None or (message.offset() or 0) >= ends[partition]:
            pending.discard(partition)  # at its end (markers or aborted records may remain)
        else:
            found[partition].append(message)
    return found


def last_records(
    consumer: Consumer, topic: str, partitions: list[int], last: int, deadline: float
) -> tuple[dict[int, list[Message]], dict[int, int]]:
    """The newest `last` committed records of each partition, and the end offsets (as of now)
    they stop at. Transaction markers and aborted records take offsets too, so a partition's
    window widens back until it holds `last` records or starts at the partition's beginning."""
    wait = max(deadline - time.monotonic(), 0.1)
    lows, ends = {}, {}
    for partition in partitions:
        lows[partition], ends[partition] = watermarks(consumer, topic, partition, timeout=wait)
    found: dict[int, list[Message]] = {partition: [] for partition in partitions}
    short, span = list(partitions) if last else [], last
    while short and time.monotonic() < deadline:
        starts = {p: max(lows[p], ends[p] - span) for p in short}
        found.update(_read(consumer, topic, starts, ends, deadline))
        short = [p for p in short if len(found[p]) < last and starts[p] > lows[p]]
        span *= 4
    return {p: records[-last:] if last else [] for p, records in found.items()}, ends


def peek(
    topic: str = typer.Argument("", help="default: the order-event topic"),
    last: int = typer.Option(5, "--last", min=0, help="records per partition"),
    follow: bool = typer.Option(False, "--follow", help="then print new records until Ctrl-C"),
    timeout: float = typer.Option(10.0, "--timeout", min=1, help="seconds for the last records"),
) -> None:
    """Print key, headers and value of the newest committed records of each partition."""
    settings = get_settings()
    topic = topic or settings.topic
    deadline = time.monotonic() + timeout
    consumer = Consumer(
        {
            **client_config(settings.kafka_bootstrap, "ops"),
            "group.id": "onceflow-ops-peek",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "fetch.wait.max.ms": 100,  # an idle partition's end is seen within 0.1 s
        }
    )
    try:
        metadata = consumer.list_topics(topic, timeout=timeout).topics[topic]
        if metadata.error is not None:
            raise PeekError(f"topic {topic}: {metadata.error.str()}")
        partitions = sorted(metadata.partitions)
        found, ends = last_records(consumer, topic, partitions, last, deadline)
        for partition in partitions:
            for message in found[partition]:
                show(message)
        if follow:
            _follow(consumer, [TopicPartition(topic, p, ends[p]) for p in partitions])
    except (PeekError, KafkaException) as exc:
        console.print(f"peek failed: {exc}", highlight=False)
        raise typer.Exit(1) from exc
    finally:
        consumer.close()


def _follow(consumer: Consumer, ends: list[TopicPartition]) -> None:
    """Print every committed record from `ends` on, until Ctrl-C."""
    consumer.assign(ends)
    try:
        while True:
            message = consumer.poll(POLL_S)
            if message is not None and message.error() is None:
                show(message)
    except KeyboardInterrupt:
        return


if __name__ == "__main__":
    typer.run(peek)
