"""`python -m services.maintenance`: run the maintenance tasks every maintenance_interval, each
time followed by a reconciliation run (services/reconcile: its series are served here too).

The local stack supervises it; production runs the same command as a long-lived service (or
`onceflow-ops maintenance` from cron / a Kubernetes CronJob: docs/operations.md). Several
instances are safe: an advisory lock lets one run at a time.
"""

import logging

import psycopg
from confluent_kafka import KafkaException
from prometheus_client import REGISTRY, start_http_server

from onceflow import logs, stop_signals
from onceflow.settings import (
    get_api_settings,
    get_observability_settings,
    get_retention_settings,
    get_settings,
)
from onceflow.settings.reconcile import get_reconcile_settings
from services.maintenance import metrics
from services.maintenance.runner import run_once
from services.maintenance.tasks import Windows
from services.reconcile import run as reconcile
from services.reconcile.metrics import ReconcileCollector

log = logging.getLogger("onceflow.maintenance")


def main() -> None:
    """Serve metrics, then run until SIGTERM/SIGINT, one run per interval."""
    settings, api, retention = get_settings(), get_api_settings(), get_retention_settings()
    reconciling = get_reconcile_settings()
    logs.configure(api.api_log_level)
    REGISTRY.register(ReconcileCollector(settings))
    start_http_server(
        retention.maintenance_metrics_port, addr=get_observability_settings().metrics_host
    )
    stop = stop_signals.stop_requested(log)
    windows = Windows.of(retention)
    while not stop.is_set():
        try:
            run_once(settings=settings, windows=windows, batch=retention.maintenance_batch_rows)
        except psycopg.Error as exc:
            # The database may be restarting; the next interval tries again.
            log.warning("maintenance run failed: %s", exc)
            metrics.RUNS.labels("failed").inc()
        try:
            reconcile.run_once(settings=settings, config=reconciling)
        except (psycopg.Error, KafkaException, reconcile.ReconcileError) as exc:
            log.warning("reconciliation run failed: %s", exc)
        stop.wait(retention.maintenance_interval.total_seconds())


if __name__ == "__main__":
    main()
