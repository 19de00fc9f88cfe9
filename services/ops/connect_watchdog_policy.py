"""What the connect watchdog does about one reading of the connector's status (pure: status,
memory and time in, restarts and holds out; services/ops/connect_watchdog.py does the I/O).

- A FAILED task is restarted: Connect never restarts one itself, and an exactly-once source
  task fails for good when a network fault outlasts its producer transaction (KAFKA-15059);
  meanwhile the replication slot retains WAL towards its cap.
- A connector UNASSIGNED or FAILED while every task of it runs, for `stuck_after_s`, is
  restarted alone: a worker cut off from the brokers can write that status after the live
  worker's RUNNING, and nothing rewrites it (docs/operations.md, "Rehearsing network faults").
- Restarts of one target in a row back off exponentially, up to a cap: a failure that comes
  back at every restart (a wrong setting, a lost slot, a password) must not become a hot
  restart loop. A task that failed while the group settled (onceflow/connect_settling.py) is
  a known transient: its first restart does not count; if it fails so again, it backs off.
"""

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from onceflow.connect_settling import failed_while_settling

CONNECTOR = "connector"
# The connector's own states that need a restart when they last while its tasks run.
STUCK_STATES = ("UNASSIGNED", "FAILED")


@dataclass(frozen=True)
class Policy:
    """The watchdog's timings."""

    # How often the status is read.
    poll_s: float = 5.0
    # Connect's own rebalance shows a moving connector UNASSIGNED for a while (the cluster waits
    # scheduled.rebalance.max.delay.ms, 10 s, for a departed worker): only one not RUNNING
    # this long while its tasks run is stuck.
    stuck_after_s: float = 30.0
    # After its n-th restart in a row a target waits first * 2^(n-1) s, at most cap, before the
    # next one. The first restart is at once: the slot retains WAL while the task is down.
    backoff_first_s: float = 10.0
    backoff_cap_s: float = 300.0
    # A target seen RUNNING this long after its last restart starts its count again.
    healthy_after_s: float = 120.0

    def __post_init__(self) -> None:
        if min(self.poll_s, self.backoff_first_s, self.healthy_after_s) <= 0:
            raise ValueError(f"the watchdog's intervals must be positive: {self}")
        if self.backoff_cap_s < self.backoff_first_s or self.stuck_after_s < 0:
            raise ValueError(f"the backoff's cap must be at least its first step: {self}")

    def backoff_s(self, restarts: int) -> float:
        """How long after its `restarts`-th restart in a row a target may be restarted again."""
        if restarts <= 0:
            return 0.0
        return min(self.backoff_cap_s, self.backoff_first_s * 2.0 ** (restarts - 1))


@dataclass(frozen=True)
class Target:
    """What the watchdog remembers of one target (the connector, or a task)."""

    # Restarts in a row (reset once it runs healthy_after_s after the last one).
    restarts: int = 0
    last_restart: float | None = None
    # Since when it has needed a restart (None: it does not now).
    troubled_since: float | None = None
    # The restart count whose hold was already reported (a hold is logged once).
    announced: int = -1


@dataclass(frozen=True)
class Restart:
    """Restart this target now."""

    target: str
    task_id: int | None
    state: str
    trace: str
    # This restart's number in a row (a settling restart does not count).
    restarts: int
    settling: bool = False


@dataclass(frozen=True)
class Hold:
    """The target needs a restart but is backing off; `first` when this hold is new."""

    target: str
    state: str
    trace: str
    restarts: int
    wait_s: float
    first: bool


Memory = Mapping[str, Target]
Decision = Restart | Hold


def task_target(task_id: int) -> str:
    return f"task {task_id}"


def trace_head(trace: str) -> str:
    """A Connect trace in one line: its first line, and its root cause (the last `Caused by:`)
    when that says something else."""
    lines = [line.strip() for line in trace.strip().splitlines() if line.strip()]
    if not lines:
        return "no trace"
    causes = [line.removeprefix("Caused by: ") for line in lines if line.startswith("Caused by:")]
    if causes and causes[-1] != lines[0]:
        return f"{lines[0]} (root cause: {causes[-1]})"
    return lines[0]


