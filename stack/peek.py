"""Show the last records of a topic (default: the order topic) as a read_committed consumer
sees them."""

import json
from typing import cast

import typer
from confluent_kafka import Consumer, TopicPartition
from rich.console import Console

from onceflow.settings import get_settings

console = Console()


def _text(raw: str | bytes | None) -> str:
    return raw.decode() if isinstance(raw, bytes) else (raw or "")


def peek(
    topic: str = typer.Argument("", help="default: the order-event topic"),
    last: int = typer.Option(5, help="records per partition"),
    timeout: float = 10.0,
) -> None:
    """Print key, headers and value of the newest committed records of each partition."""
    settings = get_settings()
    topic = topic or settings.topic
    consumer = Consumer(
        {
            "bootstrap.servers": settings.kafka_bootstrap,
            "group.id": "onceflow-peek",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    try:
        metadata = consumer.list_topics(topic, timeout=timeout).topics[topic]
        if metadata.error is not None:
            console.print(f"topic {topic}: {metadata.error.str()}")
            raise typer.Exit(1)
        assignment = []
        for partition in metadata.partitions:
            low, high = consumer.get_watermark_offsets(
                TopicPartition(topic, partition), timeout=timeout
            )
            assignment.append(TopicPartition(topic, partition, max(low, high - last)))
        consumer.assign(assignment)
        while (message := consumer.poll(2.0)) is not None:
            if message.error():
                continue
            pairs = cast(list[tuple[str, bytes | None]], message.headers() or [])
            headers = {name: _text(raw) for name, raw in pairs}
            console.print(
                f"[bold]p{message.partition()}@{message.offset()}[/] "
                f"key={_text(message.key())} headers={headers}"
            )
            try:
                console.print_json(json.dumps(json.loads(_text(message.value()))))
            except (ValueError, UnicodeDecodeError):
                console.print(repr(message.value()))  # a dead letter's raw value
    finally:
        consumer.close()


if __name__ == "__main__":
    typer.run(peek)
