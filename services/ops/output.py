"""How every `onceflow-ops` command answers: tables and sentences for people, or with `--json`
one JSON document of the same data on stdout. A failure is one sentence on stderr and exit 1,
never a stack trace."""

import json
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, is_dataclass
from datetime import date, datetime
from typing import Annotated, Any, NoReturn

import psycopg
import typer
from confluent_kafka import KafkaException
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from onceflow.client_keys import ClientError
from onceflow.settings.connections import DbPasswordMissingError
from onceflow.settings.kafka_auth import KafkaPasswordMissingError
from onceflow.settings.ops import OpsCredentialMissingError
from services.ops.alerts import PrometheusError
from services.ops.connect_api import ConnectError
from services.ops.dead_letters import DeadLetterError
from services.ops.journey import iso
from services.ops.lag import LagError

JsonFlag = Annotated[
    bool, typer.Option("--json", help="Print one JSON document (the same data) instead.")
]
# As wide as the terminal (or $COLUMNS; 80 when piped): tables shrink and wrap to fit.
console = Console()
errors = Console(stderr=True, soft_wrap=True)  # a failure: one line, however long
# Errors whose message is already the sentence ops should read.
# A missing password's error names the variable and the file to set (no `make up` yet, another
# checkout's .stack): a sentence too, not a stack trace.
READABLE = (
    ClientError,
    ConnectError,
    DeadLetterError,
    LagError,
    PrometheusError,
    DbPasswordMissingError,
    KafkaPasswordMissingError,
    OpsCredentialMissingError,
)


def emit_json(doc: Any) -> None:
    """Print `doc` (dataclasses, lists and dicts of them) as one line of JSON."""
    typer.echo(json.dumps(_plain(doc), default=_scalar))


def _scalar(value: Any) -> str:
    # datetimes as RFC 3339 in UTC (`Z`), UUIDs and the rest as their text
    if isinstance(value, datetime):
        return iso(value) or ""
    return value.isoformat() if isinstance(value, date) else str(value)


def stamp(at: datetime | str | None, missing: str = "") -> str:
    """`at` (or an ISO 8601 text) as every command prints a time: RFC 3339 in UTC,
    `2026-11-23T13:22:25.123456Z`."""
    if isinstance(at, str):
        at = datetime.fromisoformat(at) if at else None
    return iso(at) or missing


@dataclass
class Listing:
    """Rows for people: a table when it fits the console, else (a narrow terminal) one block of
    `column  value` lines per row, so no cell is ever cut and ids stay whole for later commands."""

    columns: tuple[str, ...]
    title: str | None = None
    right: tuple[str, ...] = ()
    rows: list[tuple[str | Text, ...]] = field(default_factory=list)
    sections: set[int] = field(default_factory=set)  # rows that end a group

    def add_row(self, *cells: object) -> None:
        """Append one row, a cell per column (markup allowed; a Text cell is printed as is)."""
        self.rows.append(tuple(c if isinstance(c, Text) else str(c) for c in cells))

    def add_section(self) -> None:
        """End a group of rows (a rule between them in the table)."""
        self.sections.add(len(self.rows))

    def _table(self) -> Table:
        made = Table(title=self.title)
        for column in self.columns:
            made.add_column(column, justify="right" if column in self.right else "left")
            made.columns[-1].no_wrap = True
        for index, row in enumerate(self.rows, 1):
            made.add_row(*row, end_section=index in self.sections)
        return made

    def print(self) -> None:
        """Print on `console`, as a table if it fits its width."""
        made = self._table()
        unbounded = console.options.update_width(10_000)
        if Measurement.get(console, unbounded, made).maximum <= console.width:
            console.print(made)
            return
        if self.title:
            console.print(self.title, highlight=False)
        label = max(map(len, self.columns)) + 2
        for row in self.rows:
            lines = (
                textwrap.fill(
                    f"{column:<{label}}{escape(cell.plain) if isinstance(cell, Text) else cell}",
                    width=console.width,
                    subsequent_indent=" " * label,
                    break_long_words=False,
                    break_on_hyphens=False,
                )
                for column, cell in zip(self.columns, row, strict=True)
            )
            console.print("\n".join(lines) + "\n", highlight=False, soft_wrap=True)


def _plain(doc: Any) -> Any:
    if is_dataclass(doc) and not isinstance(doc, type):
        return asdict(doc)
    if isinstance(doc, list | tuple):
        return [_plain(item) for item in doc]
    if isinstance(doc, dict):
        return {str(key): _plain(value) for key, value in doc.items()}
    return doc


def fail(action: str, reason: str) -> NoReturn:
    """Say why `action` failed, in one sentence on stderr, and exit 1."""
    errors.print(f"[red]{action} failed:[/] {reason}", highlight=False)
    raise typer.Exit(1)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextmanager
def readable_errors(action: str) -> Iterator[None]:
    """Turn the failures ops can act on (a component down, a request refused) into `fail`."""
    try:
        yield
    except READABLE as exc:
        fail(action, str(exc))
    except psycopg.OperationalError as exc:
        fail(action, f"the database is unreachable ({_first_line(exc)})")
    except psycopg.Error as exc:  # e.g. a schema older than this code: run `make up`
        fail(action, f"the database refused the query ({_first_line(exc)})")
    except KafkaException as exc:
        fail(action, f"Kafka is unreachable or refused the request ({_first_line(exc)})")
