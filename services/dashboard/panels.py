"""What the dashboards plot: the one home of every panel's title, unit and PromQL.

The local dashboard reads this list (`/api/panels`) and the Grafana dashboard of compose users
is rendered from it (`services/dashboard/grafana.py`), so both show the same queries. Every
series is one named in docs/observability.md.
"""

import math
import re
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

TOPIC = "outbox.event.order"
# The window of rate() and histogram_quantile(): at least four scrapes at any interval we use.
# Over a long range the page widens it to the step, so no sample falls between two points.
WINDOW = "1m"
WINDOW_SECONDS = 60


class Unit(StrEnum):
    """An axis unit: the local page formats ticks by it, Grafana gets `grafana_unit`."""

    PER_SECOND = "per_second"
    SECONDS = "seconds"
    MILLISECONDS = "milliseconds"
    BYTES = "bytes"
    RECORDS = "records"

    @property
    def grafana_unit(self) -> str:
        """Grafana's unit id for this axis."""
        return {
            Unit.PER_SECOND: "ops",
            Unit.SECONDS: "s",
            Unit.MILLISECONDS: "ms",
            Unit.BYTES: "bytes",
            Unit.RECORDS: "short",
        }[self]

    @property
    def label(self) -> str:
        """The axis label of the local page."""
        return {
            Unit.PER_SECOND: "per second",
            Unit.SECONDS: "seconds",
            Unit.MILLISECONDS: "milliseconds",
            Unit.BYTES: "bytes",
            Unit.RECORDS: "records",
        }[self]


@dataclass(frozen=True)
class Series:
    """One PromQL expression; `legend` is a Grafana legendFormat (`{{label}}` placeholders)."""

    expr: str
    legend: str


class Reduce(StrEnum):
    """How a panel's headline number is made from the latest value of each plotted series."""

    FIRST = "first"  # the first series, named by its legend (`p99`, `orders placed`)
    TOTAL = "total"  # the sum of every series (`total`), e.g. notifications of every outcome
    WORST = "worst"  # the largest series, named (`worst: partition 2`), e.g. lag per partition


@dataclass(frozen=True)
class Panel:
    """One time-series chart of one hop; `headline` says what its big number is."""

    key: str
    hop: str
    title: str
    unit: Unit
    series: tuple[Series, ...]
    description: str = ""
    headline: Reduce = Reduce.FIRST

    def as_dict(self) -> dict[str, Any]:
        """The panel as JSON for the page (unit spelled out with its label)."""
        doc = asdict(self)
        doc["unit"] = {"name": self.unit.value, "label": self.unit.label}
        return doc


def _rate(counter: str, by: str = "") -> str:
    grouping = f" by ({by})" if by else ""
    return f"sum{grouping} (rate({counter}[{WINDOW}]))"


def _quantile(q: float, histogram: str, selector: str = "") -> str:
    return f"histogram_quantile({q}, sum by (le) (rate({histogram}_bucket{selector}[{WINDOW}])))"


def _per_partition(selector: str) -> Series:
    return Series(f"max by (partition) ({selector})", "partition {{partition}}")


ORDER_ROUTES = '{route=~"/orders.*"}'

PANELS: tuple[Panel, ...] = (
    Panel(
        key="api_orders",
        hop="Order API",
        title="Orders into the API",
        unit=Unit.PER_SECOND,
        series=(
            Series(_rate("onceflow_orders_created_total"), "orders placed"),
            Series(
                _rate(f"onceflow_http_requests_total{ORDER_ROUTES}"),
                "/orders requests",
            ),
        ),
        description="New orders (not replays) and every /orders request, per second.",
    ),
    Panel(
        key="api_latency",
        hop="Order API",
        title="API latency",
        unit=Unit.SECONDS,
        series=(
            Series(_quantile(0.99, "onceflow_http_request_duration_seconds", ORDER_ROUTES), "p99"),
            Series(_quantile(0.5, "onceflow_http_request_duration_seconds", ORDER_ROUTES), "p50"),
        ),
        description="Request latency of the /orders routes.",
    ),
    Panel(
        key="debezium_events",
        hop="Debezium",
        title="Events out of Debezium",
        unit=Unit.PER_SECOND,
        series=(
            Series(_rate("debezium_postgres_streaming_total_number_of_events_seen"), "events seen"),
        ),
        description="Change events Debezium read from the replication slot.",
    ),
    Panel(
        key="debezium_lag",
        hop="Debezium",
        title="Debezium lag behind source",
        unit=Unit.MILLISECONDS,
        series=(
            Series("max(debezium_postgres_streaming_milliseconds_behind_source)", "behind source"),
        ),
        description="Commit time in Postgres to the event being read (MilliSecondsBehindSource).",
    ),
    Panel(
        key="topic_records",
        hop="Kafka",
        title=f"Records onto {TOPIC}",
        unit=Unit.PER_SECOND,
        series=(
            Series("sum(kafka_connect_source_task_source_record_write_rate)", "records written"),
        ),
        description="Records the connector's tasks write to Kafka (in transactions).",
    ),
    Panel(
        key="topic_lso_lag",
        hop="Kafka",
        title="Last stable offset lag",
        unit=Unit.RECORDS,
        series=(
            _per_partition(f'kafka_cluster_partition_last_stable_offset_lag{{topic="{TOPIC}"}}'),
        ),
        description="Records not yet readable with read_committed (open transactions).",
        headline=Reduce.WORST,
    ),
    Panel(
        key="job_rows",
        hop="Aggregation job",
        title="Job rows",
        unit=Unit.PER_SECOND,
        series=(
            Series("sum(onceflow_aggregation_input_rows_per_second)", "input"),
            Series("sum(onceflow_aggregation_processed_rows_per_second)", "processed"),
        ),
        description="Rows per second of the last micro-batch.",
    ),
    Panel(
        key="job_offsets_behind",
        hop="Aggregation job",
        title="Job offsets behind the topic",
        unit=Unit.RECORDS,
        series=(_per_partition(f'onceflow_aggregation_offsets_behind{{topic="{TOPIC}"}}'),),
        description="The topic's end minus the last batch's end offset.",
        headline=Reduce.WORST,
    ),
    Panel(
        key="job_freshness",
        hop="Aggregation job",
        title="Analytics freshness",
        unit=Unit.SECONDS,
        series=(Series("max(onceflow_aggregation_freshness_seconds)", "freshness"),),
        description="Now minus occurred_at of the newest event applied to analytics.",
    ),
    Panel(
        key="notifications_rate",
        hop="Notifications",
        title="Notifications",
        unit=Unit.PER_SECOND,
        series=(Series(_rate("onceflow_notifications_records_total", "outcome"), "{{outcome}}"),),
        description="Input records in committed transactions, by outcome.",
        headline=Reduce.TOTAL,
    ),
    Panel(
        key="notifications_lag",
        hop="Notifications",
        title="Notifications lag",
        unit=Unit.RECORDS,
        series=(_per_partition("onceflow_notifications_lag_records"),),
        description="Records between the committed position and the partition's end.",
        headline=Reduce.WORST,
    ),
    Panel(
        key="slot_wal",
        hop="PostgreSQL",
        title="Replication slot WAL retained",
        unit=Unit.BYTES,
        series=(
            Series("max by (slot) (onceflow_slot_retained_wal_bytes)", "{{slot}} retained"),
            Series("max by (slot) (onceflow_slot_unconfirmed_wal_bytes)", "{{slot}} unconfirmed"),
        ),
        description="WAL the outbox slot holds back (current LSN - restart_lsn).",
    ),
)

