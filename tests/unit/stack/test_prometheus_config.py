"""Prometheus's scrape jobs have one home (observability/prometheus/prometheus.yml): the local
config follows the settings' ports, compose's is rendered from it, and the docs list the same
jobs on the same ports."""

import re

from onceflow.paths import ROOT
from onceflow.settings import (
    NotificationSettings,
    ObservabilitySettings,
    RetentionSettings,
    Settings,
)
from stack import prometheus
from stack.components import components
from stack.supervisor import render_config


def _local(**overrides: object) -> dict[str, list[str]]:
    observe = ObservabilitySettings(**overrides)  # type: ignore[arg-type]
    config = prometheus.local_config(
        Settings(), observe, NotificationSettings(), RetentionSettings()
    )
    return prometheus.targets(config)


def test_the_source_lists_the_default_ports_of_the_settings() -> None:
    assert _local() == prometheus.targets(prometheus.source())


def test_the_local_config_follows_overridden_ports() -> None:
    targets = _local(kafka_jmx_port=19404, prometheus_port=19090)
    assert targets["kafka"] == ["127.0.0.1:19404"]
    assert targets["prometheus"] == ["127.0.0.1:19090"]
    notify = NotificationSettings(notify_metrics_port_base=9200, notify_instances=3)
    config = prometheus.local_config(
        Settings(), ObservabilitySettings(), notify, RetentionSettings()
    )
    assert prometheus.targets(config)["notifications"] == [
        "127.0.0.1:9201",
        "127.0.0.1:9202",
        "127.0.0.1:9203",
    ]


def test_the_local_config_loads_the_repositorys_rules() -> None:
    config = prometheus.local_config(
        Settings(), ObservabilitySettings(), NotificationSettings(), RetentionSettings()
    )
    assert prometheus.source()["rule_files"] == ["rules/*.yml"]
    assert config["rule_files"] == [str(ROOT / "observability/prometheus/rules/*.yml")]
    assert config["global"] == prometheus.source()["global"]


def test_compose_config_is_rendered_from_the_source() -> None:
    assert prometheus.COMPOSE.read_text() == prometheus.compose_text(), (
        "regenerate it: python -m stack.prometheus > observability/prometheus/compose.yml"
    )


def test_the_docs_list_every_job_on_its_port() -> None:
    text = (ROOT / "docs" / "observability.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| ([\d, ]+)", text, flags=re.MULTILINE)
    documented = {job: {p.strip() for p in ports.split(",")} for job, ports in rows}
    scraped = {
        job: {t.rsplit(":", 1)[1] for t in listed}
        for job, listed in prometheus.targets(prometheus.source()).items()
    }
    assert documented == scraped


def test_every_metrics_port_binds_to_loopback() -> None:
    observe = ObservabilitySettings()
    by_name = {c.name: c for c in components(Settings())}
    assert f"--web.listen-address=127.0.0.1:{observe.prometheus_port}" in (
        by_name["prometheus"].command
    )
    assert f"--web.listen-address=127.0.0.1:{observe.pg_exporter_port}" in (
        by_name["postgres-exporter"].command
    )
    assert f"=127.0.0.1:{observe.kafka_jmx_port}:observability/jmx/kafka.yml" in (
        by_name["kafka"].command
    )
    assert f"=127.0.0.1:{observe.connect_jmx_port}:observability/jmx/connect.yml" in (
        by_name["connect"].command
    )
    assert ObservabilitySettings().metrics_host == "127.0.0.1"


def test_observability_starts_after_the_pipeline() -> None:
    names = [c.name for c in components(Settings())]
    assert names[-3:] == ["postgres-exporter", "prometheus", "dashboard"]


def test_only_the_exporter_gets_the_monitor_connection() -> None:
    settings = Settings()
    conf = render_config(components(settings), settings)
    sections = {s.split("]", 1)[0]: s for s in conf.split("\n[") if s.startswith("program:")}
    exporter = sections["program:postgres-exporter"]
    password_file = settings.db_password_dir / "monitor"
    assert f'DATA_SOURCE_USER="{settings.monitor_db_user}"' in exporter
    assert f'DATA_SOURCE_PASS_FILE="{password_file}"' in exporter
    others = [text for name, text in sections.items() if name != "program:postgres-exporter"]
    assert not any("DATA_SOURCE" in text for text in others)


def test_supervisor_counts_every_programs_starts_on_loopback() -> None:
    settings = Settings()
    conf = render_config(components(settings), settings)
    (listener,) = [s for s in conf.split("\n[") if s.startswith("eventlistener:")]
    port = ObservabilitySettings().supervisor_exporter_port
    names = ",".join(c.name for c in components(settings))
    assert f"-m stack.supervisor_exporter {port} {names}\n" in listener
    assert "events=PROCESS_STATE\n" in listener
    assert "redirect_stderr" not in listener  # its stdout is supervisor's protocol
    assert prometheus.targets(prometheus.source())["supervisor"] == [f"127.0.0.1:{port}"]
    assert "supervisor" not in prometheus.targets(prometheus.compose_config())
