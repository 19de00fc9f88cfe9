"""Whether a component works now, not only whether its port is open: its probe must answer within
a deadline, a stage must progress, the connector and its tasks must run; and what supervisor
says of its process (state, uptime, restarts: the supervisor exporter's series)."""

import math
import time
import xmlrpc.client
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

import httpx
import psycopg
from prometheus_client.parser import text_string_to_metric_families

# A probe that does not answer within this is "not working": a frozen process accepts TCP
# connections (the kernel does) but never answers. Short, so a frozen component shows within 10 s.
DEADLINE = 2.0
# A stage with input waiting that committed no batch for this long is stuck (AggregationStale).
STALE_AFTER = 300.0
STATES_UP = frozenset({"RUNNING"})
# A process supervisor restarted on its own counts as crash-looping until it has run this long.
SETTLE = 15.0

# A probe says why a component does not work, in one sentence; None when it works.
Probe = Callable[[], str | None]
# A scrape: per sample name, each sample's labels and value.
Samples = dict[str, list[tuple[dict[str, str], float]]]


@dataclass(frozen=True)
class Process:
    """Supervisor's view of one program."""

    state: str
    uptime: float | None  # seconds since the current process started (None: not running)
    restarts: int | None  # automatic restarts since supervisord started (None: unknown)

    def as_dict(self) -> dict[str, object]:
        """For --json."""
        return {"state": self.state, "uptime_seconds": self.uptime, "restarts": self.restarts}


def _get(url: str, deadline: float, auth: httpx.Auth | None = None) -> httpx.Response | str:
    """The endpoint's answer, or why there is none (a timeout: frozen or overloaded)."""
    try:
        return httpx.get(url, timeout=deadline, auth=auth)
    except httpx.TimeoutException:
        return f"{url} did not answer within {deadline:g} s (frozen or overloaded)"
    except httpx.HTTPError as exc:
        return f"{url} is unreachable ({exc.__class__.__name__})"


def _samples(text: str) -> Samples:
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return samples


def scrape(url: str, deadline: float = DEADLINE) -> Samples | str:
    """A metrics endpoint's samples by name, or why it gave none, in one sentence."""
    answer = _get(url, deadline)
    if isinstance(answer, str):
        return answer
    if answer.status_code != 200:
        return f"{url} answered {answer.status_code}"
    return _samples(answer.text)


def answers(url: str, deadline: float = DEADLINE, auth: httpx.Auth | None = None) -> str | None:
    """The endpoint answers 200 within the deadline (to `auth`'s credentials, if given)."""
    answer = _get(url, deadline, auth)
    if isinstance(answer, str):
        return answer
    return None if answer.status_code == 200 else f"{url} answered {answer.status_code}"


def stage_progresses(
    url: str, deadline: float = DEADLINE, stale_after: float = STALE_AFTER
) -> str | None:
    """The aggregation job's metrics answer, and it committed a batch within `stale_after`
    while input waits (onceflow_aggregation_last_batch_timestamp_seconds, _input_waiting)."""
    samples = scrape(url, deadline)
    if isinstance(samples, str):
        return samples
    waiting = first(samples, "onceflow_aggregation_input_waiting")
    last = first(samples, "onceflow_aggregation_last_batch_timestamp_seconds")
    if waiting == 1 and last is not None and not math.isnan(last):
        idle = time.time() - last
        if idle > stale_after:
            return f"input waits and no batch committed for {idle:.0f} s (stuck)"
    return None


def connector_runs(
    connect_url: str, connector: str, deadline: float = DEADLINE, auth: httpx.Auth | None = None
) -> str | None:
    """The connector and each of its tasks are RUNNING (Kafka Connect's REST state, asked
    with `auth`: the ops credential)."""
    response = _get(f"{connect_url}/connectors/{connector}/status", deadline, auth)
    if isinstance(response, str):
        return response
    if response.status_code == 404:
        return f"connector {connector} is not registered"
    if response.status_code != 200:
        return f"Kafka Connect answered {response.status_code}"
    body = response.json()
    states = [("connector", body["connector"]["state"])]
    states += [(f"task {t['id']}", t["state"]) for t in body.get("tasks", [])]
    if len(states) == 1:
        return f"connector {connector} has no task"
    wrong = [f"{what} {state}" for what, state in states if state != "RUNNING"]
    return f"connector {connector}: {', '.join(wrong)}" if wrong else None


