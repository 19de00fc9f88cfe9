"""`onceflow-ops overview`: every hop in one view (services/ops/overview.py), as a table for
people or one JSON document; a hop that cannot be read says why and the others are shown."""

from typing import Any

from onceflow.settings import (
    get_notification_settings,
    get_observability_settings,
    get_settings,
)
from services.ops.output import JsonFlag, console, emit_json
from services.ops.overview import Hop, gather
from stack import health

MIB = 1024 * 1024


def overview(as_json: JsonFlag = False) -> None:
    """Show every hop: processes (state, uptime, restarts), lag, dead letters and alerts."""
    hops = gather(get_settings(), get_notification_settings(), get_observability_settings())
    if as_json:
        emit_json({"healthy": all(h.healthy for h in hops), "hops": [h.as_dict() for h in hops]})
        return
    for hop in hops:
        verdict = _yes(hop.healthy) if hop.built else "not built"
        console.print(f"[bold]{hop.name}[/]: {verdict}", highlight=False)
        lines = [
            *(_process(name, hop) for name in hop.processes),
            *_facts(hop),
            *(f"[yellow]{key} unavailable: {why}[/]" for key, why in hop.unavailable.items()),
        ]
        for line in lines:
            console.print(f"  {line}", highlight=False)
    if not any(hop.processes for hop in hops):
        console.print("no supervisord answers: process states, uptimes and restarts unknown")


def _yes(healthy: bool) -> str:
    return "healthy" if healthy else "[red]unhealthy[/]"


def _process(name: str, hop: Hop) -> str:
    checked = hop.processes[name]
    process = checked.process
    restarts = "?" if process.restarts is None else process.restarts
    line = f"{name} {process.state} up {health.duration(process.uptime)}, {restarts} restarts"
    return line if checked.problem is None else f"{line}: [red]{checked.problem}[/]"


def _facts(hop: Hop) -> list[str]:
    """One line per fact of the hop, for people."""
    facts, lines = hop.facts, [*(f"[red]{t}[/]" for t in hop.trouble)]
    if "url" in facts:
        lines.append(facts["url"])
    if slot := facts.get("slot"):
        lines.append(_slot(slot))
    if connector := facts.get("connector"):
        tasks = ", ".join(f"task {t['id']} {t['state']}" for t in connector["tasks"])
        lines.append(f"{connector['name']} {connector['state']}; {tasks or 'no task'}")
    if topic := facts.get("topic"):
        ends = ", ".join(f"p{p['partition']} {p['end_offset']}" for p in topic["partitions"])
        lines.append(f"{topic['name']}: end offsets {ends}")
        lines += [
            f"p{p['partition']}: a transaction is open"
            for p in topic["partitions"]
            if p["open_transaction"]
        ]
    if ledger := facts.get("ledger"):
        lines.append(f"ledger: {ledger['batches']} batches, the last {ledger['last_batch_at']}")
    if job_lag := facts.get("lag"):
        lines.append(_lag(job_lag))
    if job := facts.get("metrics"):
        fresh = job["freshness_seconds"]
        waiting = "input waiting" if job["input_waiting"] == 1 else "no input waiting"
        lines.append(f"freshness {'-' if fresh is None else f'{fresh:.0f} s'}, {waiting}")
    if letters := facts.get("aggregation"):
        reasons = "; ".join(f"{r['count']} {r['reason']}" for r in letters["reasons"][:3])
        lines.append(f"aggregation: {letters['total']}" + (f" ({reasons})" if reasons else ""))
    if letters := facts.get("notifications"):
        lines.append(f"notifications: {letters['newest']} newest on {letters['topic']}")
    if "note" in facts:
        lines.append(facts["note"])
    if found := facts.get("reconciliation"):
        last = found["last_run_at"]
        lines.append(
            "no reconciliation run yet"
            if last is None
            else f"{found['differences']} differences over the closed days; the last run {last} "
            f"checked {found['days_checked']} days ({found['first_day']} .. {found['last_day']})"
        )
    for alert in facts.get("alerts", []):
        lines.append(
            f"{alert['state']} {alert['severity']} {alert['name']}: {alert['summary']}"
            f" (runbook {alert['runbook'] or 'none'})"
        )
    return lines


def _slot(slot: dict[str, Any]) -> str:
    if slot.get("missing"):
        return f"slot {slot['name']} is missing"
    active = "active" if slot["active"] else "inactive"
    safe = slot["safe_wal_size"]
    room = "" if safe is None else f", {safe / MIB:.0f} MiB until WAL is dropped"
    return (
        f"slot {slot['name']} {active}, WAL {slot['wal_status']}: "
        f"{slot['bytes_behind'] / MIB:.1f} MiB not confirmed{room}"
    )


def _lag(job_lag: dict[str, Any]) -> str:
    if "lag_records" in job_lag:
        return ", ".join(
            f"{name} lag {value if isinstance(value, str) else f'{value:.0f} records'}"
            for name, value in job_lag["lag_records"].items()
        )
    return (
        f"behind {job_lag['behind_total']} offsets"
        f" (worst: p{job_lag['worst_partition']}, {job_lag['behind_worst']})"
    )
