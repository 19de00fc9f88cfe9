"""The overview's tiles: each hop of `services.ops.overview` (its `Hop.as_dict()`, the same
facts as `onceflow-ops overview --json`) as one tile that says the hop's state in a word and
its facts in a few lines. Pure: dicts in, dicts out.

A tile follows the state, never just "the process runs": a paused connector is `paused`, a
stopped task `task 0 unassigned`, a lost slot `lost`, a frozen process `unhealthy`.
"""

from typing import Any

from stack.health import duration

MIB = 1024 * 1024
TITLES = {
    "api": "Order API",
    "slot": "Replication slot",
    "connector": "Connector",
    "topic": "Topic",
    "aggregation": "Aggregation job",
    "notifications": "Notifications",
    "dead_letters": "Dead letters",
    "reconciliation": "Reconciliation",
    "alerts": "Alerts",
}
# Tile states that are not trouble (`up`, nothing to do; the hop not built yet).
CALM = frozenset({"up", "not available yet"})


def tiles(hops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every hop's tile, in the overview's order."""
    return [tile(hop) for hop in hops]


def tile(hop: dict[str, Any]) -> dict[str, Any]:
    """One hop: `state` (one word or two), `calm`, its processes and its facts as lines."""
    state = _state(hop)
    return {
        "hop": hop["hop"],
        "title": TITLES.get(hop["hop"], hop["hop"]),
        "state": state,
        "calm": state in CALM,
        "processes": [_process(name, p) for name, p in hop.get("processes", {}).items()],
        "lines": _lines(hop),
        "problems": [
            *hop.get("trouble", []),
            *(f"{key} unreadable: {why}" for key, why in hop.get("unavailable", {}).items()),
        ],
    }


def _state(hop: dict[str, Any]) -> str:
    """The first of: not built, a process not running, the connector's or a task's state, the
    slot's, a process that does not work, a fact unreadable, alerts, anything else wrong."""
    if hop.get("healthy") is None and hop.get("available") is False:
        return "not available yet"
    processes = hop.get("processes", {}).values()
    stopped = [p["state"] for p in processes if p["state"] != "RUNNING"]
    if stopped:
        return str(stopped[0]).lower()
    for said in (_connector_state(hop), _slot_state(hop)):
        if said:
            return said
    if any(not p["healthy"] for p in processes):
        return "unhealthy"
    if hop.get("unavailable"):
        return "unreadable"
    firing = sum(a["state"] == "firing" for a in hop.get("alerts", []))
    if firing:
        return f"{firing} firing"
    letters = _letters(hop)
    if letters:
        return f"{letters} dead letters"
    differences = (hop.get("reconciliation") or {}).get("differences")
    if differences:
        return f"{differences} differences"
    return "trouble" if hop.get("trouble") else "up"


def _connector_state(hop: dict[str, Any]) -> str | None:
    connector = hop.get("connector")
    if not connector:
        return None
    if connector["state"] != "RUNNING":
        return str(connector["state"]).lower()
    if not connector["tasks"]:
        return "no task"
    for task in connector["tasks"]:
        if task["state"] != "RUNNING":
            return f"task {task['id']} {str(task['state']).lower()}"
    return None


def _slot_state(hop: dict[str, Any]) -> str | None:
    slot = hop.get("slot")
    if not slot:
        return None
    if slot.get("missing"):
        return "missing"
    if slot.get("lost"):
        return "lost"
    return None if slot.get("active") else "inactive"


def _letters(hop: dict[str, Any]) -> int:
    aggregation = hop.get("aggregation") or {}
    notifications = hop.get("notifications") or {}
    return int(aggregation.get("total", 0)) + int(notifications.get("newest", 0))


def _process(name: str, process: dict[str, Any]) -> dict[str, Any]:
    restarts = process.get("restarts")
    return {
        "name": name,
        "state": process["state"],
        "healthy": process["healthy"],
        "uptime": duration(process.get("uptime_seconds")),
        "restarts": "?" if restarts is None else restarts,
        "problem": process.get("problem"),
    }


def _lines(hop: dict[str, Any]) -> list[str]:
    """The hop's facts, a short line each."""
    found: list[str] = []
    if "url" in hop:
        found.append(hop["url"])
    if slot := hop.get("slot"):
        found += _slot_lines(slot)
    if connector := hop.get("connector"):
        tasks = [f"task {t['id']} {t['state']}" for t in connector["tasks"]] or ["no task"]
        found.append(f"{connector['name']} {connector['state']} · {', '.join(tasks)}")
    if topic := hop.get("topic"):
        parts = topic["partitions"]
        found.append(f"{topic['name']}: {len(parts)} partitions")
        found += [
            f"partition {p['partition']}: open transaction" for p in parts if p["open_transaction"]
        ]
    if lag := hop.get("lag"):
        found += _lag_lines(lag)
    if ledger := hop.get("ledger"):
        found.append(f"last batch {ledger['last_batch_at'] or 'none yet'}")
    if metrics := hop.get("metrics"):
        fresh = metrics.get("freshness_seconds")
        found.append("freshness " + ("unknown" if fresh is None else f"{fresh:.0f} s"))
    if "total" in (hop.get("aggregation") or {}):
        found.append(f"analytics.dead_letters: {hop['aggregation']['total']}")
    if notifications := hop.get("notifications"):
        found.append(f"{notifications['topic']}: {notifications['newest']} newest")
    if "note" in hop:
        found.append(hop["note"])
    if reconciliation := hop.get("reconciliation"):
        found += _reconciliation_lines(reconciliation)
    if "alerts" in hop:
        alerts = hop["alerts"]
        firing = sum(a["state"] == "firing" for a in alerts)
        found.append(f"{firing} firing, {len(alerts) - firing} pending")
    return found


def _slot_lines(slot: dict[str, Any]) -> list[str]:
    if slot.get("missing"):
        return [f"{slot['name']} does not exist"]
    reader = "read by the connector" if slot["active"] else "no reader"
    return [
        f"{slot['name']}: {reader}, WAL {slot['wal_status']}",
        f"{slot['bytes_behind'] / MIB:.1f} MiB not confirmed",
    ]


def _lag_lines(lag: dict[str, Any]) -> list[str]:
    if "lag_records" in lag:  # notifications: per instance, a number or why it is unknown
        return [
            f"{name}: " + (value if isinstance(value, str) else f"lag {value:.0f} records")
            for name, value in lag["lag_records"].items()
        ]
    if lag.get("worst_partition") is None:
        return ["no partition yet"]
    return [
        f"behind {lag['behind_total']} offsets in total",
        f"worst: partition {lag['worst_partition']}, {lag['behind_worst']} behind",
    ]


def _reconciliation_lines(reconciliation: dict[str, Any]) -> list[str]:
    if reconciliation["last_run_at"] is None:
        return ["no reconciliation run yet"]
    days = reconciliation["days_with_differences"]
    return [
        f"{reconciliation['differences']} differences"
        + (f" on {days} day{'s' if days > 1 else ''}" if days else "")
        + f" · {reconciliation['days_checked']} closed days checked",
        f"last run {reconciliation['last_run_at']}",
        *([reconciliation["note"]] if reconciliation.get("note") else []),
    ]
