"""`onceflow-ops overview` and `make status` on the running stack (issue 25): with Kafka out of
reach the overview still shows what Postgres knows (the slot, the job's ledger) and the API; a
frozen (SIGSTOP) notifications instance shows unhealthy in both within 10 s, and healthy again
after SIGCONT. The crash-looping case runs on a scratch supervisord
(tests/integration/stack/test_health.py), so the shared job keeps running."""

import json
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from onceflow.settings import get_settings
from services.ops import cli
from stack import cli as stack_cli
from stack import supervisor
from stack.waiting import free_port, wait_for

FROZEN = "notifications-2"
WITHIN = 10.0


def _overview() -> dict[str, Any]:
    result = CliRunner().invoke(cli.app, ["overview", "--json"])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def _hop(doc: dict[str, Any], name: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [h for h in doc["hops"] if h["hop"] == name]
    assert len(found) == 1, doc
    return found[0]


@pytest.fixture
def kafka_unreachable(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The settings point at a port nothing listens on (the shared broker keeps running)."""
    monkeypatch.setenv("ONCEFLOW_KAFKA_BOOTSTRAP", f"127.0.0.1:{free_port()}")
    get_settings.cache_clear()
    yield
    monkeypatch.undo()
    get_settings.cache_clear()


@pytest.mark.usefixtures("kafka_unreachable")
def test_overview_without_kafka_still_shows_the_slot_the_api_and_the_ledger() -> None:
    began = time.monotonic()
    doc = _overview()
    assert time.monotonic() - began < 30
    slot = _hop(doc, "slot")
    assert slot["slot"]["name"] == get_settings().replication_slot
    assert not slot["unavailable"]
    api = _hop(doc, "api")
    assert api["processes"]["api"]["healthy"], api
    ledger = _hop(doc, "aggregation")["ledger"]
    assert ledger["batches"] >= 1
    assert ledger["applied_through"]
    topic = _hop(doc, "topic")
    assert "Kafka is unreachable" in topic["unavailable"]["topic"]
    assert "Kafka is unreachable" in _hop(doc, "aggregation")["unavailable"]["lag"]
    assert "notifications" in _hop(doc, "dead_letters")["unavailable"]
    assert "aggregation" in _hop(doc, "dead_letters")
    assert "differences" in _hop(doc, "reconciliation")["reconciliation"]  # Postgres only


def _frozen_in_overview() -> bool:
    process = _hop(_overview(), "notifications")["processes"][FROZEN]
    return not process["healthy"] and "did not answer" in process["problem"]


def _frozen_in_status() -> bool:
    result = CliRunner().invoke(stack_cli.app, ["status"])
    return result.exit_code == 1 and f"{FROZEN} does not work: " in result.stdout


def _healthy_again() -> bool:
    process = _hop(_overview(), "notifications")["processes"][FROZEN]
    status = CliRunner().invoke(stack_cli.app, ["status"])
    return bool(process["healthy"]) and f"{FROZEN} does not work" not in status.stdout


def test_a_frozen_notifications_instance_is_unhealthy_within_10_s_and_healthy_after() -> None:
    """Freezes the shared stack's notifications-2 for a few seconds (SIGCONT in `finally`)."""
    pid = int(supervisor.proxy().supervisor.getProcessInfo(FROZEN)["pid"])
    os.kill(pid, signal.SIGSTOP)
    try:
        began = time.monotonic()
        wait_for(_frozen_in_overview, what="overview: frozen instance unhealthy", timeout=WITHIN)
        wait_for(_frozen_in_status, what="status: frozen instance unhealthy", timeout=WITHIN)
        assert time.monotonic() - began < 2 * WITHIN
    finally:
        os.kill(pid, signal.SIGCONT)
    wait_for(_healthy_again, what="the thawed instance healthy", timeout=WITHIN)
