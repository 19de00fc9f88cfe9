"""The repository's alert rules fire on the real stack and clear again: a test-owned Prometheus
(the real binary, its own port and data directory, scraping and evaluating every second, the
rules with `for:` shortened to a few seconds) scrapes the stack's Connect JMX exporter and the
aggregation job's metrics. Pausing the connector raises ConnectorPausedTooLong, resuming clears
it; stopping the aggregation job while orders flow raises AggregationBehindTopic, restarting it
clears it."""

import json
import shutil
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from onceflow.settings import ObservabilitySettings, Settings, get_observability_settings
from services.ops import alerts, cli, connect_api
from stack import supervisor
from stack.waiting import free_port, port_open, wait_for
from tests.e2e.orders import place
from tests.integration.observability.rules import RULE_FILES, load

FOR = "3s"  # instead of each rule's `for:` (minutes in production)


def _write_config(folder: Path, observability: ObservabilitySettings) -> Path:
    rules = folder / "rules"
    rules.mkdir()
    for path in RULE_FILES:
        document = load(path)
        for group in document["groups"]:
            for rule in group["rules"]:
                if "alert" in rule:
                    rule["for"] = FOR
        (rules / path.name).write_text(yaml.safe_dump(document, sort_keys=False))
    targets = {
        "connect": observability.connect_jmx_port,
        "aggregation": observability.agg_metrics_port,
    }
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "1s"},
        "rule_files": ["rules/*.yml"],
        "scrape_configs": [
            {"job_name": job, "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}
            for job, port in targets.items()
        ],
    }
    path = folder / "prometheus.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a Prometheus of this test's own, loaded with the repository's rules."""
    binary = shutil.which("prometheus")
    assert binary, "prometheus is missing: apt-get install prometheus (make up installs it)"
    observability = get_observability_settings()
    for what, port in [
        ("the Connect JMX exporter", observability.connect_jmx_port),
        ("the aggregation job's metrics", observability.agg_metrics_port),
    ]:
        assert port_open("127.0.0.1", port), f"{what} does not answer on 127.0.0.1:{port}"
    folder = tmp_path_factory.mktemp("prometheus")
    config = _write_config(folder, observability)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with (folder / "prometheus.log").open("wb") as log:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={folder / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for(lambda: httpx.get(f"{url}/-/ready").status_code == 200, what=url, timeout=60)
        wait_for(lambda: _targets_up(url), what="both targets scraped", timeout=60)
        yield url
    finally:
        process.terminate()
        process.wait(30)


def _targets_up(url: str) -> bool:
    targets = httpx.get(f"{url}/api/v1/targets").json()["data"]["activeTargets"]
    return {t["labels"]["job"] for t in targets if t["health"] == "up"} == {
        "connect",
        "aggregation",
    }


def _firing(url: str, name: str) -> list[alerts.Alert]:
    return [a for a in alerts.current(url=url, timeout=5) if a.name == name]


def _wait_alert(url: str, name: str, *, firing: bool, timeout: float) -> list[alerts.Alert]:
    """Wait until `name` fires (or until it no longer does); return its alerts then."""
    what = f"{name} {'firing' if firing else 'quiet'}"
    wait_for(lambda: bool(_firing(url, name)) == firing, what=what, timeout=timeout)
    return _firing(url, name)


def _ops_alerts(url: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What `onceflow-ops alerts --json` lists when pointed at this Prometheus."""
    settings = ObservabilitySettings(prometheus_port=int(url.rsplit(":", 1)[1]))
    monkeypatch.setattr(cli, "get_observability_settings", lambda: settings)
    result = CliRunner().invoke(cli.app, ["alerts", "--json"])
    assert result.exit_code == 0, result.output
    return [a["name"] for a in json.loads(result.stdout)]


def _connector_state(settings: Settings) -> str:
    return str(connect_api.status(settings=settings)["connector"]["state"])


def test_a_paused_connector_fires_and_resuming_clears_it(
    prometheus: str, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    wait_for(lambda: _connector_state(settings) == "RUNNING", what="connector running", timeout=120)
    _wait_alert(prometheus, "ConnectorPausedTooLong", firing=False, timeout=60)
    connect_api.pause(settings=settings)
    try:
        (alert,) = _wait_alert(prometheus, "ConnectorPausedTooLong", firing=True, timeout=90)
        assert alert.labels["connector"] == settings.connector_name
        assert alert.runbook == "docs/operations.md#connectorpausedtoolong"
        assert "ConnectorPausedTooLong" in _ops_alerts(prometheus, monkeypatch)
        for failure in ("ConnectorNotRunning", "ConnectorTaskNotRunning"):
            assert not _firing(prometheus, failure)  # paused is not a failure
    finally:
        connect_api.resume(settings=settings)
    wait_for(lambda: _connector_state(settings) == "RUNNING", what="connector resumed", timeout=120)
    _wait_alert(prometheus, "ConnectorPausedTooLong", firing=False, timeout=90)


class Orders(threading.Thread):
    """Places an order every 0.2 s until stopped: order events keep flowing."""

    def __init__(self, api: httpx.Client) -> None:
        super().__init__(daemon=True)
        self.api, self.stopping, self.placed = api, threading.Event(), 0
        self.failure: AssertionError | None = None

    def run(self) -> None:
        customer = f"alerts-{uuid.uuid4().hex[:8]}"
        item = {"sku": "SKU-A", "quantity": 1, "unit_price_cents": 100}
        while not self.stopping.wait(0.2):
            try:
                place(self.api, customer, "EUR", [item])
                self.placed += 1
            except httpx.TransportError:
                self.stopping.wait(1)  # the API unreachable for a moment: orders resume
            except AssertionError as refused:  # the API answered, but not 201
                self.failure = refused
                return

    def count(self) -> int:
        """Orders placed so far; an order the API refused fails the test at once."""
        if self.failure is not None:
            raise self.failure
        return self.placed

    def stop(self) -> None:
        """Stop placing orders; an order the API refused fails the test, with its answer."""
        self.stopping.set()
        self.join(30)
        if self.failure is not None:
            raise self.failure


def test_a_stopped_job_while_orders_flow_fires_and_restarting_clears_it(
    prometheus: str, api: httpx.Client
) -> None:
    orders = Orders(api)
    orders.start()
    try:
        wait_for(lambda: orders.count() >= 10, what="orders flowing", timeout=60)
        _wait_alert(prometheus, "AggregationBehindTopic", firing=False, timeout=120)
        supervisor.proxy().supervisor.stopProcess("aggregation", True)
        try:
            (alert,) = _wait_alert(prometheus, "AggregationBehindTopic", firing=True, timeout=90)
            assert alert.labels["reason"] == "down"
            assert alert.severity == "critical"
        finally:
            supervisor.start("aggregation")
            wait_for(
                lambda: supervisor.state("aggregation") == "RUNNING",
                what="the job running again",
                timeout=120,
            )
        _wait_alert(prometheus, "AggregationBehindTopic", firing=False, timeout=300)
    finally:
        orders.stop()
