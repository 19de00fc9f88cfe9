"""Which Connect worker runs the connector's task, asked of a worker that is alive."""

import httpx

from onceflow.settings.ops import get_ops_settings
from onceflow.topology import Layout


def task_worker(worker_url: str, connector: str) -> str | None:
    """The URL of the worker running task 0 when it is RUNNING, as `worker_url` sees it (the
    status topic: a dead worker's task shows RUNNING until the task moved), else None."""
    try:
        url = f"{worker_url}/connectors/{connector}/status"
        status = httpx.get(url, timeout=5, auth=get_ops_settings().auth()).json()
    except (httpx.HTTPError, ValueError):
        return None
    tasks = status.get("tasks", [])
    if status.get("connector", {}).get("state") != "RUNNING" or len(tasks) != 1:
        return None
    task = tasks[0]
    return url_of(str(task["worker_id"])) if task["state"] == "RUNNING" else None


def url_of(worker_id: str) -> str:
    """A worker's REST URL from its id ("host:port", as Connect's status names it)."""
    return f"http://{worker_id}"


def program_of(layout: Layout, worker_url: str) -> str:
    """The supervisor program of a worker."""
    return next(w.program for w in layout.connect if w.url == worker_url)


def member(worker_url: str, connector: str) -> bool:
    """True when the worker answers and has joined the group (it knows the connector)."""
    try:
        answer = httpx.get(f"{worker_url}/connectors", timeout=5, auth=get_ops_settings().auth())
        return connector in answer.json()
    except (httpx.HTTPError, ValueError):
        return False
