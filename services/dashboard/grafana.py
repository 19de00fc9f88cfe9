"""The Grafana dashboard of compose users, rendered from the panels of the local dashboard.

`python -m services.dashboard.grafana` rewrites observability/grafana/dashboards/onceflow.json;
a unit test fails when the committed file is not what this renders.
"""

import json
import sys
from itertools import groupby
from pathlib import Path
from typing import Any

from onceflow.paths import ROOT
from services.dashboard.panels import (
    CONNECTOR_STATES,
    PANELS,
    RANGE_SECONDS,
    RANGES,
    REFRESH_SECONDS,
    STATUS_QUERY,
    Panel,
)

DASHBOARD_FILE = ROOT / "observability" / "grafana" / "dashboards" / "onceflow.json"
DATASOURCE = {"type": "prometheus", "uid": "prometheus"}
WIDTH, HALF, HEIGHT = 24, 12, 8


def _status_panels(y: int) -> list[dict[str, Any]]:
    status = {
        "type": "stat",
        "title": "Component status (up by job)",
        "datasource": DATASOURCE,
        "gridPos": {"x": 0, "y": y, "w": 7, "h": HEIGHT},
        "targets": [
            {
                "refId": "A",
                "datasource": DATASOURCE,
                "expr": STATUS_QUERY,
                "legendFormat": "{{job}}",
                "instant": True,
            }
        ],
        "options": {
            "colorMode": "background",
            "graphMode": "none",
            "textMode": "value_and_name",
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
        },
        "fieldConfig": {
            "defaults": {
                "mappings": [
                    {
                        "type": "value",
                        "options": {
                            "0": {"text": "down", "color": "red"},
                            "1": {"text": "up", "color": "green"},
                        },
                    }
                ],
                "thresholds": {
                    "mode": "absolute",
                    "steps": [{"color": "red", "value": None}, {"color": "green", "value": 1}],
                },
            },
            "overrides": [],
        },
    }
    connector = {
        "type": "stat",
        "title": "Connector state",
        "description": "Kafka Connect's current state of the connector and each task: a paused "
        "connector reads paused, not up.",
        "datasource": DATASOURCE,
        "gridPos": {"x": 7, "y": y, "w": HALF - 7, "h": HEIGHT},
        "targets": [
            {
                "refId": chr(ord("A") + n),
                "datasource": DATASOURCE,
                "expr": series.expr,
                "legendFormat": series.legend,
                "instant": True,
            }
            for n, series in enumerate(CONNECTOR_STATES)
        ],
        "options": {
            "colorMode": "none",
            "graphMode": "none",
            "textMode": "name",
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
        },
    }
    alerts = {
        "type": "alertlist",
        "title": "Firing alerts",
        "description": "Prometheus's alert rules (observability/prometheus/rules), as Grafana "
        "lists a Prometheus data source's rules.",
        "gridPos": {"x": HALF, "y": y, "w": HALF, "h": HEIGHT},
        "options": {
            "alertInstanceLabelFilter": "",
            "groupMode": "default",
            "maxItems": 20,
            "showInstances": True,
            "sortOrder": 1,
            "stateFilter": {"firing": True, "pending": True, "normal": False},
            "viewMode": "list",
        },
    }
    return [status, connector, alerts]


def _timeseries(panel: Panel, x: int, y: int) -> dict[str, Any]:
    return {
        "type": "timeseries",
        "title": panel.title,
        "description": panel.description,
        "datasource": DATASOURCE,
        "gridPos": {"x": x, "y": y, "w": HALF, "h": HEIGHT},
        "targets": [
            {
                "refId": chr(ord("A") + n),
                "datasource": DATASOURCE,
                "expr": series.expr,
                "legendFormat": series.legend,
                "range": True,
            }
            for n, series in enumerate(panel.series)
        ],
        "fieldConfig": {
            "defaults": {
                "unit": panel.unit.grafana_unit,
                "min": 0,
                "custom": {"drawStyle": "line", "lineWidth": 2, "fillOpacity": 10},
            },
            "overrides": [],
        },
        "options": {
            "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
            "tooltip": {"mode": "multi", "sort": "none"},
        },
    }


def render() -> dict[str, Any]:
    """The dashboard JSON: status and alerts on top, then one row per hop."""
    panels = _status_panels(0)
    y = HEIGHT
    for hop, members in groupby(PANELS, key=lambda panel: panel.hop):
        panels.append(
            {
                "type": "row",
                "title": hop,
                "collapsed": False,
                "gridPos": {"x": 0, "y": y, "w": WIDTH, "h": 1},
                "panels": [],
            }
        )
        y += 1
        for n, panel in enumerate(members):
            if n and n % 2 == 0:
                y += HEIGHT
            panels.append(_timeseries(panel, HALF * (n % 2), y))
        y += HEIGHT
    for number, doc in enumerate(panels, start=1):
        doc["id"] = number
    return {
        "uid": "onceflow",
        "title": "Onceflow pipeline",
        "description": "Every hop of the pipeline, from the same queries as the local dashboard "
        "(services/dashboard/panels.py).",
        "tags": ["onceflow"],
        "editable": False,
        "schemaVersion": 39,
        "version": 1,
        "time": {"from": f"now-{RANGE_SECONDS // 60}m", "to": "now"},
        "timepicker": {"time_options": [label for label, _ in RANGES]},
        "refresh": f"{REFRESH_SECONDS}s",
        "timezone": "utc",
        "panels": panels,
    }


def rendered_text() -> str:
    """The file's exact content."""
    return json.dumps(render(), indent=2, ensure_ascii=False) + "\n"


def main(path: Path = DASHBOARD_FILE) -> None:
    """Write the dashboard file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(rendered_text())
    sys.stdout.write(f"wrote {path.relative_to(ROOT)}\n")


if __name__ == "__main__":
    main()
