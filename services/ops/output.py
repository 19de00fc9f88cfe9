"""How every `onceflow-ops` command answers: tables and sentences for people, or with `--json`
one JSON document of the same data on stdout. A failure is one sentence on stderr and exit 1,
never a stack trace."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from datetime import date, datetime
from typing import Annotated, Any, NoReturn

import psycopg
import typer
from confluent_kafka import KafkaException
from rich.console import Console

from services.ops.alerts import PrometheusError
from services.ops.clients import ClientError
from services.ops.connect_api import ConnectError
from services.ops.dead_letters import DeadLetterError
from services.ops.lag import LagError

JsonFlag = Annotated[
    bool, typer.Option("--json", help="Print one JSON document (the same data) instead.")
]
console = Console(width=120)
errors = Console(width=120, stderr=True)
# Errors whose message is already the sentence ops should read.
READABLE = (ClientError, ConnectError, DeadLetterError, LagError, PrometheusError)


def emit_json(doc: Any) -> None:
    """Print `doc` (dataclasses, lists and dicts of them) as one line of JSON."""
    typer.echo(json.dumps(_plain(doc), default=_scalar))


def _scalar(value: Any) -> str:
    # datetimes as ISO 8601, UUIDs and the rest as their text
    return value.isoformat() if isinstance(value, datetime | date) else str(value)


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
