"""Which Connect worker runs the connector's task, asked of a worker that is alive."""

import json
import re
from typing import Any

import httpx

from onceflow.settings.ops import get_ops_settings
from onceflow.topology import Layout
from stack.components import CONNECTOR_WATCHDOG
from stack.waiting import wait_for
from tests.cluster.program_logs import log_since, log_size


def _status(worker_url: str, connector: str) -> dict[str, Any]:
    try:
        url = f"{worker_url}/connectors/{connector}/status"
        answer = httpx.get(url, timeout=5, auth=get_ops_settings().auth()).json()
    except (httpx.HTTPError, ValueError):
        return {}
    return answer if isinstance(answer, dict) else {}


def task_worker(worker_url: str, connector: str) -> str | None:
    """The URL of the worker running task 0 when it is RUNNING, as `worker_url` sees it (the
    status topic: a dead worker's task shows RUNNING until the task moved), else None."""
    if connector_state(worker_url, connector) != "RUNNING":
        return None
    return task_only_worker(worker_url, connector)


def task_only_worker(worker_url: str, connector: str) -> str | None:
    """task_worker, whatever the connector's own state says (after a zombie worker returns, the
    status topic may hold its stale UNASSIGNED for the connector while the task runs)."""
    tasks = _status(worker_url, connector).get("tasks", [])
    if len(tasks) != 1:
        return None
    task = tasks[0]
    return url_of(str(task["worker_id"])) if task["state"] == "RUNNING" else None


def task_states(worker_url: str, connector: str) -> list[str]:
    """Each task's state as `worker_url` reports it ([] when it does not answer)."""
    return [str(task["state"]) for task in _status(worker_url, connector).get("tasks", [])]


def connector_state(worker_url: str, connector: str) -> str | None:
    """The connector's own state as `worker_url` reports it (None when it does not answer)."""
    state = _status(worker_url, connector).get("connector", {}).get("state")
    return None if state is None else str(state)


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


# What a fenced zombie's exactly-once source task logs (docs/operations.md, the cluster's failure
# test): the broker refused its producer's epoch, or the client found itself fenced; or, when the
# zombie's task restarts before it writes anything, Postgres refuses it the replication slot the
# live task holds (one reader per slot), so it never reads a change to write.
FENCED = (
    "InvalidProducerEpochException",
    "ProducerFencedException",
    'replication slot "onceflow_outbox" is active for PID',
)


def settled_task_worker(urls: list[str], connector: str) -> str:
    """The worker running the task once every worker reports the same one."""
    seen: list[str | None] = []

    def settled() -> bool:
        seen[:] = [task_worker(u, connector) for u in urls]
        return seen[0] is not None and len(set(seen)) == 1

    wait_for(settled, what=f"every worker to agree where {connector}'s task runs", timeout=180)
    assert seen[0] is not None
    return seen[0]


def wait_task_on(worker_url: str, connector: str, timeout: float = 180) -> None:
    """Wait until this worker reports the connector's task RUNNING on itself."""
    wait_for(
        lambda: task_worker(worker_url, connector) == worker_url,
        what=f"{connector}'s task RUNNING on {worker_url}",
        timeout=timeout,
    )


def wait_fenced(program: str, since: int, timeout: float = 180, also: tuple[str, ...] = ()) -> str:
    """Wait until the worker's log, from byte `since` on, says its task was fenced (FENCED, or
    one of `also`); returns what it said."""
    said: list[str] = []

    def fenced() -> bool:
        log = log_since(program, since)
        said[:] = [m for m in (*FENCED, *also) if m in log]
        return bool(said)

    wait_for(
        fenced,
        what=f"the zombie's task fenced ({program}'s log says one of {FENCED + also})",
        timeout=timeout,
    )
    return said[0]


def producer_initialized(program: str, since: int, connector: str) -> bool:
    """True when the worker's log, from byte `since` on, says task 0's producer initialized its
    transactional id (KIP-618's `<group>-<connector>-0`): the coordinator then fences every
    earlier producer of that id, a zombie's included (KIP-98)."""
    said = re.compile(rf"transactionalId=[^\]]*-{re.escape(connector)}-0\] ProducerId set to ")
    return said.search(log_since(program, since)) is not None


def wait_task_stopped(program: str, since: int, connector: str, timeout: float = 180) -> None:
    """Wait until the worker's log, from byte `since` on, says it stopped task 0."""
    wait_for(
        lambda: f"Stopping task {connector}-0" in log_since(program, since),
        what=f"{program} stopping {connector}-0 (its log)",
        timeout=timeout,
    )


def watchdog_restarts(since: int) -> list[str]:
    """What the connector watchdog (services/ops/connect_watchdog.py: a FAILED task, a connector
    stuck UNASSIGNED while its task runs) restarted since byte `since` of its log: one line per
    restart."""
    restarts = []
    for line in log_since(CONNECTOR_WATCHDOG, since).splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            if str(entry.get("msg", "")).startswith("restarting "):
                restarts.append(str(entry["msg"]))
    return restarts


def task_worker_with_fresh_status(urls: list[str], connector: str) -> tuple[str, list[str]]:
    """settled_task_worker, once the connector and its task both read RUNNING on every worker:
    after a fault the watchdog restarts a FAILED task, or a connector whose status a zombie left
    UNASSIGNED (it waits 30 s for Connect to settle it first). Returns the worker and what the
    watchdog restarted meanwhile."""
    since = log_size(CONNECTOR_WATCHDOG)

    def fresh() -> bool:
        seen = {task_worker(u, connector) for u in urls}
        return len(seen) == 1 and None not in seen

    wait_for(fresh, what=f"{connector} and its task RUNNING on every worker", timeout=240)
    return settled_task_worker(urls, connector), watchdog_restarts(since)
