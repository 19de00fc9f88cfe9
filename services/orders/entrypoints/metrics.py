"""Prometheus metrics; multiprocess-safe when PROMETHEUS_MULTIPROC_DIR is set (several workers)."""

import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)

REQUESTS = Counter(
    "onceflow_http_requests_total",
    "HTTP requests by route and status",
    ["method", "route", "status"],
)
LATENCY = Histogram(
    "onceflow_http_request_duration_seconds",
    "HTTP request latency by route",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
ORDERS_CREATED = Counter("onceflow_orders_created_total", "Orders placed (not replays)")
REPLAYS = Counter(
    "onceflow_idempotent_replays_total", "Responses replayed for a known key", ["endpoint"]
)
TRANSITIONS_REJECTED = Counter(
    "onceflow_transitions_rejected_total", "Transitions refused with 409", ["action"]
)

EDGE_REFUSALS = Counter(
    "onceflow_http_edge_refusals_total",
    "Requests refused at the HTTP edge (431 head too large, 408/cut too slow, 503 overloaded)",
    ["reason"],
)

KEY_CHECKS = Counter(
    "onceflow_api_key_checks_total",
    "API keys not verified recently, by outcome: looked up (found or unknown), known unknown "
    "(no query), or refused because the peer failed too often (no query)",
    ["outcome"],
)


def exposition() -> tuple[bytes, str]:
    """The current metrics of this process, or of all workers in multiprocess mode."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(), CONTENT_TYPE_LATEST
