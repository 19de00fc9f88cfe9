"""The overview's tiles follow the hop's state, never just "the process runs"."""

from typing import Any

import pytest

from services.dashboard.tiles import tile, tiles
from services.ops.overview import Hop
from stack.checks import Checked
from stack.health import Process
from tests.unit.dashboard.fakes import RECONCILED, overview_hops

RUNNING = Process(state="RUNNING", uptime=75.0, restarts=2)


def _connector(state: str, task: str = "RUNNING", problem: str | None = None) -> dict[str, Any]:
    tasks = [{"id": 0, "state": task}] if task else []
    facts = {"connector": {"name": "orders-outbox", "state": state, "tasks": tasks}}
    hop = Hop("connector", ["connect"], facts=facts)
    hop.processes = {"connect": Checked(RUNNING, problem)}
    return hop.as_dict()


@pytest.mark.parametrize(
    ("connector", "task", "state"),
    [
        ("RUNNING", "RUNNING", "up"),
        ("PAUSED", "PAUSED", "paused"),
        ("FAILED", "FAILED", "failed"),
        ("RUNNING", "UNASSIGNED", "task 0 unassigned"),
        ("RUNNING", "", "no task"),
    ],
)
def test_the_connector_tile_says_the_connectors_state(
    connector: str, task: str, state: str
) -> None:
    problem = None if state == "up" else "connector orders-outbox is not RUNNING"
    shown = tile(_connector(connector, task, problem))
    assert shown["state"] == state
    assert shown["calm"] is (state == "up")


def test_a_stopped_or_frozen_process_is_its_state_or_unhealthy() -> None:
    stopped = Hop("api", ["api"])
    stopped.processes = {"api": Checked(Process("BACKOFF", None, 5), "api is BACKOFF")}
    frozen = Hop("api", ["api"])
    frozen.processes = {"api": Checked(RUNNING, "http://127.0.0.1:8000/healthz did not answer")}
    assert tile(stopped.as_dict())["state"] == "backoff"
    shown = tile(frozen.as_dict())
    assert shown["state"] == "unhealthy"
    assert shown["processes"] == [
        {
            "name": "api",
            "state": "RUNNING",
            "healthy": False,
            "uptime": "1m15s",
            "restarts": 2,
            "problem": "http://127.0.0.1:8000/healthz did not answer",
        }
    ]


@pytest.mark.parametrize(
    ("slot", "state"),
    [
        ({"name": "s", "missing": True}, "missing"),
        (
            {"name": "s", "active": False, "lost": True, "wal_status": "lost", "bytes_behind": 0},
            "lost",
        ),
        (
            {
                "name": "s",
                "active": False,
                "lost": False,
                "wal_status": "reserved",
                "bytes_behind": 0,
            },
            "inactive",
        ),
        (
            {
                "name": "s",
                "active": True,
                "lost": False,
                "wal_status": "reserved",
                "bytes_behind": 0,
            },
            "up",
        ),
    ],
)
def test_the_slot_tile(slot: dict[str, Any], state: str) -> None:
    assert tile(Hop("slot", [], facts={"slot": slot}).as_dict())["state"] == state


def test_unreadable_facts_alerts_and_dead_letters_are_not_up() -> None:
    unread = Hop("topic", [], unavailable={"topic": "Kafka is unreachable"})
    shown = tile(unread.as_dict())
    assert shown["state"] == "unreadable"
    assert shown["problems"] == ["topic unreadable: Kafka is unreachable"]
    firing = [{"state": "firing"}, {"state": "firing"}, {"state": "pending"}]
    alerts = tile(Hop("alerts", [], facts={"alerts": firing}).as_dict())
    assert (alerts["state"], alerts["lines"]) == ("2 firing", ["2 firing, 1 pending"])
    letters = Hop(
        "dead_letters",
        [],
        facts={
            "aggregation": {"total": 3, "reasons": []},
            "notifications": {"newest": 1, "topic": "notifications.order.dlq"},
        },
    )
    assert tile(letters.as_dict())["state"] == "4 dead letters"


def test_every_hop_of_the_overview_gets_a_tile_in_its_order() -> None:
    shown = tiles(overview_hops(connector="PAUSED"))
    assert [t["hop"] for t in shown] == ["api", "connector", "aggregation", "reconciliation"]
    states = {t["hop"]: (t["state"], t["calm"]) for t in shown}
    assert states == {
        "api": ("up", True),
        "connector": ("paused", False),
        "aggregation": ("up", True),
        "reconciliation": ("up", True),
    }
    aggregation = shown[2]
    assert "worst: partition 1, 40 behind" in aggregation["lines"]
    assert aggregation["processes"][0]["uptime"] == "1h2m"


def test_the_reconciliation_tile_says_its_differences_and_last_run() -> None:
    clean = tile(Hop("reconciliation", [], facts={"reconciliation": RECONCILED}).as_dict())
    assert clean["lines"] == [
        "0 differences · 7 closed days checked",
        "last run 2026-11-26T02:10:00Z",
    ]
    found = {**RECONCILED, "differences": 3, "days_with_differences": 1}
    shown = tile(Hop("reconciliation", [], facts={"reconciliation": found}).as_dict())
    assert (shown["state"], shown["calm"]) == ("3 differences", False)
    assert shown["lines"][0] == "3 differences on 1 day · 7 closed days checked"
    never = tile(
        Hop(
            "reconciliation", [], facts={"reconciliation": {**RECONCILED, "last_run_at": None}}
        ).as_dict()
    )
    assert (never["state"], never["lines"]) == ("up", ["no reconciliation run yet"])
