"""What the job's driver is doing, as its REST API reports it."""

import httpx


def batch_running(driver_ui: str) -> bool:
    """True while the driver runs a Spark job (a micro-batch being computed or staged)."""
    try:
        apps = httpx.get(f"{driver_ui}/api/v1/applications", timeout=5).json()
        jobs = httpx.get(
            f"{driver_ui}/api/v1/applications/{apps[0]['id']}/jobs",
            params={"status": "running"},
            timeout=5,
        ).json()
    except (httpx.HTTPError, ValueError, IndexError, KeyError):
        return False
    return bool(jobs)
