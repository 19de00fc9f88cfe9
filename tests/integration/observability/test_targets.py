"""Prometheus runs the rendered config, loads it cleanly, and scrapes every target `up`."""

import subprocess
from typing import Any

import pytest
import yaml

from onceflow.settings import (
    get_notification_settings,
    get_observability_settings,
    get_retention_settings,
    get_settings,
)
from stack import prometheus
from stack.waiting import NotReadyError, wait_for
from tests.integration.observability.prom import api

pytestmark = pytest.mark.integration


def _expected() -> dict[str, list[str]]:
    config = prometheus.local_config(
        get_settings(),
        get_observability_settings(),
        get_notification_settings(),
        get_retention_settings(),
    )
    return prometheus.targets(config)


def test_prometheus_runs_the_config_make_up_rendered() -> None:
    running = yaml.safe_load(api("/api/v1/status/config")["yaml"])
    assert prometheus.targets(running) == _expected()
    assert running["rule_files"] == [str(prometheus.SOURCE.parent / "rules/*.yml")]
    assert running["global"]["scrape_interval"] == "5s"
    assert running["global"]["evaluation_interval"] == "5s"


@pytest.mark.parametrize("job", list(_expected()))
def test_every_target_is_up(job: str) -> None:
    wanted = set(_expected()[job])
    seen: list[dict[str, Any]] = []

    def all_up() -> bool:
        targets = api("/api/v1/targets", state="active")["activeTargets"]
        seen[:] = [t for t in targets if t["labels"]["job"] == job]
        return {t["labels"]["instance"] for t in seen if t["health"] == "up"} == wanted

    try:
        wait_for(all_up, what=f"job {job}", timeout=60, interval=1)
    except NotReadyError as exc:
        state = {t["labels"]["instance"]: (t["health"], t["lastError"]) for t in seen}
        raise AssertionError(
            f"job {job}: wanted {sorted(wanted)} up, Prometheus has {state}"
        ) from exc


@pytest.mark.parametrize(
    "config",
    [prometheus.LOCAL, prometheus.SOURCE, prometheus.COMPOSE],
    ids=["rendered", "source", "compose"],
)
def test_promtool_accepts_the_config(config: object) -> None:
    checked = subprocess.run(
        ["promtool", "check", "config", str(config)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_compose_runs_the_versions_the_local_stack_runs() -> None:
    compose = yaml.safe_load((prometheus.SOURCE.parents[2] / "docker-compose.yml").read_text())
    services = compose["services"]
    local = subprocess.run(["prometheus", "--version"], capture_output=True, text=True, check=True)
    version = services["prometheus"]["image"].rsplit(":v", 1)[1]
    assert f"version {version}+" in local.stdout + local.stderr
    exporter = subprocess.run(
        ["prometheus-postgres-exporter", "--version"], capture_output=True, text=True, check=True
    )
    version = services["postgres-exporter"]["image"].rsplit(":v", 1)[1]
    assert f"version {version}" in exporter.stdout + exporter.stderr
