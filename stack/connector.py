"""Registering the `orders-outbox` connector from its file in connect/ and waiting until it runs."""

import json
from typing import Any

import httpx

from onceflow import paths
from onceflow.settings import Settings
from stack.waiting import wait_for

CONNECTOR_FILE = paths.ROOT / "connect" / "orders-outbox.json"


def connector_config() -> dict[str, str]:
    """The connector's config map, as kept in connect/orders-outbox.json."""
    document: dict[str, Any] = json.loads(CONNECTOR_FILE.read_text())
    config: dict[str, str] = document.get("config", document)
    return config


def register(settings: Settings) -> None:
    """Create or update the connector (PUT is idempotent) and wait for it and its task to run."""
    url = f"{settings.connect_url}/connectors/{settings.connector_name}"
    response = httpx.put(f"{url}/config", json=connector_config(), timeout=60)
    if response.status_code >= 400:
        raise RuntimeError(f"Kafka Connect rejected the connector config: {response.text}")
    wait_for(lambda: running(settings), what=f"connector {settings.connector_name}", timeout=120)


def running(settings: Settings) -> bool:
    """True when the connector and every one of its tasks are RUNNING."""
    url = f"{settings.connect_url}/connectors/{settings.connector_name}"
    status = httpx.get(f"{url}/status", timeout=5).json()
    tasks = status.get("tasks", [])
    return bool(
        status["connector"]["state"] == "RUNNING"
        and tasks
        and all(task["state"] == "RUNNING" for task in tasks)
    )
