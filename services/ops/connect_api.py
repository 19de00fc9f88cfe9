"""The Kafka Connect REST calls ops need, with readable errors instead of stack traces."""

from typing import Any

import httpx

from onceflow.settings import Settings


class ConnectError(RuntimeError):
    """Kafka Connect could not be reached or refused the request."""


def call(settings: Settings, method: str, path: str) -> Any:
    """Send one request to the worker's REST API and return its JSON body (or None)."""
    url = f"{settings.connect_url}/connectors/{settings.connector_name}{path}"
    try:
        response = httpx.request(method, url, timeout=30)
    except httpx.HTTPError as exc:
        raise ConnectError(
            f"Kafka Connect at {settings.connect_url} is unreachable: {exc}"
        ) from exc
    if response.status_code == 404:
        raise ConnectError(f"connector {settings.connector_name} is not registered (run make up)")
    if response.status_code >= 400:
        raise ConnectError(f"Kafka Connect answered {response.status_code}: {response.text}")
    return response.json() if response.content else None


def status(*, settings: Settings) -> dict[str, Any]:
    """The connector's and its tasks' states."""
    result: dict[str, Any] = call(settings, "GET", "/status")
    return result


def pause(*, settings: Settings) -> None:
    """Pause the connector: events wait in the replication slot, nothing is lost."""
    call(settings, "PUT", "/pause")


def resume(*, settings: Settings) -> None:
    """Resume a paused connector."""
    call(settings, "PUT", "/resume")


def restart(*, settings: Settings) -> None:
    """Restart the connector and all its tasks (exactly-once: a restarted task fences the old)."""
    call(settings, "POST", "/restart?includeTasks=true&onlyFailed=false")
