"""`onceflow-ops trace` without a stack: what it prints and its exit codes (the journey itself
is stubbed; tests/integration/ops and tests/e2e query the real one)."""

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from typer.testing import CliRunner

from services.notifications.transform import notification_id
from services.ops import trace_cli
from services.ops.cli import app
from services.ops.journey import Batch, EventHop, Journey, Notification, parse_order_id

ORDER = "0f8fad5b-d9cb-469f-a165-70867728950e"
EVENT = "6f1c1b6e-0a34-4a51-9d2a-6c4b1f0e9b10"
T0 = datetime(2026, 11, 23, 13, 0, tzinfo=UTC)
FOUND = Journey(
    ORDER,
    "outbox.event.order",
    "PLACED",
    T0,
    T0,
    (
        EventHop(
            EVENT,
            "OrderPlaced",
            T0,
            2,
            17,
            T0 + timedelta(seconds=0.2),
            Batch("0b7f2b36-51a4-4c3b-9d8e-5d0f3f7c9a11", 9, T0 + timedelta(seconds=1.5)),
            Notification(notification_id(EVENT), True),
        ),
    ),
)


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake(*, settings: Any, order_id: str) -> Journey | None:
        return FOUND if parse_order_id(order_id) == ORDER else None

    monkeypatch.setattr(trace_cli, "journey", fake)


def test_trace_prints_every_hop(stub: None) -> None:
    result = CliRunner().invoke(app, ["trace", ORDER])
    assert result.exit_code == 0, result.output
    for text in (
        "PLACED",
        EVENT,
        "partition 2 offset 17",
        "+0.200 s",
        "batch 9 of query 0b7f2b36-51a4-4c3b-9d8e-5d0f3f7c9a11",
        "+1.500 s",
        notification_id(EVENT),
        "produced",
    ):
        assert text in result.output


def test_trace_json_is_the_journeys_dict(stub: None) -> None:
    result = CliRunner().invoke(app, ["trace", ORDER, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == FOUND.as_dict()


def test_an_unknown_order_is_a_sentence_and_exit_1(stub: None) -> None:
    result = CliRunner().invoke(app, ["trace", "11111111-2222-4333-8444-555555555555"])
    assert result.exit_code == 1
    assert "No order 11111111-2222-4333-8444-555555555555" in result.output


def test_a_malformed_id_is_a_sentence_and_exit_2(stub: None) -> None:
    result = CliRunner().invoke(app, ["trace", "order-42"])
    assert result.exit_code == 2
    assert "'order-42' is not an order id" in result.output
