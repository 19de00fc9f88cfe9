"""`onceflow-ops dead-letters list|show|replay`: find why records were refused, look at one raw,
replay one as it is or corrected (services/ops/dead_letters.py names the ids;
docs/operations.md, "Dead letters", is the runbook)."""

import os
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from confluent_kafka import KafkaException
from rich.table import Table
from rich.text import Text

from onceflow.settings import get_aggregation_settings, get_notification_settings, get_settings
from services.ops import aggregation_letters, notification_letters, raw, replay
from services.ops.dead_letters import (
    DeadLetter,
    Filter,
    Stage,
    newest_first,
    parse_id,
    parse_since,
)
from services.ops.output import (
    JsonFlag,
    Listing,
    console,
    emit_json,
    fail,
    readable_errors,
    stamp,
)

app = typer.Typer(help="Dead letters of every stage: list, show, replay.", no_args_is_help=True)


def _stages(stage: Stage | None) -> list[Stage]:
    return list(Stage) if stage is None else [stage]


def _reasons(letters: list[DeadLetter], wanted: Filter) -> list[dict[str, Any]]:
    """Per stage and reason, how many dead letters pass the filter (not only the listed ones)."""
    groups: list[dict[str, Any]] = []
    if Stage.AGGREGATION in _stages(wanted.stage):
        for error, count, newest in aggregation_letters.reasons(
            settings=get_settings(), wanted=wanted
        ):
            groups.append(
                {"stage": "aggregation", "reason": error, "count": count, "newest": newest}
            )
    kept = [d for d in letters if d.stage is Stage.NOTIFICATIONS and wanted.keeps(d)]
    for error, count in Counter(d.error for d in kept).items():
        newest = max(d.at for d in kept if d.error == error)
        groups.append({"stage": "notifications", "reason": error, "count": count, "newest": newest})
    return sorted(groups, key=lambda g: (g["stage"], -g["count"], g["reason"]))


def _notifications(notes: list[str]) -> list[DeadLetter]:
    """The notifications stage's dead letters, or none and a note when Kafka does not answer
    (the aggregation stage's are still worth listing)."""
    try:
        return notification_letters.listing(
            settings=get_settings(), notify=get_notification_settings()
        )
    except KafkaException as exc:
        notes.append(f"the notifications stage's dead letters could not be read from Kafka ({exc})")
        return []


@app.command(name="list")
def list_(
    stage: Annotated[Stage | None, typer.Option("--stage", help="Only this stage's.")] = None,
    reason: str | None = typer.Option(None, "--reason", help="Errors containing this text."),
    since: str | None = typer.Option(None, "--since", help="30m, 6h, 2d, 1w, or an ISO time."),
    limit: int = typer.Option(50, "--limit", min=1, help="At most this many, newest first."),
    as_json: JsonFlag = False,
) -> None:
    """List dead letters, newest first, and how many there are per stage and reason."""
    with readable_errors("list"):
        wanted = Filter(stage, reason, None if since is None else parse_since(since), limit)
        letters: list[DeadLetter] = []
        if Stage.AGGREGATION in _stages(stage):
            letters += aggregation_letters.listing(settings=get_settings(), wanted=wanted)
    notes: list[str] = []
    if Stage.NOTIFICATIONS in _stages(stage):
        letters += _notifications(notes)
    with readable_errors("list"):
        groups = _reasons(letters, wanted)
    shown = newest_first(letters, wanted)
    if as_json:
        emit_json({"dead_letters": [d.summary() for d in shown], "reasons": groups, "notes": notes})
        return
    _print_list(shown, groups, notes)


