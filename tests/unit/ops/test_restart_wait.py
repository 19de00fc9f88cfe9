"""`onceflow-ops restart --wait` returns once the connector and every task are RUNNING, and says
which are not if they are not by the deadline (Connect's answers faked; each answer is one poll)."""

from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from services.ops import cli, connect_api

runner = CliRunner()


def answer(connector: str, *tasks: str) -> dict[str, Any]:
    return {
        "name": "orders-outbox",
        "connector": {"state": connector},
        "tasks": [{"id": n, "state": state} for n, state in enumerate(tasks)],
    }


def fake_connect(monkeypatch: pytest.MonkeyPatch, *answers: dict[str, Any]) -> list[str]:
    """Connect answering `answers` in turn (the last one for ever); returns the calls made."""
    calls: list[str] = []
    stream: Iterator[dict[str, Any]] = iter(answers)

    def call(settings: Any, method: str, path: str) -> Any:
        calls.append(f"{method} {path}")
        return next(stream, answers[-1]) if path == "/status" else None

    monkeypatch.setattr(connect_api, "call", call)
    return calls


def test_wait_returns_when_everything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_connect(
        monkeypatch,
        answer("RESTARTING"),
        answer("RUNNING", "RESTARTING"),
        answer("RUNNING", "RUNNING"),
    )
    result = runner.invoke(cli.app, ["restart", "--wait", "--json"])
    assert result.exit_code == 0, result.output
    assert calls[0].startswith("POST /restart")
    assert calls[1:] == ["GET /status"] * 3
    assert '"states": "connector and 1 task(s) RUNNING"' in result.stdout


def test_wait_names_what_is_not_running(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_connect(monkeypatch, answer("RUNNING", "FAILED"))
    result = runner.invoke(cli.app, ["restart", "--wait", "--timeout", "1"])
    assert result.exit_code == 1
    assert "restart failed: connector orders-outbox is RUNNING (task 0 FAILED)" in result.stderr
    assert "not RUNNING" in result.stderr
    assert "Traceback" not in result.output


def test_without_wait_it_does_not_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_connect(monkeypatch, answer("RESTARTING"))
    result = runner.invoke(cli.app, ["restart"])
    assert result.exit_code == 0, result.output
    assert len(calls) == 1
