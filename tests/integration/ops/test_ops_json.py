"""Every read-only `onceflow-ops` command with --json, on the running stack: one JSON document
of the same data it shows people."""

import json
import uuid
from typing import Any

import httpx
import pytest
from confluent_kafka import Consumer
from typer.testing import CliRunner

from onceflow.settings import get_observability_settings, get_settings
from onceflow.settings.kafka_auth import client_config
from onceflow.watermarks import watermarks
from services.maintenance.tasks import TASKS
from services.ops.cli import app

pytestmark = pytest.mark.integration
runner = CliRunner()


def ops_json(*args: str) -> Any:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_status() -> None:
    """The stack runs: the connector and its one task are RUNNING on a worker."""
    doc = ops_json("status")
    assert doc["name"] == get_settings().connector_name
    assert doc["connector"]["state"] == "RUNNING"
    assert [task["state"] for task in doc["tasks"]] == ["RUNNING"]
    assert doc["connector"]["worker_id"].startswith("127.0.0.1:")


def _high_watermarks(topic: str) -> list[int]:
    """Every partition's high watermark, read independently of the ops tool."""
    settings = get_settings()
    consumer = Consumer(
        {
            **client_config(settings.kafka_bootstrap, "tests"),
            "group.id": f"ops-test-{uuid.uuid4()}",
            "isolation.level": "read_uncommitted",
        }
    )
    try:
        partitions = consumer.list_topics(topic, timeout=30).topics[topic].partitions
        return [watermarks(consumer, topic, p, timeout=30)[1] for p in sorted(partitions)]
    finally:
        consumer.close()


def test_lag() -> None:
    """Every partition of the topic, with the broker's own end offsets, and the live slot."""
    settings = get_settings()
    doc = ops_json("lag")
    after = _high_watermarks(settings.topic)
    assert doc["slot"]["name"] == settings.replication_slot
    assert doc["slot"]["active"] is True
    assert doc["slot"]["lost"] is False
    assert doc["slot"]["wal_status"] in {"reserved", "extended"}
    assert doc["topic"] == settings.topic
    assert [p["partition"] for p in doc["partitions"]] == list(range(len(after)))
    assert len(after) >= 1
    for part, end in zip(doc["partitions"], after, strict=True):
        assert 0 <= part["stable_offset"] <= part["end_offset"] <= end
        assert 0 <= part["behind"] <= part["stable_offset"]
        assert part["applied_through"] is None or part["applied_through"] < part["end_offset"]


def test_alerts() -> None:
    """Exactly the alerts the stack's Prometheus reports itself, pending included, each with
    its runbook entry."""
    observability = get_observability_settings()
    doc = ops_json("alerts", "--pending")
    raw = httpx.get(f"{observability.prometheus_url}/api/v1/alerts", timeout=10).json()
    assert {(a["name"], a["state"]) for a in doc} == {
        (a["labels"]["alertname"], a["state"]) for a in raw["data"]["alerts"]
    }
    for alert in doc:
        assert alert["runbook"].startswith("docs/operations.md#")


def test_maintenance_dry_run() -> None:
    """Every maintenance task, in order, each with a row count."""
    doc = ops_json("maintenance", "--dry-run")
    assert doc["dry_run"] is True
    assert [item["task"] for item in doc["removed"]] == [task.name for task in TASKS]
    assert all(type(item["rows"]) is int and item["rows"] >= 0 for item in doc["removed"])


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
