"""Prometheus and prometheus-postgres-exporter as stack components, and Prometheus's scrape
config, rendered from its one home, observability/prometheus/prometheus.yml.

That file lists every scrape job with its targets at the settings' default ports. The local
stack runs a copy whose ports follow the settings (`local_config`, written to .stack/conf by
`make up`); docker-compose.yml mounts observability/prometheus/compose.yml, the same jobs with
compose service names as hosts (`compose_config`). Regenerate that file after editing the
source: `python -m stack.prometheus > observability/prometheus/compose.yml`.
"""

import copy
import re
import shlex
import sys
from typing import Any

import yaml

from onceflow import paths
from onceflow.settings import (
    NotificationSettings,
    ObservabilitySettings,
    RetentionSettings,
    Settings,
)

SOURCE = paths.OBSERVABILITY / "prometheus" / "prometheus.yml"
COMPOSE = paths.OBSERVABILITY / "prometheus" / "compose.yml"
LOCAL = paths.CONF / "prometheus.yml"
PG_QUERIES = paths.OBSERVABILITY / "postgres" / "queries.yml"

# Each job's hosts in docker-compose.yml, in target order; a single port in the source is
# used for every host of the job (three brokers, two Connect workers, one JMX port each).
COMPOSE_HOSTS: dict[str, tuple[str, ...]] = {
    "prometheus": ("localhost",),
    "api": ("api",),
    "maintenance": ("maintenance",),
    "notifications": ("notifications-1", "notifications-2"),
    "aggregation": ("aggregation",),
    "kafka": ("kafka-1", "kafka-2", "kafka-3"),
    "connect": ("connect-1", "connect-2"),
    "postgres": ("postgres-exporter",),
}

# Jobs of the local stack only: compose runs no supervisor (ComponentRestarting counts its
# restarts from each process's process_start_time_seconds: docs/observability.md).
LOCAL_ONLY = ("supervisor",)

COMPOSE_HEADER = """\
# GENERATED from prometheus.yml by `python -m stack.prometheus` (stack/prometheus.py): edit
# that file, then regenerate this one. docker-compose.yml mounts it as Prometheus's config;
# the same jobs and ports as the local stack, with compose service names as hosts.
"""


def source() -> dict[str, Any]:
    """The scrape config as written in the repository."""
    config: dict[str, Any] = yaml.safe_load(SOURCE.read_text())
    return config


def job_ports(
    settings: Settings,
    observability: ObservabilitySettings,
    notify: NotificationSettings,
    retention: RetentionSettings,
) -> dict[str, list[int]]:
    """Each scrape job's ports, from the settings that own them (every Kafka node and Connect
    worker of the topology)."""
    layout = settings.layout
    return {
        "prometheus": [observability.prometheus_port],
        "api": [settings.api_port],
        "maintenance": [retention.maintenance_metrics_port],
        "notifications": [notify.metrics_port(n) for n in range(1, notify.notify_instances + 1)],
        "aggregation": [observability.agg_metrics_port],
        "kafka": [node.jmx_port(observability.kafka_jmx_port) for node in layout.kafka],
        "connect": [each.jmx_port(observability.connect_jmx_port) for each in layout.connect],
        "postgres": [observability.pg_exporter_port],
        "supervisor": [observability.supervisor_exporter_port],
    }


def targets(config: dict[str, Any]) -> dict[str, list[str]]:
    """job name -> its static targets, as listed in a scrape config."""
    return {
        job["job_name"]: [t for group in job["static_configs"] for t in group["targets"]]
        for job in config["scrape_configs"]
    }


def _with_targets(config: dict[str, Any], wanted: dict[str, list[str]]) -> dict[str, Any]:
    rendered = copy.deepcopy(config)
    for job in rendered["scrape_configs"]:
        job["static_configs"] = [{"targets": wanted[job["job_name"]]}]
    return rendered


def local_config(
    settings: Settings,
    observability: ObservabilitySettings,
    notify: NotificationSettings,
    retention: RetentionSettings,
) -> dict[str, Any]:
    """The config the local Prometheus runs: loopback targets on the configured ports, and the
    repository's rule files by absolute path (the rendered file lives in .stack/conf)."""
    config = source()
    ports = job_ports(settings, observability, notify, retention)
    unknown = set(targets(config)) ^ set(ports)
    if unknown:
        raise ValueError(f"{SOURCE}: jobs and stack/prometheus.py differ on {sorted(unknown)}")
    rendered = _with_targets(
        config, {job: [f"127.0.0.1:{port}" for port in listed] for job, listed in ports.items()}
    )
    rendered["rule_files"] = [str(SOURCE.parent / pattern) for pattern in config["rule_files"]]
    return rendered


