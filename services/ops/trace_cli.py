"""`onceflow-ops trace ORDER_ID [--json]`: one order's journey, hop by hop (journey.py)."""

from datetime import datetime

import typer

from onceflow.settings import get_settings
from services.ops.journey import EventHop, Journey, journey
from services.ops.output import JsonFlag, Listing, console, errors, readable_errors, stamp


def _since(at: datetime | None, start: datetime) -> str:
    return "" if at is None else f"+{(at - start).total_seconds():.3f} s"


def _produced(hop: EventHop) -> str:
    produced = hop.notification.produced
    return {True: "[green]produced[/]", False: "[yellow]not yet produced[/]", None: "unknown"}[
        produced
    ]


def _rows(hop: EventHop, topic: str) -> list[tuple[str, str, str, str]]:
    """One event's hops: (hop, UTC time, time since the API commit, where)."""
    batch, start = hop.batch, hop.occurred_at
    kafka = f"{topic} partition {hop.kafka_partition} offset {hop.kafka_offset}"
    applied = "-" if batch is None else f"batch {batch.batch_id} of query {batch.query_id}"
    at = None if batch is None else batch.committed_at
    return [
        ("API commit", stamp(start), "", f"{hop.event_type} {hop.event_id}"),
        ("Kafka", stamp(hop.kafka_timestamp), _since(hop.kafka_timestamp, start), kafka),
        ("aggregation", stamp(at), _since(at, start), applied),
        ("notification", "", "", f"{hop.notification.id} {_produced(hop)}"),
    ]


def show(found: Journey) -> None:
    """The journey: a heading, then each event's hops in order."""
    if found.status is None:
        console.print(f"order {found.order_id}: not in orders.orders (only its events are known)")
    else:
        console.print(
            f"order {found.order_id}: {found.status}, created {stamp(found.created_at)}, "
            f"last changed {stamp(found.updated_at)}",
            highlight=False,
        )
    if not found.events:
        console.print("no event of this order has been applied by the aggregation job yet")
    else:
        table = Listing(("hop", "at (UTC)", "after commit", "what, where"), right=("after commit",))
        for hop in found.events:
            for row in _rows(hop, found.topic):
                table.add_row(*row)
            table.add_section()
        table.print()
    for note in found.notes:
        console.print(f"[yellow]{note}[/]")


def trace(
    as_json: JsonFlag = False,
    order_id: str = typer.Argument(..., help="The order's id (a UUID)."),
) -> None:
    """Show one order's journey: API commit -> Kafka offset -> the batch that counted it ->
    its notification."""
    try:
        with readable_errors("trace"):
            found = journey(settings=get_settings(), order_id=order_id)
    except ValueError as exc:
        errors.print(str(exc), highlight=False)
        raise typer.Exit(2) from exc
    if found is None:
        errors.print(
            f"No order {order_id}: neither the order API nor the aggregation job knows it "
            "(the job forgets events after the de-duplication window).",
            highlight=False,
        )
        raise typer.Exit(1)
    if as_json:
        typer.echo(found.to_json())
    else:
        show(found)