def agreed(reports: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """One status from every answering worker's (worker id "host:port", its status). A worker
    cut off from the brokers still answers its REST API with its last view of the status topic,
    and a worker's status write may not have reached the others yet. So, per task, a worker's
    report about a task on itself (first-hand) wins over what another says of it: a zombie's
    own FAILED loses to the live worker's RUNNING on itself, and a failing worker's FAILED wins
    over another's second-hand RUNNING on that worker. Without a first-hand report, a task is
    FAILED only when every worker says so. The connector needs a restart only when every
    worker says it is stuck."""
    if not reports:
        raise ValueError("no status to agree on")
    first = reports[0][1]
    connectors = [dict(s.get("connector") or {}) for _, s in reports]
    connector = next((c for c in connectors if c.get("state") not in STUCK_STATES), connectors[0])
    seen: dict[int, list[tuple[bool, dict[str, Any]]]] = {}
    for reporter, status in reports:
        for task in status.get("tasks") or []:
            own = task.get("worker_id") == reporter
            seen.setdefault(int(task["id"]), []).append((own, dict(task)))
    tasks = []
    for task_id in sorted(seen):
        entries = seen[task_id]
        own = [task for is_own, task in entries if is_own]
        candidates = own or [task for _, task in entries]
        working = [task for task in candidates if task.get("state") != "FAILED"]
        if own:
            tasks.append(working[0] if working else own[0])
        else:
            tasks.append(working[0] if working else candidates[0])
    return {**first, "connector": connector, "tasks": tasks}


def _targets(status: Mapping[str, Any]) -> list[tuple[str, int | None, dict[str, Any], bool]]:
    """Each target in the status: its name, task id, its status entry, and whether it needs a
    restart."""
    tasks: list[dict[str, Any]] = list(status.get("tasks") or [])
    connector: dict[str, Any] = dict(status.get("connector") or {})
    tasks_run = bool(tasks) and all(t.get("state") == "RUNNING" for t in tasks)
    found: list[tuple[str, int | None, dict[str, Any], bool]] = [
        (CONNECTOR, None, connector, connector.get("state") in STUCK_STATES and tasks_run)
    ]
    for task in tasks:
        found.append(
            (task_target(int(task["id"])), int(task["id"]), task, task["state"] == "FAILED")
        )
    return found


def decide(
    status: Mapping[str, Any], memory: Memory, now: float, policy: Policy
) -> tuple[list[Decision], dict[str, Target]]:
    """What to do about this status (Connect's GET /connectors/NAME/status) at `now`
    (monotonic seconds), and the memory to pass next time. A Restart is not remembered until
    it is done: pass its memory through `restarted`."""
    decisions: list[Decision] = []
    remembered = dict(memory)
    for name, task_id, entry, troubled in _targets(status):
        target = remembered.get(name, Target())
        state = str(entry.get("state", "?"))
        if not troubled:
            ran_long = (
                state == "RUNNING"
                and target.last_restart is not None
                and now - target.last_restart >= policy.healthy_after_s
            )
            remembered[name] = Target() if ran_long else replace(target, troubled_since=None)
            continue
        since = now if target.troubled_since is None else target.troubled_since
        target = replace(target, troubled_since=since)
        remembered[name] = target
        if name == CONNECTOR and now - since < policy.stuck_after_s:
            continue
        trace = trace_head(str(entry.get("trace", "")))
        # Only the first settling failure of a streak is free: one that comes back after its
        # restart (a worker that never gets the group's session key) counts and backs off like
        # any other, else it would be restarted every backoff_first_s for ever.
        settling = (
            task_id is not None and target.last_restart is None and failed_while_settling(entry)
        )
        # Restarts done in a row, a free settling one included (spaced like a first retry).
        done = target.restarts if target.last_restart is None else max(target.restarts, 1)
        wait = 0.0
        if target.last_restart is not None:
            wait = policy.backoff_s(done) - (now - target.last_restart)
        if wait <= 0:
            decisions.append(
                Restart(
                    name,
                    task_id,
                    state,
                    trace,
                    0 if settling else done + 1,
                    settling,
                )
            )
            continue
        first = target.announced != done
        remembered[name] = replace(target, announced=done)
        decisions.append(Hold(name, state, trace, done, wait, first))
    return decisions, remembered


def restarted(memory: Memory, done: Restart, now: float) -> dict[str, Target]:
    """The memory once `done` was carried out at `now`."""
    remembered = dict(memory)
    target = remembered.get(done.target, Target())
    remembered[done.target] = replace(target, restarts=done.restarts, last_restart=now)
    return remembered