def slot_kept(dsn: str, slot: str, deadline: float = DEADLINE) -> str | None:
    """The replication slot still holds the WAL the connector needs: a LOST slot leaves the
    task RUNNING (Debezium retries for half an hour) while nothing is published."""
    try:
        with psycopg.connect(dsn, connect_timeout=max(1, math.ceil(deadline))) as conn:
            row = conn.execute(
                "SELECT coalesce(wal_status, 'lost') FROM pg_replication_slots"
                " WHERE slot_name = %s",
                (slot,),
            ).fetchone()
    except psycopg.Error as exc:
        return f"the replication slot could not be read ({exc.__class__.__name__})"
    return slot_verdict(slot, None if row is None else str(row[0]))


def slot_verdict(slot: str, wal_status: str | None) -> str | None:
    """Why the slot fails the connector (None: it does not; a missing one Debezium creates)."""
    if wal_status != "lost":
        return None
    return (
        f"replication slot {slot} is LOST (Postgres removed WAL it still needed): nothing is "
        "published; docs/operations.md#a-lost-replication-slot"
    )


def first(samples: Samples, name: str) -> float | None:
    """The first sample's value of a series (None when absent)."""
    values = samples.get(name)
    return values[0][1] if values else None


def processes(
    proxy: xmlrpc.client.ServerProxy | None, exporter_url: str, names: Iterable[str]
) -> dict[str, Process]:
    """Supervisor's state and uptime of each program (XML-RPC) and its automatic restarts (the
    exporter); with no supervisor every state is STOPPED, with no exporter restarts are None."""
    infos: dict[str, dict[str, Any]] = {}
    unknown = "STOPPED"  # no supervisord: nothing runs
    if proxy is not None:
        try:
            listed = cast(list[dict[str, Any]], proxy.supervisor.getAllProcessInfo())
            infos = {str(info["name"]): info for info in listed}
        except (OSError, xmlrpc.client.Error):
            unknown = "UNKNOWN"  # supervisord did not answer
    restarts = automatic_restarts(exporter_url)
    result = {}
    for name in names:
        info = infos.get(name)
        state = str(info["statename"]) if info else unknown
        up = None
        if info and state in STATES_UP:
            up = float(int(info["now"]) - int(info["start"]))
        result[name] = Process(state, up, restarts.get(name) if restarts is not None else None)
    return result


def automatic_restarts(exporter_url: str) -> dict[str, int] | None:
    """Per program, supervisor's own restarts (None when the exporter does not answer)."""
    samples = scrape(exporter_url)
    if isinstance(samples, str):
        return None
    return {
        labels["program"]: int(value)
        for labels, value in samples.get("onceflow_supervisor_process_starts_total", [])
        if labels.get("trigger") == "automatic"
    }


def verdict(process: Process, probe: Probe) -> str | None:
    """Why the component does not work (its process is down, or its probe fails); None if it
    works. A crash-looping process is STARTING or BACKOFF most of the time, and in between
    runs for less than SETTLE after an automatic restart."""
    if process.state not in STATES_UP:
        return f"process {process.state}"
    if process.restarts and process.uptime is not None and process.uptime < SETTLE:
        return (
            f"restarted by supervisor {process.restarts} times, the last {process.uptime:.0f} s"
            " ago (crash-looping?)"
        )
    try:
        return probe()
    except Exception as exc:  # a probe's bug is a sentence, never a stack trace
        return f"probe failed: {exc}"


def duration(seconds: float | None) -> str:
    """Uptime as `3d4h`, `2h5m`, `4m10s` or `9s`; `-` when not running."""
    if seconds is None:
        return "-"
    s = int(seconds)
    for unit, size, sub, subsize in (
        ("d", 86400, "h", 3600),
        ("h", 3600, "m", 60),
        ("m", 60, "s", 1),
    ):
        if s >= size:
            return f"{s // size}{unit}{(s % size) // subsize}{sub}"
    return f"{s}s"
