"""What the job's driver is doing, as its REST API reports it."""

from typing import Any

import httpx


def _app(driver_ui: str) -> str:
    return f"{driver_ui}/api/v1/applications/{_get(f'{driver_ui}/api/v1/applications')[0]['id']}"


def _get(url: str, **params: str) -> Any:
    return httpx.get(url, params=params, timeout=5).json()


def lost_executors(driver_ui: str) -> int:
    """How many of the application's executors have been lost (no longer active)."""
    try:
        executors = _get(f"{_app(driver_ui)}/allexecutors")
    except (httpx.HTTPError, ValueError, IndexError, KeyError):
        return 0
    return sum(1 for e in executors if e["id"] != "driver" and not e["isActive"])


def batch_running(driver_ui: str) -> bool:
    """True while the driver runs a Spark job (a micro-batch being computed or staged)."""
    try:
        jobs = _get(f"{_app(driver_ui)}/jobs", status="running")
    except (httpx.HTTPError, ValueError, IndexError, KeyError):
        return False
    return bool(jobs)
