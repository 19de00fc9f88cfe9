"""The reconciliation's Prometheus series, read from its last reports at each scrape (so any
run, the stack's or `onceflow-ops reconcile`, shows at once). Served by the maintenance process.
"""

import logging
from collections.abc import Iterator

import psycopg
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from onceflow.settings import Settings
from services.reconcile import state

log = logging.getLogger("onceflow.reconcile")


class ReconcileCollector(Collector):
    """onceflow_reconcile_*: differences open, days with any, the last run and what it did;
    onceflow_reconcile_report_readable 0 when the reports cannot be read."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """One gauge per fact of the last reports."""
        readable = GaugeMetricFamily(
            "onceflow_reconcile_report_readable",
            "1 when the reconciliation's reports could be read at this scrape",
        )
        try:
            now = state.current(self.settings, role="reconcile")
        except psycopg.Error as exc:
            log.warning("reconciliation report unreadable: %s", exc)
            readable.add_metric([], 0)
            yield readable
            return
        readable.add_metric([], 1)
        yield readable
        facts = {
            "differences": (
                "Differences between the order tables, the topic and the analytics tables, "
                "over every day's last check",
                now.differences,
            ),
            "days_with_differences": (
                "Closed UTC days whose last check found a difference",
                now.days_with_differences,
            ),
            "intervals_checked": (
                "UTC days the last reconciliation run compared",
                now.days_checked,
            ),
            "records_read": ("Topic records the last run read (each once)", now.records_read),
            "last_run_timestamp_seconds": (
                "When the last reconciliation run finished",
                None if now.last_run_at is None else now.last_run_at.timestamp(),
            ),
        }
        for name, (doc, value) in facts.items():
            if value is not None:
                yield GaugeMetricFamily(f"onceflow_reconcile_{name}", doc, value=float(value))
