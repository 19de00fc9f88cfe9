"""What the job's driver is doing, as its REST API reports it."""

from typing import Any

import httpx


def _app(driver_ui: str) -> str:
    return f"{driver_ui}/api/v1/applications/{_get(f'{driver_ui}/api/v1/applications')[0]['id']}"


def _get(url: str, **params: str) -> Any:
    return httpx.get(url, params=params, timeout=5).json()


def _executors(driver_ui: str) -> list[dict[str, Any]]:
    """Every executor the driver has known (not the driver itself); none while unreachable."""
    try:
        executors: list[dict[str, Any]] = _get(f"{_app(driver_ui)}/allexecutors")
    except (httpx.HTTPError, ValueError, IndexError, KeyError):
        return []
    return [e for e in executors if e["id"] != "driver"]


def lost_executors(driver_ui: str) -> int:
    """How many of the application's executors have been lost (no longer active)."""
    return sum(1 for e in _executors(driver_ui) if not e["isActive"])


def active_executors(driver_ui: str) -> int:
    """How many executors are registered with the driver and active."""
    return sum(1 for e in _executors(driver_ui) if e["isActive"])


def running_jobs(driver_ui: str) -> list[int]:
    """The ids of the Spark jobs the driver runs now (a micro-batch being computed or staged)."""
    try:
        jobs = _get(f"{_app(driver_ui)}/jobs", status="running")
    except (httpx.HTTPError, ValueError, IndexError, KeyError):
        return []
    return [int(job["jobId"]) for job in jobs]


def lost_tasks(driver_ui: str, job_ids: list[int]) -> int:
    """How many tasks of these jobs failed or were killed (an executor lost under them)."""
    try:
        jobs = [_get(f"{_app(driver_ui)}/jobs/{job_id}") for job_id in job_ids]
    except (httpx.HTTPError, ValueError, IndexError, KeyError):
        return 0
    return sum(
        int(job["numFailedTasks"]) + int(job["numKilledTasks"]) + (job["status"] == "FAILED")
        for job in jobs
    )
