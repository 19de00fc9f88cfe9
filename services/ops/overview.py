"""Every hop of the pipeline at a glance (issue 25, contract 6): the API, the slot and its WAL, the
connector and its tasks, the topic, the job's lag, ledger and freshness, the notifications'
lag, dead letters, reconciliation and the alerts Prometheus raises, each with its processes'
state, uptime, restarts and health (stack/checks.py).

Each fact is read on its own, side by side, and a fact that cannot be read is a sentence in
its hop's `unavailable`: with Kafka down, everything Postgres knows is still shown.
"""

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx
import psycopg
from confluent_kafka import KafkaError, KafkaException

from onceflow.settings import (
    NotificationSettings,
    ObservabilitySettings,
    Settings,
)
from services.ops import aggregation_letters, alerts, connect_api, lag, notification_letters
from services.ops.dead_letters import DeadLetterError, Filter
from services.ops.journey import iso
from services.reconcile import state as reconcile_state
from stack import checks, health, supervisor
from stack.components import CONNECTOR_WATCHDOG, Component, components

# Kafka calls give up after this: an unreachable broker costs the overview seconds, not minutes.
KAFKA_TIMEOUT = 5.0
# Errors whose message is already the sentence ops should read.
READABLE = (connect_api.ConnectError, alerts.PrometheusError, lag.LagError, DeadLetterError)


@dataclass
class Hop:
    """One hop: its processes, what is known of it, and what could not be read."""

    name: str
    programs: list[str]
    facts: dict[str, Any] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    processes: dict[str, checks.Checked] = field(default_factory=dict)
    built: bool = True  # False: the hop does not exist yet

    @property
    def trouble(self) -> list[str]:
        """What its facts say is wrong (a slot lost, a connector not running, alerts firing)."""
        found = []
        slot = self.facts.get("slot")
        if slot and (slot.get("missing") or slot.get("lost") or not slot.get("active")):
            found.append("the slot is missing, lost or not read by a connector")
        connector = self.facts.get("connector")
        if connector:
            states = [connector["state"], *(t["state"] for t in connector["tasks"])]
            if any(state != "RUNNING" for state in states) or len(states) == 1:
                found.append("the connector or a task is not RUNNING")
        differences = (self.facts.get("reconciliation") or {}).get("differences")
        if differences:
            found.append(
                f"{differences} differences between the order tables, the topic and the "
                "analytics tables (onceflow-ops reconcile names the orders)"
            )
        firing = [a for a in self.facts.get("alerts", []) if a["state"] == "firing"]
        if firing:
            found.append(f"{len(firing)} alerts firing")
        return found

    @property
    def healthy(self) -> bool:
        """Every process of the hop works, every fact of it was read and none is wrong."""
        working = all(c.healthy for c in self.processes.values())
        return working and not self.unavailable and not self.trouble

    def as_dict(self) -> dict[str, Any]:
        """For --json."""
        return {
            "hop": self.name,
            "healthy": self.healthy if self.built else None,
            "processes": {name: c.as_dict() for name, c in self.processes.items()},
            **self.facts,
            "trouble": self.trouble,
            "unavailable": self.unavailable,
        }


