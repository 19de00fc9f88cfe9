"""Every read-only `onceflow-ops` command with --json, on the running stack: one JSON document
of the same data it shows people."""

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from onceflow.settings import get_settings
from services.ops.cli import app

pytestmark = pytest.mark.integration
runner = CliRunner()


def ops_json(*args: str) -> Any:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_status() -> None:
    doc = ops_json("status")
    assert doc["name"] == get_settings().connector_name
    assert doc["connector"]["state"] in {"RUNNING", "PAUSED", "UNASSIGNED", "FAILED"}


def test_lag() -> None:
    settings = get_settings()
    doc = ops_json("lag")
    assert doc["slot"]["name"] == settings.replication_slot
    assert doc["topic"] == settings.topic
    assert [p["partition"] for p in doc["partitions"]] == list(range(len(doc["partitions"])))
    for part in doc["partitions"]:
        assert part["stable_offset"] <= part["end_offset"]
        assert 0 <= part["behind"] <= part["stable_offset"]


def test_alerts() -> None:
    """Against the stack's Prometheus: a list (empty when nothing fires)."""
    doc = ops_json("alerts", "--pending")
    assert isinstance(doc, list)
    for alert in doc:
        assert alert["runbook"].startswith("docs/operations.md#")


def test_maintenance_dry_run() -> None:
    doc = ops_json("maintenance", "--dry-run")
    assert doc["dry_run"] is True
    assert {item["task"] for item in doc["removed"]}


def test_clients_list() -> None:
    doc = ops_json("clients", "list")
    assert "local-dev" in {client["name"] for client in doc}
    assert all("key" not in client for client in doc)


@pytest.mark.parametrize(
    ("command", "down", "says"),
    [
        (["status"], {"connect_url": "http://127.0.0.1:1"}, "Kafka Connect at"),
        (["lag"], {"kafka_bootstrap": "127.0.0.1:1"}, "Kafka is unreachable"),
        (["lag"], {"pg_port": 1}, "the database is unreachable"),
    ],
)
def test_a_component_down_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch, command: list[str], down: dict[str, object], says: str
) -> None:
    settings = get_settings().model_copy(update=down)
    monkeypatch.setattr("services.ops.cli.get_settings", lambda: settings)
    result = runner.invoke(app, [*command, "--json"])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert says in result.stderr
    assert "Traceback" not in result.stderr