# Grafana's top row (the local page has the overview): `up` of every scrape target by job, and
# the connector's and its tasks' current state, so a paused connector reads paused, not up.
STATUS_QUERY = "min by (job) (up)"
CONNECTOR_STATES = (
    Series(
        "max by (connector, status) (kafka_connect_connector_status == 1)",
        "{{connector}} {{status}}",
    ),
    Series(
        "max by (connector, task, status) (kafka_connect_task_status == 1)",
        "{{connector}} task {{task}} {{status}}",
    ),
)
# The page's first window and how often it refreshes (Grafana gets the same).
RANGE_SECONDS = 15 * 60
STEP_SECONDS = 5
REFRESH_SECONDS = 5
# The overview probes every component (about 0.4 s of CPU in the dashboard per read): read less
# often than the charts; services/dashboard/overviews.py shares one read between tabs.
OVERVIEW_SECONDS = 10
# The range picker's choices, as far back as Prometheus keeps samples; a chart has at most
# this many points (Prometheus answers at most 11,000 per series).
RANGES = (("15m", 15 * 60), ("1h", 3600), ("6h", 6 * 3600), ("24h", 86400), ("7d", 7 * 86400))
MAX_POINTS = 720
_DURATION = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")
_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}


def duration_seconds(text: str) -> float:
    """A Prometheus duration (`7d`, `1d12h`, `90m`) in seconds; ValueError for anything else."""
    parts = _DURATION.findall(text)
    if not text or "".join(n + unit for n, unit in parts) != text:
        raise ValueError(f"{text!r} is not a Prometheus duration such as 7d, 12h or 1d12h")
    return sum(int(n) * _SECONDS[unit] for n, unit in parts)


def ranges(retention: str) -> list[dict[str, Any]]:
    """The picker's windows Prometheus can fill (its `retention` as a duration), each with
    the step that keeps a chart within MAX_POINTS (15m and 1h every 5 s, 7d every 14 min) and
    the rate window for that step (WINDOW, or the step when longer)."""
    kept = duration_seconds(retention)
    chosen = []
    for label, seconds in RANGES:
        if seconds > kept and seconds != RANGE_SECONDS:
            continue
        step = STEP_SECONDS * max(1, math.ceil(seconds / MAX_POINTS / STEP_SECONDS))
        window = f"{step}s" if step > WINDOW_SECONDS else WINDOW
        chosen.append({"label": label, "seconds": seconds, "step_seconds": step, "window": window})
    return chosen


def offered_queries(retention: str = "7d") -> frozenset[str]:
    """Every PromQL expression the page may ask the dashboard's proxy for: each panel series'
    expression with its rate window as the page widens it for each range (`[1m]` to the
    range's window). The proxy runs these and no other query."""
    windows = {WINDOW, *(choice["window"] for choice in ranges(retention))}
    return frozenset(
        series.expr.replace(f"[{WINDOW}]", f"[{window}]")
        for panel in PANELS
        for series in panel.series
        for window in windows
    )


def page_config(retention: str = "7d") -> dict[str, Any]:
    """Everything the page needs to draw itself; `retention` is Prometheus's."""
    return {
        "panels": [panel.as_dict() for panel in PANELS],
        "range_seconds": RANGE_SECONDS,
        "step_seconds": STEP_SECONDS,
        "refresh_seconds": REFRESH_SECONDS,
        "overview_seconds": OVERVIEW_SECONDS,
        "window": WINDOW,
        "ranges": ranges(retention),
        "retention": retention,
    }