def _print_list(shown: list[DeadLetter], groups: list[dict[str, Any]], notes: list[str]) -> None:
    if not groups:
        console.print("no dead letters")
    else:
        by_reason = Listing(
            ("stage", "reason", "count", "newest (UTC)"),
            title="dead letters per stage and reason",
            right=("count",),
        )
        for g in groups:
            by_reason.add_row(g["stage"], Text(g["reason"]), g["count"], stamp(g["newest"]))
        by_reason.print()
        table = Listing(
            ("id", "at (UTC)", "error", "replayed"),
            title=f"newest {len(shown)} (show or replay one by its id)",
        )
        for d in shown:
            table.add_row(Text(d.id), stamp(d.at), Text(d.error), stamp(d.replayed_at))
        table.print()
    for note in notes:
        console.print(f"[yellow]{note}[/]")


def _find(ident: str, action: str) -> DeadLetter:
    """The dead letter `ident` names, or `fail` with a sentence."""
    with readable_errors(action):
        position = parse_id(ident)
        if position.stage is Stage.AGGREGATION:
            letter = aggregation_letters.find(settings=get_settings(), position=position)
        else:
            letter = notification_letters.find(
                settings=get_settings(), notify=get_notification_settings(), position=position
            )
    if letter is None:
        fail(action, f"there is no dead letter {ident} (see `onceflow-ops dead-letters list`)")
    return letter


@app.command()
def show(
    ident: str = typer.Argument(..., metavar="ID", help="An id from `dead-letters list`."),
    value_only: bool = typer.Option(
        False, "--raw", help="Print only the value's bytes, as they are (to correct it in a file)."
    ),
    as_json: JsonFlag = False,
) -> None:
    """Show one dead letter raw: key, value, headers, error, when (and its replay)."""
    letter = _find(ident, "show")
    if value_only:
        sys.stdout.buffer.write(letter.value or b"")
        sys.stdout.buffer.flush()
        return
    if as_json:
        emit_json(letter.detail())
        return
    table = Table(show_header=False, title=letter.id)
    table.add_column("field")
    table.add_column("value", overflow="fold")
    rows: list[tuple[str, str]] = [
        ("stage", str(letter.stage)),
        ("where", f"{letter.topic} partition {letter.partition} offset {letter.offset}"),
        ("at (UTC)", stamp(letter.at)),
        ("error", letter.error),
        ("key", raw.printable(letter.key)),
        ("value", raw.printable(letter.value)),
        *[(f"header {name}", raw.printable(value)) for name, value in letter.headers],
    ]
    if letter.replayed_at is not None:
        rows.append(("replayed", f"{stamp(letter.replayed_at)} event {letter.replayed_event_id}"))
    for name, value in rows:
        table.add_row(name, Text(value))
    console.print(table)


@app.command(name="replay")
def replay_(
    ident: str = typer.Argument(..., metavar="ID", help="An id from `dead-letters list`."),
    value_file: Annotated[
        Path | None,
        typer.Option("--value-file", help="Replay this value (the corrected event) instead."),
    ] = None,
    key: str | None = typer.Option(None, "--key", help="Replay with this key instead."),
    as_json: JsonFlag = False,
) -> None:
    """Replay one dead letter, as it is or corrected, through the stage's idempotent path:
    replaying it twice applies it once."""
    try:
        value = None if value_file is None else value_file.read_bytes()
    except OSError as exc:
        fail("replay", f"cannot read {value_file} ({exc.strerror})")
    with readable_errors("replay"):
        position = parse_id(ident)
        if position.stage is Stage.NOTIFICATIONS:
            notification_letters.refuse_replay(_find(ident, "replay"), topic=get_settings().topic)
        done = replay.replay(
            settings=get_settings(),
            aggregation=get_aggregation_settings(),
            position=position,
            key=None if key is None else os.fsencode(key),  # the argument's bytes, as given
            value=value,
        )
    if as_json:
        emit_json(done)
        return
    if done.counted:
        console.print(
            f"replayed {done.id}: {done.event_type} {done.event_id} counted once "
            f"(batch {done.batch_id} of query {replay.QUERY_ID})",
            highlight=False,
            soft_wrap=True,
        )
    else:
        console.print(
            f"replayed {done.id}: {done.event_type} {done.event_id} was already counted "
            f"({done.counted_by}); nothing changed",
            highlight=False,
            soft_wrap=True,
        )
