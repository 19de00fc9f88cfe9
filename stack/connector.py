"""Registering the `orders-outbox` connector from its file in connect/ and waiting until it runs."""

import json
from typing import Any

import httpx

from onceflow import paths
from onceflow.settings import Settings
from onceflow.settings.ops import get_ops_settings
from stack.waiting import NotYetError, wait_for

CONNECTOR_FILE = paths.ROOT / "connect" / "orders-outbox.json"
# A task can fail while the workers of a fresh group settle: the zombie fencing its start asks
# the leader for is refused (the group's session key not yet shared by every worker). Connect
# does not retry it (KAFKA-15059 says: restart the task), so start-up restarts such a task.
SETTLING = ("Internal request contained invalid signature",)


def connector_config() -> dict[str, str]:
    """The connector's config map, as kept in connect/orders-outbox.json."""
    document: dict[str, Any] = json.loads(CONNECTOR_FILE.read_text())
    config: dict[str, str] = document.get("config", document)
    return config


def register(settings: Settings) -> None:
    """Create or update the connector (PUT is idempotent) and wait for it and its task to run."""
    url = f"{settings.connect_url}/connectors/{settings.connector_name}"
    auth = get_ops_settings().auth()
    response = httpx.put(f"{url}/config", json=connector_config(), timeout=60, auth=auth)
    if response.status_code >= 400:
        raise RuntimeError(f"Kafka Connect rejected the connector config: {response.text}")
    wait_for(lambda: settled(settings), what=f"connector {settings.connector_name}", timeout=120)


def settled(settings: Settings) -> bool:
    """running(), after restarting any task that failed while the group settled."""
    url = f"{settings.connect_url}/connectors/{settings.connector_name}"
    status = _status(url)
    for task in status.get("tasks", []):
        if task["state"] == "FAILED" and any(m in task.get("trace", "") for m in SETTLING):
            restart = f"{url}/tasks/{task['id']}/restart"
            httpx.post(restart, timeout=30, auth=get_ops_settings().auth()).raise_for_status()
    return _all_running(status)


def running(settings: Settings) -> bool:
    """True when the connector and every one of its tasks are RUNNING."""
    return _all_running(_status(f"{settings.connect_url}/connectors/{settings.connector_name}"))


def _status(url: str) -> dict[str, Any]:
    response = httpx.get(f"{url}/status", timeout=5, auth=get_ops_settings().auth())
    if response.status_code != 200:  # a worker (re)starting answers 404 until it has joined
        raise NotYetError(f"Kafka Connect answered {response.status_code} for {url}/status")
    status: dict[str, Any] = response.json()
    return status


def _all_running(status: dict[str, Any]) -> bool:
    tasks = status.get("tasks", [])
    return bool(
        status.get("connector", {}).get("state") == "RUNNING"
        and tasks
        and all(task["state"] == "RUNNING" for task in tasks)
    )
