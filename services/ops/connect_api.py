"""The Kafka Connect REST calls ops need, with readable errors instead of stack traces."""

import time
from typing import Any

import httpx

from onceflow.settings import Settings
from onceflow.settings.ops import OpsCredentialMissingError, get_ops_settings


class ConnectError(RuntimeError):
    """Kafka Connect could not be reached or refused the request."""


def call(settings: Settings, method: str, path: str) -> Any:
    """Send one request to the worker's REST API, as ops (HTTP Basic, the ops credential), and
    return its JSON body (or None)."""
    url = f"{settings.connect_url}/connectors/{settings.connector_name}{path}"
    try:
        auth = get_ops_settings().auth()
    except OpsCredentialMissingError as exc:
        raise ConnectError(f"Kafka Connect needs the ops credential: {exc}") from exc
    try:
        response = httpx.request(method, url, timeout=30, auth=auth)
    except httpx.HTTPError as exc:
        raise ConnectError(
            f"Kafka Connect at {settings.connect_url} is unreachable: {exc}"
        ) from exc
    if response.status_code == 401:
        raise ConnectError(
            f"Kafka Connect at {settings.connect_url} refused the ops credential (401): "
            "is ONCEFLOW_OPS_PASSWORD or .stack/secrets/ops-password the one Connect has?"
        )
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


def _states(result: dict[str, Any]) -> list[str]:
    return [result["connector"]["state"], *(task["state"] for task in result["tasks"])]


def wait_running(settings: Settings, *, timeout: float, interval: float = 0.5) -> str:
    """Poll the status until the connector and at least one task, all of them, are RUNNING;
    return the states as a phrase, or raise ConnectError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = status(settings=settings)
        states = _states(result)
        if len(states) > 1 and set(states) == {"RUNNING"}:
            return f"connector and {len(states) - 1} task(s) RUNNING"
        if time.monotonic() >= deadline:
            tasks = ", ".join(f"task {t['id']} {t['state']}" for t in result["tasks"]) or "no task"
            raise ConnectError(
                f"connector {settings.connector_name} is {result['connector']['state']} "
                f"({tasks}) after {timeout:.0f} s, not RUNNING"
            )
        time.sleep(interval)
