"""Prometheus metrics of the maintenance process (served on 127.0.0.1:maintenance_metrics_port)."""

from prometheus_client import Counter, Gauge

REMOVED = Counter(
    "onceflow_maintenance_removed_total", "Rows (or remembered ids) removed, by task", ["task"]
)
RUNS = Counter("onceflow_maintenance_runs_total", "Maintenance runs, by outcome", ["outcome"])
LAST_SUCCESS = Gauge(
    "onceflow_maintenance_last_success_timestamp_seconds", "When a run last completed"
)
