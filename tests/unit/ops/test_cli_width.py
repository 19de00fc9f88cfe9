"""`onceflow-ops` output fits the terminal: at 80 and 200 columns no line is wider than the
terminal, and the ids a later command needs (client ids, event and query ids) print whole. A
table that does not fit becomes one block of `column  value` lines per row."""

import re
import uuid
from datetime import UTC, datetime

import pytest
from typer.testing import CliRunner

from services.ops import cli, output, trace_cli
from services.ops.client_queries import ClientRow
from services.ops.lag import PartitionLag, SlotLag
from tests.unit.ops.test_trace_cli import EVENT, FOUND, ORDER

WIDTHS = (80, 200)
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
FIELD = re.compile(r"(\S+(?: \S+)*)\s*(.*)")  # `live keys  1`: words, 2+ spaces, value
USED = datetime(2026, 11, 23, 13, 22, 25, 123456, tzinfo=UTC)
CLIENTS = [
    ClientRow(
        uuid.uuid4(), f"reports-{n}", ["orders:read", "orders:write"], None, USED, None, 1, USED
    )
    for n in range(3)
]


def run(monkeypatch: pytest.MonkeyPatch, width: int, *args: str) -> list[str]:
    """The command's stdout lines at a terminal `width` columns wide (no line wider)."""
    monkeypatch.setattr(output.console, "_width", None)  # as a fresh process: $COLUMNS decides
    result = CliRunner().invoke(cli.app, list(args), env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(map(len, lines)) <= width, result.stdout
    return lines


def blocks(lines: list[str]) -> list[dict[str, str]]:
    """The `column  value` blocks of a narrow listing, as dicts."""
    found: list[dict[str, str]] = [{}]
    for line in lines[1:]:
        if not line.strip():
            found.append({})
        elif not line.startswith(" "):
            column, value = FIELD.fullmatch(line).groups()  # type: ignore[union-attr]
            found[-1][column] = value
    return [block for block in found if block]


@pytest.mark.parametrize("width", WIDTHS)
def test_clients_list_prints_whole_ids_and_one_timestamp_format(
    monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    monkeypatch.setattr("services.ops.client_queries.list_clients", lambda **_: CLIENTS)
    lines = run(monkeypatch, width, "clients", "list")
    for client in CLIENTS:
        row = [line for line in lines if str(client.id) in line]
        assert row, f"{client.id} is not printed whole"
    if width == 80:
        shown = blocks(lines)
        assert [b["client id"] for b in shown] == [str(c.id) for c in CLIENTS]
        assert {b["last used"] for b in shown} == {"2026-11-23T13:22:25.123456Z"}
        assert {b["rate/s"] for b in shown} == {"default"}
    else:  # one row per client, its id and name on one line
        for client in CLIENTS:
            (line,) = [line for line in lines if str(client.id) in line]
            assert client.name in line
            assert STAMP.findall(line) == ["2026-11-23T13:22:25.123456Z"]


@pytest.mark.parametrize("width", WIDTHS)
def test_trace_prints_whole_ids(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    monkeypatch.setattr(trace_cli, "journey", lambda **_: FOUND)
    text = "\n".join(run(monkeypatch, width, "trace", ORDER))
    hop = FOUND.events[0]
    assert hop.batch is not None
    for whole in (ORDER, EVENT, hop.batch.query_id, hop.notification.id):
        assert whole in text
    assert STAMP.search(text)


@pytest.mark.parametrize("width", WIDTHS)
def test_lag_keeps_each_number_on_one_line(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    slot = SlotLag(True, "reserved", 123456789, 0, 2147755024)
    parts = [PartitionLag(p, 1234567, 1234567, 1234560, 7) for p in range(3)]
    monkeypatch.setattr("services.ops.lag.slot_lag", lambda **_: slot)
    monkeypatch.setattr("services.ops.lag.topic_lag", lambda **_: parts)
    text = "\n".join(run(monkeypatch, width, "lag"))
    for number in ("123456789", "2147755024 bytes", "1234567", "1234560"):
        assert number in text


def test_version() -> None:
    result = CliRunner().invoke(cli.app, ["--version"])
    assert result.exit_code == 0
    assert re.fullmatch(r"onceflow-ops \d+\.\d+\.\d+\S*\n", result.stdout)