def compose_config() -> dict[str, Any]:
    """The config docker-compose.yml runs: the source's jobs and ports, service names as hosts."""
    config = source()
    config["scrape_configs"] = [
        job for job in config["scrape_configs"] if job["job_name"] not in LOCAL_ONLY
    ]
    wanted: dict[str, list[str]] = {}
    for job, listed in targets(config).items():
        ports = [target.rsplit(":", 1)[1] for target in listed]
        hosts = COMPOSE_HOSTS[job]
        if len(ports) == 1:
            ports = ports * len(hosts)
        if len(ports) != len(hosts):
            raise ValueError(f"job {job}: {len(ports)} targets but compose hosts {hosts}")
        wanted[job] = [f"{host}:{port}" for host, port in zip(hosts, ports, strict=True)]
    return _with_targets(config, wanted)


def dump(config: dict[str, Any]) -> str:
    """YAML text of a config, keys in the source's order."""
    text: str = yaml.safe_dump(config, sort_keys=False, default_flow_style=False, width=100)
    return text


def compose_text() -> str:
    """The exact content observability/prometheus/compose.yml must have."""
    return COMPOSE_HEADER + dump(compose_config())


def write_local(
    settings: Settings,
    observability: ObservabilitySettings,
    notify: NotificationSettings,
    retention: RetentionSettings,
) -> None:
    """Render the local Prometheus's config into .stack/conf."""
    LOCAL.parent.mkdir(parents=True, exist_ok=True)
    text = "# GENERATED by `make up` from observability/prometheus/prometheus.yml.\n"
    LOCAL.write_text(text + dump(local_config(settings, observability, notify, retention)))


def cors_origin(port: int) -> str:
    """Prometheus's --web.cors.origin (a fully anchored regex): its own origin only, so no other
    page gets an Access-Control-Allow-Origin (the default, .*, answers `*` to every origin).
    The dashboard reads Prometheus server-side and needs none."""
    return re.escape(f"http://127.0.0.1:{port}")


def server_command(observability: ObservabilitySettings, data: paths.DataDirs) -> str:
    """Prometheus (Debian's package) on loopback, data and retention as the settings say."""
    return " ".join(
        [
            "prometheus",
            f"--config.file={LOCAL}",
            f"--storage.tsdb.path={data.prometheus}",
            f"--storage.tsdb.retention.time={observability.prometheus_retention_time}",
            f"--storage.tsdb.retention.size={observability.prometheus_retention_size}",
            f"--web.listen-address=127.0.0.1:{observability.prometheus_port}",
            # Quoted: supervisor splits the command as a shell would (backslashes).
            shlex.quote(f"--web.cors.origin={cors_origin(observability.prometheus_port)}"),
        ]
    )


def exporter_command(observability: ObservabilitySettings) -> str:
    """prometheus-postgres-exporter (Debian's package, 0.11): only the project's queries, the
    database sizes and pg_up; the connection comes from its environment (`exporter_env`)."""
    return " ".join(
        [
            "prometheus-postgres-exporter",
            f"--web.listen-address=127.0.0.1:{observability.pg_exporter_port}",
            f"--extend.query-path={PG_QUERIES}",
            "--disable-default-metrics",
            "--disable-settings-metrics",
            "--no-collector.bgwriter",
        ]
    )


def exporter_env(settings: Settings) -> dict[str, str]:
    """The exporter's connection: the monitor role, no TLS on loopback. The exporter reads
    the password from the role's file (DATA_SOURCE_PASS_FILE), so its environment holds it
    only when the settings' environment sets it."""
    where = f"{settings.pg_host}:{settings.pg_port}/{settings.pg_database}?sslmode=disable"
    env = {"DATA_SOURCE_URI": where, "DATA_SOURCE_USER": settings.monitor_db_user}
    if settings.monitor_db_password is None:
        env["DATA_SOURCE_PASS_FILE"] = str(settings.db_password_dir / "monitor")
    else:
        env["DATA_SOURCE_PASS"] = settings.monitor_db_password.get_secret_value()
    return env


if __name__ == "__main__":
    sys.stdout.write(compose_text())
