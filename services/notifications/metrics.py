"""Prometheus metrics of a notifications instance (served on 127.0.0.1:metrics_port(n))."""

from prometheus_client import Counter, Gauge, Histogram


def _at_zero(counter: Counter, *outcomes: str) -> Counter:
    """The counter with each outcome exported at 0 from the start: increase() sees the first."""
    for outcome in outcomes:
        counter.labels(outcome)
    return counter


RECORDS = _at_zero(
    Counter(
        "onceflow_notifications_records_total",
        "Input records in committed transactions, by outcome",
        ["outcome"],
    ),
    "notified",
    "duplicate",
    "dead_letter",
)
LATE = Counter(
    "onceflow_notifications_late_events_total",
    "Events older than the de-duplication window (a duplicate could no longer be recognised)",
)
TRANSACTIONS = _at_zero(
    Counter(
        "onceflow_notifications_transactions_total", "Kafka transactions, by outcome", ["outcome"]
    ),
    "committed",
    "aborted",
)
COMMIT_SECONDS = Histogram(
    "onceflow_notifications_commit_seconds",
    "send_offsets_to_transaction + commit_transaction",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
LAG = Gauge(
    "onceflow_notifications_lag_records",
    "Records between the committed position and the partition's end",
    ["partition"],
)
FORGOTTEN = Counter(
    "onceflow_notifications_forgotten_ids_total", "Notified ids dropped past the window"
)
CONFLICTS = Counter(
    "onceflow_notifications_conflicting_duplicates_total",
    "Copies of a notified event id with other content (dead letters: event id reused)",
)
PRODUCERS_RECREATED = Counter(
    "onceflow_notifications_producers_recreated_total",
    "Transactional producers replaced (same transactional.id, new epoch) after a failure",
)
