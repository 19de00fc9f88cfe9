"""The repository's Prometheus rules and their promtool unit tests, as tests read them."""

import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from onceflow.paths import ROOT

PROMETHEUS_DIR = ROOT / "observability" / "prometheus"
CONFIG = PROMETHEUS_DIR / "prometheus.yml"
RULE_FILES = sorted((PROMETHEUS_DIR / "rules").glob("*.yml"))
RULE_TESTS = sorted((PROMETHEUS_DIR / "tests").glob("*.yml"))
RUNBOOKS = ROOT / "docs" / "operations.md"


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def alert_rules() -> list[dict[str, Any]]:
    """Every alerting rule of every rule file (recording rules left out)."""
    return [
        rule
        for path in RULE_FILES
        for group in load(path)["groups"]
        for rule in group["rules"]
        if "alert" in rule
    ]


def promtool() -> str:
    """The promtool binary (Debian package `prometheus`, which `make up` installs)."""
    found = shutil.which("promtool")
    assert found, "promtool is missing: apt-get install prometheus (make up installs it)"
    return found


def anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def heading_anchors(markdown: str) -> list[str]:
    """The anchors of every heading of a Markdown text (code blocks skipped)."""
    anchors, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"#{1,6} (.+)", line)):
            anchors.append(anchor(match.group(1)))
    return anchors