def why(exc: BaseException) -> str:
    """A failure to read a fact, as one sentence."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if isinstance(exc, psycopg.OperationalError):
        return f"the database is unreachable ({first})"
    if isinstance(exc, psycopg.Error):
        return f"the database refused the query ({first})"
    if isinstance(exc, KafkaException):
        error = exc.args[0] if exc.args else None
        detail = error.str() if isinstance(error, KafkaError) else first
        return f"Kafka is unreachable or refused the request ({detail})"
    if isinstance(exc, httpx.HTTPError):
        return f"no answer ({type(exc).__name__}: {first})"
    if isinstance(exc, READABLE):
        return first
    return f"{type(exc).__name__}: {first}" if str(exc).strip() else type(exc).__name__


def _slot(settings: Settings) -> dict[str, Any]:
    slot = lag.slot_lag(settings=settings)
    name = settings.replication_slot
    if slot is None:
        return {"name": name, "missing": True}
    return {"name": name, **vars(slot), "lost": slot.lost}


def _connector(settings: Settings) -> dict[str, Any]:
    status = connect_api.status(settings=settings)
    return {
        "name": settings.connector_name,
        "state": status["connector"]["state"],
        "tasks": [{"id": t["id"], "state": t["state"]} for t in status.get("tasks", [])],
    }


def _topic(settings: Settings) -> dict[str, Any]:
    parts = lag.topic_lag(settings=settings, timeout=KAFKA_TIMEOUT)
    return {
        "name": settings.topic,
        "partitions": [{**vars(p), "open_transaction": p.open_transaction} for p in parts],
    }


def _job_lag(topic: dict[str, Any]) -> dict[str, Any]:
    """The job's lag, from the topic's partitions against the ledger (read once, for both)."""
    parts = topic["partitions"]
    worst = max(parts, key=lambda p: p["behind"], default=None)
    return {
        "behind_total": sum(p["behind"] for p in parts),
        "worst_partition": None if worst is None else worst["partition"],
        "behind_worst": None if worst is None else worst["behind"],
    }


def _ledger(settings: Settings) -> dict[str, Any]:
    committed, batches = lag.last_batch(settings=settings)
    return {
        "batches": batches,
        "last_batch_at": iso(committed),
        "applied_through": lag.applied_offsets(settings=settings),
    }


def _job_metrics(url: str) -> dict[str, Any]:
    samples = health.scrape(url)
    if isinstance(samples, str):
        raise httpx.TransportError(samples)
    return {
        "freshness_seconds": health.first(samples, "onceflow_aggregation_freshness_seconds"),
        "input_waiting": health.first(samples, "onceflow_aggregation_input_waiting"),
    }


def _notifications_lag(urls: dict[str, str]) -> dict[str, Any]:
    per_instance: dict[str, float | str] = {}
    for name, url in urls.items():
        samples = health.scrape(url)
        if isinstance(samples, str):
            per_instance[name] = samples
            continue
        series = samples.get("onceflow_notifications_lag_records", [])
        per_instance[name] = sum(value for _, value in series)
    return {"lag_records": per_instance}


def _aggregation_letters(settings: Settings) -> dict[str, Any]:
    reasons = aggregation_letters.reasons(settings=settings, wanted=Filter())
    return {
        "total": sum(count for _, count, _ in reasons),
        "reasons": [{"reason": r, "count": n, "newest": iso(at)} for r, n, at in reasons],
    }


def _notification_letters(settings: Settings, notify: NotificationSettings) -> dict[str, Any]:
    letters = notification_letters.listing(settings=settings, notify=notify, timeout=KAFKA_TIMEOUT)
    return {"newest": len(letters), "topic": notify.notify_dlq_topic}


def _alerts(observe: ObservabilitySettings) -> list[dict[str, Any]]:
    found = alerts.current(
        url=observe.prometheus_url, timeout=health.DEADLINE, include_pending=True
    )
    return [
        {
            "name": a.name,
            "state": a.state,
            "severity": a.severity,
            "summary": a.summary,
            "runbook": a.runbook,
            "active_at": a.active_at,
        }
        for a in found
    ]


def _reconciliation(settings: Settings) -> dict[str, Any]:
    found = reconcile_state.current(settings)
    return {
        "differences": found.differences,
        "days_with_differences": found.days_with_differences,
        "last_run_at": iso(found.last_run_at),
        "days_checked": found.days_checked,
        "first_day": None if found.first_day is None else found.first_day.isoformat(),
        "last_day": None if found.last_day is None else found.last_day.isoformat(),
        "note": found.note,
    }


def _programs(parts: list[Component], *prefixes: str) -> list[str]:
    return [c.name for c in parts if c.kind in prefixes or c.name in prefixes]


def gather(
    settings: Settings, notify: NotificationSettings, observe: ObservabilitySettings
) -> list[Hop]:
    """Every hop, its facts read side by side."""
    parts = components(settings)
    instances = [c for c in parts if c.name.startswith("notifications-")]
    metrics = {
        c.name: f"http://127.0.0.1:{notify.metrics_port(int(c.name.rsplit('-', 1)[1]))}/metrics"
        for c in instances
    }
    job_metrics = f"http://127.0.0.1:{observe.agg_metrics_port}/metrics"
    hops = {
        "api": Hop("api", ["api"]),
        "slot": Hop("slot", ["postgres"]),
        "connector": Hop("connector", _programs(parts, "connect", CONNECTOR_WATCHDOG)),
        "topic": Hop("topic", _programs(parts, "kafka")),
        "aggregation": Hop("aggregation", ["aggregation"]),
        "notifications": Hop("notifications", [c.name for c in instances]),
        "dead_letters": Hop("dead_letters", []),
        "reconciliation": Hop("reconciliation", ["maintenance"]),
        "alerts": Hop("alerts", ["prometheus"]),
    }
    readers: list[tuple[str, str, Callable[[], Any]]] = [
        ("slot", "slot", lambda: _slot(settings)),
        ("connector", "connector", lambda: _connector(settings)),
        ("topic", "topic", lambda: _topic(settings)),
        ("aggregation", "ledger", lambda: _ledger(settings)),
        ("aggregation", "metrics", lambda: _job_metrics(job_metrics)),
        ("notifications", "lag", lambda: _notifications_lag(metrics)),
        ("dead_letters", "aggregation", lambda: _aggregation_letters(settings)),
        ("dead_letters", "notifications", lambda: _notification_letters(settings, notify)),
        ("reconciliation", "reconciliation", lambda: _reconciliation(settings)),
        ("alerts", "alerts", lambda: _alerts(observe)),
    ]
    with ThreadPoolExecutor(max_workers=len(readers) + 1) as pool:
        # No supervisord (the Compose stack, or nothing up): no process states to show.
        checked = pool.submit(checks.check, parts) if supervisor.is_running() else None
        futures = [(hops[name], key, pool.submit(read)) for name, key, read in readers]
        for hop, key, future in futures:
            try:
                hop.facts[key] = future.result()
            except Exception as exc:  # every reader's failure is a sentence, never a trace
                hop.unavailable[key] = why(exc)
        # A probe's failure is already a sentence (health.verdict).
        processes = {} if checked is None else checked.result()
    for hop in hops.values():
        hop.processes = {p: processes[p] for p in hop.programs if p in processes}
    job, topic = hops["aggregation"], hops["topic"]
    if "topic" in topic.facts:
        job.facts["lag"] = _job_lag(topic.facts["topic"])
    else:
        job.unavailable["lag"] = topic.unavailable["topic"]
    hops["api"].facts["url"] = f"http://{settings.api_host}:{settings.api_port}"
    return list(hops.values())
