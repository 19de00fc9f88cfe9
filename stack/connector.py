"""Registering the `orders-outbox` connector from its file in connect/ and waiting until it runs;
the connector's status and the restarts of it and its tasks (start-up and the connect watchdog,
services/ops/connect_watchdog.py, use the same calls)."""

import json
from typing import Any

import httpx

from onceflow import paths
from onceflow.connect_settling import failed_while_settling
from onceflow.settings import Settings
from onceflow.settings.ops import get_ops_settings
from stack.waiting import NotYetError, wait_for

CONNECTOR_FILE = paths.ROOT / "connect" / "orders-outbox.json"


def connector_config() -> dict[str, str]:
    """The connector's config map, as kept in connect/orders-outbox.json."""
    document: dict[str, Any] = json.loads(CONNECTOR_FILE.read_text())
    config: dict[str, str] = document.get("config", document)
    return config


def connector_url(connect_url: str, name: str) -> str:
    """The REST resource of a connector on a worker."""
    return f"{connect_url}/connectors/{name}"


def register(settings: Settings) -> None:
    """Create or update the connector and wait for it and its task to run. The PUT is
    idempotent, so it is sent again while the workers' group settles: a worker forwards it to
    the group's leader, and answers 409 or not at all while there is none (a cluster's start)."""
    url = connector_url(settings.connect_url, settings.connector_name)
    wait_for(
        lambda: _put_config(url),
        what=f"Kafka Connect taking the config of {settings.connector_name}",
        timeout=240,
        interval=2,
    )
    wait_for(lambda: settled(settings), what=f"connector {settings.connector_name}", timeout=120)


def _put_config(url: str) -> bool:
    auth = get_ops_settings().auth()
    response = httpx.put(f"{url}/config", json=connector_config(), timeout=30, auth=auth)
    if response.status_code == 409:  # "rebalance in progress" and the like: not yet
        raise NotYetError(f"409 {response.text}")
    if response.status_code >= 400:
        raise RuntimeError(f"Kafka Connect rejected the connector config: {response.text}")
    return True


def settled(settings: Settings) -> bool:
    """running(), after restarting any task that failed while the group settled."""
    url = connector_url(settings.connect_url, settings.connector_name)
    found = status(url)
    for task in found.get("tasks", []):
        if failed_while_settling(task):
            restart_task(url, int(task["id"]))
    return _all_running(found)


def running(settings: Settings) -> bool:
    """True when the connector and every one of its tasks are RUNNING."""
    return _all_running(status(connector_url(settings.connect_url, settings.connector_name)))


def restart_task(url: str, task_id: int) -> None:
    """Restart one task of the connector (`url`: connector_url): exactly-once, the restarted
    task fences its predecessor's producer and resumes from the last committed offset."""
    restart = f"{url}/tasks/{task_id}/restart"
    httpx.post(restart, timeout=30, auth=get_ops_settings().auth()).raise_for_status()


def restart_connector(url: str) -> None:
    """Restart the connector alone, not its tasks (`url`: connector_url)."""
    httpx.post(f"{url}/restart", timeout=30, auth=get_ops_settings().auth()).raise_for_status()


def status(url: str) -> dict[str, Any]:
    """The connector's status (`url`: connector_url), as the ops credential reads it; NotYetError
    while the worker cannot say."""
    response = httpx.get(f"{url}/status", timeout=5, auth=get_ops_settings().auth())
    if response.status_code != 200:  # a worker (re)starting answers 404 until it has joined
        raise NotYetError(f"Kafka Connect answered {response.status_code} for {url}/status")
    found: dict[str, Any] = response.json()
    return found


def _all_running(found: dict[str, Any]) -> bool:
    tasks = found.get("tasks", [])
    return bool(
        found.get("connector", {}).get("state") == "RUNNING"
        and tasks
        and all(task["state"] == "RUNNING" for task in tasks)
    )
