"""`python -m services.ops.connect_watchdog`: the operator's step for a connector that does not
come back by itself, done by a supervised process (supervisor runs it in both topologies,
compose as its own service). Every few seconds it reads the connector's status, as ops, and
restarts a FAILED task, or a connector stuck UNASSIGNED/FAILED while its task runs, with a
capped exponential backoff (connect_watchdog_policy.py decides; this module reads, restarts
and logs). Each restart is logged with its trace's first line.

It asks every worker of ONCEFLOW_CONNECT_URLS (by default the settings' Connect URL and the
topology's other workers; compose lists its workers) and restarts what their reports agree on
(connect_watchdog_policy.agreed): a worker cut off from the brokers answers with a stale status.
"""

import logging
import time
from typing import Any

import httpx

from onceflow import logs, stop_signals
from onceflow.settings import get_api_settings, get_settings
from onceflow.settings.ops import OpsCredentialMissingError
from services.ops.connect_watchdog_policy import (
    CONNECTOR,
    Decision,
    Memory,
    Policy,
    Restart,
    agreed,
    decide,
    restarted,
)
from stack import connector
from stack.waiting import UNREACHABLE

log = logging.getLogger("onceflow.connect_watchdog")
# Why a worker gave no status: unreachable, not yet in the group (404), no JSON, no credential.
READ_ERRORS: tuple[type[Exception], ...] = (*UNREACHABLE, ValueError, OpsCredentialMissingError)
POLICY = Policy()


def read_status(urls: list[str], name: str) -> tuple[str, dict[str, Any]] | str:
    """The connector's resource on the first worker that answers, and the status every worker
    that answers agrees on (connect_watchdog_policy.agreed: a worker cut off from the brokers
    serves a stale one); else why none did, in one sentence."""
    why = []
    found: list[tuple[str, dict[str, Any]]] = []
    for url in urls:
        resource = connector.connector_url(url, name)
        try:
            found.append((resource, connector.status(resource)))
        except READ_ERRORS as exc:
            why.append(f"{url}: {exc}")
    if not found:
        return "no Connect worker answered the status (" + "; ".join(why) + ")"
    reports = [(url.removeprefix("http://").split("/")[0], s) for url, s in found]
    return found[0][0], agreed(reports)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _restart(resource: str, done: Restart) -> None:
    if done.task_id is None:
        connector.restart_connector(resource)
    else:
        connector.restart_task(resource, done.task_id)


def report(decision: Decision, policy: Policy) -> None:
    """Log a restart (always) or a hold (when it is new)."""
    what = decision.target
    if isinstance(decision, Restart):
        if decision.settling:
            why = "failed while the Connect group settled (a restart is all it takes)"
        elif decision.target == CONNECTOR:
            why = f"{decision.state} while its tasks run, for {policy.stuck_after_s:.0f} s"
        else:
            why = decision.state
        count = "" if decision.settling else f", the {_ordinal(decision.restarts)} in a row"
        log.warning(
            "restarting %s (%s%s): %s",
            what,
            why,
            count,
            decision.trace,
            extra={"target": what, "restarts": decision.restarts, "trace": decision.trace},
        )
        return
    if not decision.first:
        return
    if decision.restarts < 2:
        # Once is not "every restart": the task may still be starting, or a second fault hit it.
        log.warning(
            "%s is %s again after its restart: holding the next restart %.0f s (backoff): %s",
            what,
            decision.state,
            decision.wait_s,
            decision.trace,
            extra={"target": what, "restarts": decision.restarts, "hold_s": round(decision.wait_s)},
        )
        return
    log.error(
        "%s is %s again after %d restart(s) in a row: holding the next restart %.0f s"
        " (backoff, at most %.0f s). A failure that comes back at every restart is not a"
        " network fault: read the trace and fix its cause (docs/operations.md,"
        " ConnectorTaskNotRunning): %s",
        what,
        decision.state,
        decision.restarts,
        decision.wait_s,
        policy.backoff_cap_s,
        decision.trace,
        extra={"target": what, "restarts": decision.restarts, "hold_s": round(decision.wait_s)},
    )


def watch_once(
    urls: list[str], name: str, memory: Memory, policy: Policy, unreachable: str | None
) -> tuple[Memory, str | None]:
    """One round: read, decide, restart, log. Returns the memory and why the status could not
    be read (logged when it changes)."""
    found = read_status(urls, name)
    if isinstance(found, str):
        if found != unreachable:
            log.warning("%s: trying again every %.0f s", found, policy.poll_s)
        return memory, found
    if unreachable is not None:
        log.info("the connector's status is readable again")
    resource, status = found
    decisions, memory = decide(status, memory, time.monotonic(), policy)
    for decision in decisions:
        if not isinstance(decision, Restart):
            report(decision, policy)
            continue
        try:
            _restart(resource, decision)
        except (httpx.HTTPError, OpsCredentialMissingError) as exc:
            # A rebalance answers 409; the next round sees the status again. Not "restarting":
            # the log's restarts are those Connect accepted (the tests count them).
            log.warning(
                "the restart of %s (%s) was refused: %s", decision.target, decision.state, exc
            )
            continue
        report(decision, policy)
        memory = restarted(memory, decision, time.monotonic())
    return memory, None


def main() -> None:
    """Watch until SIGTERM/SIGINT."""
    settings = get_settings()
    logs.configure(get_api_settings().api_log_level)
    urls = list(settings.connect_urls)
    stop = stop_signals.stop_requested(log)
    log.info(
        "watching connector %s on %s every %.0f s",
        settings.connector_name,
        ", ".join(urls),
        POLICY.poll_s,
    )
    memory: Memory = {}
    unreachable: str | None = None
    while not stop.is_set():
        memory, unreachable = watch_once(urls, settings.connector_name, memory, POLICY, unreachable)
        stop.wait(POLICY.poll_s)


if __name__ == "__main__":
    main()
