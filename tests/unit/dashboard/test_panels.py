"""The panels: one home for the local page and Grafana, and only series the docs name."""

import json
import re

import pytest
import yaml

from onceflow.paths import ROOT
from services.dashboard import grafana
from services.dashboard.panels import (
    CONNECTOR_STATES,
    MAX_POINTS,
    PANELS,
    STATUS_QUERY,
    STEP_SECONDS,
    Reduce,
    Unit,
    duration_seconds,
    page_config,
    ranges,
)

SERIES = re.compile(r"\b((?:onceflow|kafka|debezium)_[a-z0-9_]+)")
HISTOGRAM_PARTS = re.compile(r"_(bucket|count|sum)$")


def _documented() -> list[tuple[set[str], set[str]]]:
    """Per bullet of docs/observability.md: its full series names and its `_suffix` siblings
    (`debezium_postgres_streaming_milliseconds_behind_source`, `_connected`, ...)."""
    bullets = []
    for line in (ROOT / "docs" / "observability.md").read_text().splitlines():
        if line.startswith("- "):
            names = set(re.findall(r"`?\b([a-z][a-z0-9_]+)(?=[`{|])", line))
            suffixes = set(re.findall(r"[`|](_[a-z0-9_]+)", line))
            bullets.append((names, suffixes))
    return bullets


def _is_documented(name: str, bullets: list[tuple[set[str], set[str]]]) -> bool:
    for names, suffixes in bullets:
        if name in names:
            return True
        for suffix in suffixes:
            stem = name.removesuffix(suffix)
            if stem != name and any(full.startswith(stem + "_") for full in names):
                return True
    return False


def test_every_panel_plots_only_series_named_in_the_docs() -> None:
    bullets = _documented()
    used = {
        HISTOGRAM_PARTS.sub("", name)
        for panel in PANELS
        for series in panel.series
        for name in SERIES.findall(series.expr)
    }
    assert len(used) >= 12
    missing = sorted(name for name in used if not _is_documented(name, bullets))
    assert not missing, f"not in docs/observability.md: {missing}"


def test_the_committed_grafana_dashboard_is_what_the_panels_render() -> None:
    committed = grafana.DASHBOARD_FILE.read_text()
    assert committed == grafana.rendered_text(), (
        "run `python -m services.dashboard.grafana` and commit the result"
    )


def test_grafana_and_the_page_run_the_same_queries() -> None:
    dashboard = json.loads(grafana.DASHBOARD_FILE.read_text())
    in_grafana = {
        target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])
    }
    on_page = {s["expr"] for panel in page_config()["panels"] for s in panel["series"]}
    assert in_grafana == on_page | {STATUS_QUERY} | {s.expr for s in CONNECTOR_STATES}


def test_every_hop_has_a_panel_with_a_unit_and_keys_are_unique() -> None:
    hops = {panel.hop for panel in PANELS}
    assert {"Order API", "Debezium", "Kafka", "Aggregation job", "Notifications"} <= hops
    assert len({panel.key for panel in PANELS}) == len(PANELS)
    assert all(panel.unit.label and panel.unit.grafana_unit for panel in PANELS)


def test_grafana_provisioning_points_at_the_dashboard_and_prometheus() -> None:
    base = ROOT / "observability" / "grafana" / "provisioning"
    source = yaml.safe_load((base / "datasources" / "prometheus.yml").read_text())
    [prometheus] = source["datasources"]
    assert (prometheus["uid"], prometheus["url"]) == ("prometheus", "http://prometheus:9090")
    provider = yaml.safe_load((base / "dashboards" / "onceflow.yml").read_text())
    [files] = provider["providers"]
    assert files["type"] == "file"
    # The provider reads the folder where compose's Grafana mounts observability/grafana/dashboards.
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    mounts = dict(volume.split(":")[:2] for volume in compose["services"]["grafana"]["volumes"])
    assert files["options"]["path"] == mounts["./observability/grafana/dashboards"]


def test_each_headline_says_what_it_sums() -> None:
    """A panel of one series per label headlines the worst of them (per partition) or the
    total (by outcome); the first series alone would hide a lagging partition or a busy
    outcome behind a quiet one."""
    for panel in PANELS:
        templated = [s for s in panel.series if "{{" in s.legend]
        if any("{{partition}}" in s.legend for s in templated):
            assert panel.headline is Reduce.WORST, panel.key
        elif templated and panel.unit is Unit.PER_SECOND:
            assert panel.headline is Reduce.TOTAL, panel.key
        else:
            assert panel.headline is Reduce.FIRST, panel.key
    served = {p["key"]: p["headline"] for p in page_config()["panels"]}
    assert served["notifications_rate"] == "total"
    assert served["job_offsets_behind"] == "worst"


@pytest.mark.parametrize(
    ("retention", "labels"),
    [
        ("7d", ["15m", "1h", "6h", "24h", "7d"]),
        ("15d", ["15m", "1h", "6h", "24h", "7d"]),
        ("1d12h", ["15m", "1h", "6h", "24h"]),
        ("30m", ["15m"]),
        ("5m", ["15m"]),  # the first window is always offered
    ],
)
def test_the_range_picker_covers_what_prometheus_keeps(retention: str, labels: list[str]) -> None:
    offered = ranges(retention)
    assert [r["label"] for r in offered] == labels
    for choice in offered:
        assert choice["seconds"] / choice["step_seconds"] <= MAX_POINTS
        assert choice["step_seconds"] % STEP_SECONDS == 0
        # rate() over at least the step: no sample falls between two points of the chart
        assert duration_seconds(choice["window"]) >= choice["step_seconds"]
    assert offered[0]["step_seconds"] == STEP_SECONDS
    assert offered[0]["window"] == page_config()["window"]


@pytest.mark.parametrize("text", ["", "7", "7 days", "d7", "7d-", "1.5h"])
def test_a_retention_that_is_not_a_duration_is_refused_with_a_sentence(text: str) -> None:
    with pytest.raises(ValueError, match="not a Prometheus duration"):
        duration_seconds(text)


def test_durations() -> None:
    assert duration_seconds("7d") == 7 * 86400
    assert duration_seconds("1d12h") == 36 * 3600
    assert duration_seconds("90m") == 5400
