"""The repository's alert rules fire on the real stack and clear again: a test-owned Prometheus
(the real binary, its own port and data directory, scraping and evaluating every second, the
rules with `for:` shortened to a few seconds) scrapes the stack's Connect JMX exporter and the
aggregation job's metrics. Pausing the connector raises ConnectorPausedTooLong, resuming clears
it; stopping the aggregation job while orders flow raises AggregationBehindTopic, restarting it
clears it.

A job of the test's own (its topic, database, checkpoint and metrics port: the stack is left
alone) that crash-loops on one batch raises ComponentRestarting and AggregationStale, which
stays firing, the same alert, through its restarts with new input and without; a healthy job
on the same checkpoint clears it. A supervisord of the test's own, with the stack's event
listener, restarting a program that keeps exiting raises ComponentRestarting from supervisor's
count."""

import contextlib
import json
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from onceflow.paths import VENV_BIN
from onceflow.settings import ObservabilitySettings, Settings, get_observability_settings
from services.ops import alerts, cli, connect_api
from stack import supervisor
from stack.waiting import free_port, port_open, wait_for
from tests.e2e.orders import place
from tests.integration.aggregation.conftest import Job, Pipeline
from tests.integration.aggregation.history import (
    Event,
    delete_topic,
    interleave,
    make_history,
    produce,
)
from tests.integration.databases import drop_database
from tests.integration.observability.rules import RULE_FILES, load

FOR = "3s"  # instead of each rule's `for:` (minutes in production)
# AggregationStale's "no batch committed for 5 minutes", in seconds: shortened the same way.
STALE = ("> 300", "> 30")


def _write_config(folder: Path, targets: dict[str, int]) -> Path:
    rules = folder / "rules"
    rules.mkdir(parents=True)
    for path in RULE_FILES:
        document = load(path)
        for group in document["groups"]:
            for rule in group["rules"]:
                if "alert" in rule:
                    rule["for"] = FOR
                if rule.get("alert") == "AggregationStale":
                    assert STALE[0] in rule["expr"], "AggregationStale's threshold moved"
                    rule["expr"] = rule["expr"].replace(*STALE)
        (rules / path.name).write_text(yaml.safe_dump(document, sort_keys=False))
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


@contextlib.contextmanager
def _own_prometheus(folder: Path, targets: dict[str, int]) -> Iterator[str]:
    """A Prometheus of the test's own scraping these jobs (name -> port), loaded with the
    repository's rules; its URL once every target was scraped up."""
    binary = shutil.which("prometheus")
    assert binary, "prometheus is missing: apt-get install prometheus (make up installs it)"
    config = _write_config(folder, targets)
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
        wait_for(lambda: _targets_up(url, set(targets)), what="every target scraped", timeout=60)
        yield url
    finally:
        process.terminate()
        process.wait(30)


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a Prometheus of this test's own scraping the stack's Connect and job."""
    observability = get_observability_settings()
    targets = {
        "connect": observability.connect_jmx_port,
        "aggregation": observability.agg_metrics_port,
    }
    for job, port in targets.items():
        assert port_open("127.0.0.1", port), f"{job}'s metrics do not answer on 127.0.0.1:{port}"
    with _own_prometheus(tmp_path_factory.mktemp("prometheus"), targets) as url:
        yield url


def _targets_up(url: str, jobs: set[str]) -> bool:
    targets = httpx.get(f"{url}/api/v1/targets").json()["data"]["activeTargets"]
    return {t["labels"]["job"] for t in targets if t["health"] == "up"} == jobs


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


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Pipeline]:
    """A topic, database, checkpoint and metrics port of this test's own."""
    pipeline = Pipeline(tmp_path)
    try:
        yield pipeline
    finally:
        delete_topic(pipeline.bootstrap, pipeline.topic)
        drop_database(pipeline.database)


class CrashLoop(threading.Thread):
    """Starts the scratch job again as soon as it exits, as supervisor's autorestart does."""

    def __init__(self, pipeline: Pipeline, **extra: str) -> None:
        super().__init__(daemon=True)
        self.pipeline, self.extra = pipeline, extra
        self.stopping, self.exits = threading.Event(), list[int]()
        self.job: Job | None = None

    def run(self) -> None:
        while not self.stopping.is_set():
            self.job = job = self.pipeline.start(**self.extra)
            while job.proc.poll() is None and not self.stopping.wait(0.5):
                pass
            if job.proc.poll() is None:
                job.stop()
                return
            self.exits.append(job.wait())

    def stop(self) -> None:
        """Stop restarting it, and stop the running life."""
        self.stopping.set()
        self.join(120)


