"""Start-up restarts a connector task that failed while a fresh Connect group settled (its
zombie fencing refused for a session key not yet shared), and no other failed task: a real
failure stays FAILED for `make up` to report (Connect's REST API stood in for by a fake)."""

from typing import Any

import httpx
import pytest

from onceflow.settings import Settings
from stack import connector

SETTLING = "ConnectRestException: Internal request contained invalid signature."


class FakeConnect:
    """GET .../status answers `tasks`; POST .../tasks/N/restart is recorded."""

    def __init__(self, tasks: list[dict[str, Any]]) -> None:
        self.tasks = tasks
        self.restarted: list[str] = []

    def get(self, url: str, **_: Any) -> httpx.Response:
        status = {"connector": {"state": "RUNNING"}, "tasks": self.tasks}
        return httpx.Response(200, json=status, request=httpx.Request("GET", url))

    def post(self, url: str, **_: Any) -> httpx.Response:
        self.restarted.append(url.rsplit("/tasks/", 1)[1])
        return httpx.Response(204, request=httpx.Request("POST", url))


@pytest.fixture
def settings() -> Settings:
    return Settings(connect_url="http://connect.invalid:8083")


def _fake(monkeypatch: pytest.MonkeyPatch, tasks: list[dict[str, Any]]) -> FakeConnect:
    fake = FakeConnect(tasks)
    monkeypatch.setattr(httpx, "get", fake.get)
    monkeypatch.setattr(httpx, "post", fake.post)
    return fake


def test_a_task_failed_while_the_group_settled_is_restarted(
    monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    fake = _fake(monkeypatch, [{"id": 0, "state": "FAILED", "trace": SETTLING}])
    assert connector.settled(settings) is False
    assert fake.restarted == ["0/restart"]


def test_any_other_failure_is_left_for_start_up_to_report(
    monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    trace = "PSQLException: password authentication failed for user shop_cdc"
    fake = _fake(monkeypatch, [{"id": 0, "state": "FAILED", "trace": trace}])
    assert connector.settled(settings) is False
    assert fake.restarted == []


def test_running_tasks_are_settled(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> None:
    fake = _fake(monkeypatch, [{"id": 0, "state": "RUNNING"}])
    assert connector.settled(settings) is True
    assert fake.restarted == []
