"""Show the last events on the order topic as a read_committed consumer sees them."""

import json
from typing import cast

import typer
from confluent_kafka import Consumer, TopicPartition
from rich.console import Console

from onceflow.settings import get_settings

console = Console()


def _text(raw: str | bytes | None) -> str:
    return raw.decode() if isinstance(raw, bytes) else (raw or "")


def peek(last: int = typer.Option(5, help="events per partition"), timeout: float = 10.0) -> None:
    """Print key, headers and value of the newest committed events of each partition."""
    settings = get_settings()
    consumer = Consumer(
        {
            "bootstrap.servers": settings.kafka_bootstrap,
            "group.id": "onceflow-peek",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    try:
        metadata = consumer.list_topics(settings.topic, timeout=timeout).topics[settings.topic]
        if metadata.error is not None:
            console.print(f"topic {settings.topic}: {metadata.error.str()}")
            raise typer.Exit(1)
        assignment = []
        for partition in metadata.partitions:
            low, high = consumer.get_watermark_offsets(
                TopicPartition(settings.topic, partition), timeout=timeout
            )
            assignment.append(TopicPartition(settings.topic, partition, max(low, high - last)))
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
            console.print_json(json.dumps(json.loads(_text(message.value()))))
    finally:
        consumer.close()


if __name__ == "__main__":
    typer.run(peek)
