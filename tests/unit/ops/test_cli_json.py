"""Every `onceflow-ops` command takes --json and then prints one JSON document of the same data
(the components are faked here; tests/integration/ops runs the commands on the real stack).
Failures are one sentence on stderr and exit 1, never a traceback."""

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from onceflow.client_keys import Issued
from onceflow.settings import ObservabilitySettings, get_settings
from services.maintenance.runner import Removed
from services.ops import cli
from services.ops.client_queries import ClientRow
from services.ops.lag import PartitionLag, SlotLag
from tests.unit.ops.fake_prometheus import Answer, alert, alerts_body, fake_prometheus

runner = CliRunner()
CLIENT = uuid.UUID("00000000-0000-4000-8000-000000000001")
ISSUED = Issued(CLIENT, "reports", ("orders:read",), "of_live_key")
STATUS = {
    "name": "orders-outbox",
    "connector": {"state": "RUNNING", "worker_id": "127.0.0.1:8083"},
    "tasks": [{"id": 0, "state": "RUNNING", "worker_id": "127.0.0.1:8083"}],
}


def ops_json(*args: str) -> Any:
    result = runner.invoke(cli.app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _fake(monkeypatch: pytest.MonkeyPatch, target: str, value: Any) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def fake(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return value

    monkeypatch.setattr(target, fake)
    return calls


def _commands(command: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """Every leaf command of a (Typer) command group, by its path of names."""
    children: dict[str, Any] | None = getattr(command, "commands", None)
    if children is None:
        return {path: command}
    return {
        leaf: found
        for name, child in children.items()
        for leaf, found in _commands(child, (*path, name)).items()
    }


def test_every_command_takes_json() -> None:
    commands = _commands(typer.main.get_command(cli.app))
    assert {("alerts",), ("lag",), ("clients", "list")} <= set(commands)
    without = [
        " ".join(path)
        for path, command in commands.items()
        if not any("--json" in getattr(param, "opts", []) for param in command.params)
    ]
    assert without == []


def test_status(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, "services.ops.connect_api.status", STATUS)
    assert ops_json("status") == STATUS


@pytest.mark.parametrize("action", ["pause", "resume", "restart"])
def test_connector_actions(monkeypatch: pytest.MonkeyPatch, action: str) -> None:
    calls = _fake(monkeypatch, f"services.ops.connect_api.{action}", None)
    doc = ops_json(action)
    assert doc == {"action": action, "connector": get_settings().connector_name, "done": True}
    assert len(calls) == 1


def test_lag(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, "services.ops.lag.slot_lag", SlotLag(True, "reserved", 4096, 0, 10**9))
    parts = [PartitionLag(0, 12, 12, 10, 0), PartitionLag(1, 9, 7, None, 0)]
    _fake(monkeypatch, "services.ops.lag.topic_lag", parts)
    doc = ops_json("lag")
    assert doc["slot"] == {
        "name": get_settings().replication_slot,
        "active": True,
        "wal_status": "reserved",
        "retained_bytes": 4096,
        "bytes_behind": 0,
        "safe_wal_size": 10**9,
        "lost": False,
    }
    assert doc["partitions"][1] == {
        "partition": 1,
        "end_offset": 9,
        "stable_offset": 7,
        "applied_through": None,
        "behind": 0,
        "open_transaction": True,
    }


def test_lag_of_a_missing_slot_is_null(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, "services.ops.lag.slot_lag", None)
    _fake(monkeypatch, "services.ops.lag.topic_lag", [])
    assert ops_json("lag") == {"slot": None, "topic": get_settings().topic, "partitions": []}


def _prometheus_at(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    port = int(url.rsplit(":", 1)[1])
    settings = ObservabilitySettings(prometheus_port=port, prometheus_timeout_s=0.5)
    monkeypatch.setattr(cli, "get_observability_settings", lambda: settings)


def test_alerts(monkeypatch: pytest.MonkeyPatch) -> None:
    body = alerts_body(
        alert("ConnectorNotRunning", "firing", "critical", connector="orders-outbox"),
        alert("AggregationStale", "pending", "warning"),
    )
    with fake_prometheus(Answer(body=body)) as url:
        _prometheus_at(monkeypatch, url)
        firing = ops_json("alerts")
        everything = ops_json("alerts", "--pending")
        table = runner.invoke(cli.app, ["alerts"])
    assert [a["name"] for a in firing] == ["ConnectorNotRunning"]
    assert firing[0]["runbook"] == "docs/operations.md#connectornotrunning"
    assert firing[0]["labels"]["connector"] == "orders-outbox"
    assert [a["state"] for a in everything] == ["firing", "pending"]
    assert "ConnectorNotRunning" in table.stdout
    assert "AggregationStale" not in table.stdout


def test_no_alert_firing(monkeypatch: pytest.MonkeyPatch) -> None:
    with fake_prometheus(Answer()) as url:
        _prometheus_at(monkeypatch, url)
        assert ops_json("alerts") == []
        result = runner.invoke(cli.app, ["alerts"])
    assert result.exit_code == 0
    assert "no alert is firing" in result.stdout


@pytest.mark.parametrize("as_json", [[], ["--json"]])
def test_alerts_without_prometheus_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch, as_json: list[str]
) -> None:
    with fake_prometheus(Answer()) as url:
        pass  # now nothing listens there
    _prometheus_at(monkeypatch, url)
    result = runner.invoke(cli.app, ["alerts", *as_json])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "alerts failed: Prometheus at" in result.stderr
    assert "is unreachable" in result.stderr
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_maintenance(monkeypatch: pytest.MonkeyPatch) -> None:
    removed = [Removed("idempotency_keys", 3), Removed("applied_batches", 0)]
    monkeypatch.setattr(cli, "run_once", lambda **kwargs: removed)
    assert ops_json("maintenance", "--dry-run") == {
        "dry_run": True,
        "removed": [
            {"task": "idempotency_keys", "rows": 3},
            {"task": "applied_batches", "rows": 0},
        ],
    }


def test_maintenance_with_the_lock_taken_is_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "run_once", lambda **kwargs: None)
    result = runner.invoke(cli.app, ["maintenance", "--json"])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "holds the lock" in result.stderr


ROW = ClientRow(
    CLIENT,
    "reports",
    ["orders:read"],
    None,
    datetime(2026, 11, 23, 13, 0, tzinfo=UTC),
    None,
    1,
    None,
)


@pytest.mark.parametrize(
    ("args", "target"),
    [
        (["clients", "create", "reports", "--scopes", "orders:read"], "create_client"),
        (["clients", "rotate", str(CLIENT)], "issue_key"),
    ],
)
def test_clients_create_and_rotate(
    monkeypatch: pytest.MonkeyPatch, args: list[str], target: str
) -> None:
    _fake(monkeypatch, f"onceflow.client_keys.{target}", ISSUED)
    _fake(monkeypatch, "services.ops.clients.resolve", CLIENT)
    assert ops_json(*args) == {
        "client_id": str(CLIENT),
        "name": "reports",
        "scopes": ["orders:read"],
        "key": "of_live_key",
    }


def test_clients_list(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, "services.ops.client_queries.list_clients", [ROW])
    assert ops_json("clients", "list") == [
        {
            "id": str(CLIENT),
            "name": "reports",
            "scopes": ["orders:read"],
            "rate_per_s": None,
            "created_at": "2026-11-23T13:00:00.000000Z",
            "revoked_at": None,
            "live_keys": 1,
            "last_used_at": None,
        }
    ]


def test_clients_revoke(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake(monkeypatch, "services.ops.clients.revoke", 2)
    named = _fake(monkeypatch, "services.ops.clients.resolve", CLIENT)
    doc = ops_json("clients", "revoke", "reports", "--old-keys")
    assert doc == {"client_id": str(CLIENT), "revoked": "older keys", "keys_stopped": 2}
    assert calls[0]["old_keys_only"] is True
    assert named[0]["client"] == "reports"


def test_clients_update_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake(monkeypatch, "services.ops.clients.set_rate", None)
    _fake(monkeypatch, "services.ops.clients.resolve", CLIENT)
    doc = ops_json("clients", "update", "reports", "--rate", "12.5")
    assert doc == {"client_id": str(CLIENT), "rate_per_s": 12.5}
    assert calls[0]["rate_per_s"] == 12.5