def _events(seed: int, orders: int) -> list[Event]:
    return interleave(make_history(orders, seed=seed, days=2), seed=seed)


def _stays_firing(url: str, name: str, loop: CrashLoop, *, lives: int) -> None:
    """`name` fires at every look, the same alert (never resolved in between), while the job
    dies and is started again `lives` more times."""
    (first,) = _firing(url, name)
    until = len(loop.exits) + lives

    def lived() -> bool:
        now = [a.active_at for a in _firing(url, name)]
        assert now == [first.active_at], f"{name} resolved (active since {now} now)"
        return len(loop.exits) >= until

    wait_for(lived, what=f"{lives} more restarts with {name} firing", timeout=600, interval=1)


def test_a_job_crash_looping_on_one_batch_alerts_and_stays_stale_with_and_without_input(
    scratch: Pipeline, tmp_path: Path
) -> None:
    earlier = _events(31, 20)
    produce(scratch.bootstrap, scratch.topic, [e.record() for e in earlier])
    job = scratch.start()
    try:
        scratch.wait_applied(len(earlier), 0, job)
    finally:
        assert job.stop() == 0
    ((committed,),) = scratch.query(
        "SELECT extract(epoch FROM max(committed_at))::float8 FROM aggregation.applied_batches"
    )
    produce(scratch.bootstrap, scratch.topic, [e.record() for e in _events(32, 10)])
    loop = CrashLoop(scratch, fault="crash_before_write")  # dies in each life's first batch
    loop.start()
    try:
        targets = {"aggregation": scratch.metrics_port}
        with _own_prometheus(tmp_path / "prometheus", targets) as url:
            (stale,) = _wait_alert(url, "AggregationStale", firing=True, timeout=300)
            assert stale.severity == "critical"
            # The ledger's last commit, whatever restarts happened (never "20782d").
            assert abs(float(stale.value) - (time.time() - committed)) < 30, stale.value
            (restarting,) = _wait_alert(url, "ComponentRestarting", firing=True, timeout=600)
            assert restarting.labels["component"] == "aggregation"
            assert loop.exits
            assert set(loop.exits) == {137}, loop.exits  # the fault, nothing else
            # New input arrives while it is stuck; then none: firing all along.
            produce(scratch.bootstrap, scratch.topic, [e.record() for e in _events(33, 10)])
            _stays_firing(url, "AggregationStale", loop, lives=2)
            _stays_firing(url, "AggregationStale", loop, lives=2)
            loop.stop()
            healthy = scratch.start()  # the same checkpoint: it applies the batch, once
            try:
                _wait_alert(url, "AggregationStale", firing=False, timeout=300)
            finally:
                assert healthy.stop() == 0
    finally:
        loop.stop()


def _scratch_supervisor(folder: Path, exporter_port: int) -> Path:
    """A supervisord config of the test's own: a program that exits 4 s after each start
    (past startsecs, so supervisor restarts it for ever) and the stack's event listener."""
    folder.mkdir()
    conf = folder / "supervisord.conf"
    conf.write_text(
        f"[supervisord]\nlogfile={folder / 'supervisord.log'}\npidfile={folder / 'pid'}\n"
        "nodaemon=true\n\n"
        "[program:flaky]\ncommand=/bin/sh -c 'sleep 4; exit 3'\nautorestart=true\n"
        f"startsecs=3\nstdout_logfile={folder / 'flaky.log'}\n\n"
        "[eventlistener:supervisor-exporter]\n"
        f"command={sys.executable} -m stack.supervisor_exporter {exporter_port} flaky\n"
        "events=PROCESS_STATE\npriority=1\nautorestart=true\n"
        f"stderr_logfile={folder / 'exporter.log'}\n"
    )
    return conf


def test_a_program_supervisor_keeps_restarting_alerts(tmp_path: Path) -> None:
    port = free_port()
    conf = _scratch_supervisor(tmp_path / "supervisor", port)
    supervisord = subprocess.Popen(
        [str(VENV_BIN / "supervisord"), "-c", str(conf)], stdout=subprocess.DEVNULL
    )
    try:
        wait_for(lambda: port_open("127.0.0.1", port), what="the event listener", timeout=60)
        with _own_prometheus(tmp_path / "prometheus", {"supervisor": port}) as url:
            (alert,) = _wait_alert(url, "ComponentRestarting", firing=True, timeout=120)
            assert alert.labels["component"] == "flaky"
            assert alert.severity == "critical"
            assert float(alert.value) >= 3
    finally:
        supervisord.terminate()
        supervisord.wait(60)
