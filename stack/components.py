"""The pipeline's processes, in start order, each with its command, ports and readiness probe."""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from onceflow import paths
from onceflow.settings import (
    Settings,
    get_aggregation_settings,
    get_notification_settings,
    get_observability_settings,
    get_retention_settings,
)
from stack import jvm, postgres, prometheus
from stack.waiting import port_open


@dataclass(frozen=True)
class Component:
    """One supervised process of the local stack."""

    name: str
    command: str
    ports: tuple[int, ...]
    ready: Callable[[], bool]
    where: str
    user: str | None = None
    stopsignal: str = "TERM"
    stopwait: int = 60
    start_timeout: float = 120
    # Variables for this process only (on top of the settings every process gets).
    env: tuple[tuple[str, str], ...] = ()


def _http_ok(url: str) -> bool:
    return httpx.get(url, timeout=2).status_code == 200


def _metrics(port: int | None) -> str:
    return f", metrics http://127.0.0.1:{port}" if port else ""


def _aggregation(python: Path) -> Component:
    """The job is ready when its metrics port answers; the Spark UI is where it runs when on."""
    agg, metrics_port = get_aggregation_settings(), get_observability_settings().agg_metrics_port
    ui = f"http://{agg.agg_ui_host}:{agg.agg_ui_port}"
    return Component(
        name="aggregation",
        command=f"{python} -m spark_jobs.aggregation",
        ports=(metrics_port, agg.agg_ui_port) if agg.agg_ui_enabled else (metrics_port,),
        ready=functools.partial(port_open, "127.0.0.1", metrics_port),
        where=f"Spark UI {ui}" if agg.agg_ui_enabled else f"metrics :{metrics_port}",
        start_timeout=180,
    )


def components(settings: Settings) -> list[Component]:
    """All components of the pipeline, in the order they must start."""
    kafka_host, kafka_port = settings.kafka_bootstrap.rsplit(":", 1)
    connect_port = int(settings.connect_url.rsplit(":", 1)[1])
    api = f"http://{settings.api_host}:{settings.api_port}"
    python = paths.VENV_BIN / "python"
    retention, notify = get_retention_settings(), get_notification_settings()
    observe = get_observability_settings()
    jmx = observe.jmx_exporter_enabled
    kafka_jmx = observe.kafka_jmx_port if jmx else None
    connect_jmx = observe.connect_jmx_port if jmx else None
    prometheus_url = observe.prometheus_url
    notifications = [
        Component(
            name=f"notifications-{n}",
            command=f"{python} -m services.notifications {n}",
            ports=(notify.metrics_port(n),),
            ready=functools.partial(port_open, "127.0.0.1", notify.metrics_port(n)),
            where=f"metrics http://127.0.0.1:{notify.metrics_port(n)}/metrics",
            # A batch commits within seconds; past this the instance is killed, which exactly
            # once survives (the broker may already be down when `make down` reaches it).
            stopwait=20,
        )
        for n in range(1, notify.notify_instances + 1)
    ]
    return [
        Component(
            name="postgres",
            command=postgres.server_command(settings),
            ports=(settings.pg_port,),
            ready=lambda: postgres.accepts_connections(settings),
            where=f"postgresql://{settings.pg_host}:{settings.pg_port}/{settings.pg_database}",
            user=postgres.os_user(),
            stopsignal="INT",
        ),
        Component(
            name="kafka",
            command=jvm.kafka_command(kafka_jmx),
            ports=(int(kafka_port), jvm.CONTROLLER_PORT, *filter(None, [kafka_jmx])),
            ready=lambda: port_open(kafka_host, int(kafka_port)),
            where=f"{settings.kafka_bootstrap}{_metrics(kafka_jmx)}",
        ),
        Component(
            name="connect",
            command=jvm.connect_command(connect_jmx),
            ports=(connect_port, *filter(None, [connect_jmx])),
            ready=lambda: _http_ok(settings.connect_url + "/connectors"),
            where=f"{settings.connect_url}{_metrics(connect_jmx)}",
            start_timeout=180,
        ),
        Component(
            name="api",
            command=f"{python} -m services.orders",
            ports=(settings.api_port,),
            ready=lambda: _http_ok(api + "/readyz"),
            where=f"{api} ({api}/docs)",
        ),
        Component(
            name="maintenance",
            command=f"{python} -m services.maintenance",
            ports=(retention.maintenance_metrics_port,),
            ready=lambda: port_open("127.0.0.1", retention.maintenance_metrics_port),
            where=f"metrics http://127.0.0.1:{retention.maintenance_metrics_port}/metrics",
        ),
        _aggregation(python),
        *notifications,
        # Observability last: nothing in the pipeline waits on it (docs/observability.md).
        Component(
            name="postgres-exporter",
            command=prometheus.exporter_command(observe),
            ports=(observe.pg_exporter_port,),
            ready=functools.partial(port_open, "127.0.0.1", observe.pg_exporter_port),
            where=f"metrics http://127.0.0.1:{observe.pg_exporter_port}/metrics",
            env=tuple(prometheus.exporter_env(settings).items()),
        ),
        Component(
            name="prometheus",
            command=prometheus.server_command(observe),
            ports=(observe.prometheus_port,),
            ready=lambda: _http_ok(prometheus_url + "/-/ready"),
            where=prometheus_url,
        ),
        # The dashboard reads Prometheus and serves a page; a dashboard that fails to start
        # leaves every pipeline component running.
        Component(
            name="dashboard",
            command=f"{python} -m services.dashboard",
            ports=(observe.dashboard_port,),
            ready=lambda: _http_ok(f"http://127.0.0.1:{observe.dashboard_port}/healthz"),
            where=f"http://127.0.0.1:{observe.dashboard_port} (live plots, order journeys)",
            stopwait=10,
        ),
    ]
