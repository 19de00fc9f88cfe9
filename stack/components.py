"""The pipeline's processes, in start order, each with its command, ports and readiness probe.

The topology's layout (onceflow/topology.py) says how many Kafka nodes, Connect workers and
Spark daemons run; each kind starts as one wave (a KRaft node waits for its quorum).
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
from confluent_kafka.admin import AdminClient

from onceflow import paths
from onceflow.settings import (
    AggregationSettings,
    Settings,
    get_aggregation_settings,
    get_notification_settings,
    get_observability_settings,
    get_retention_settings,
)
from onceflow.settings.kafka_auth import client_config
from onceflow.settings.ops import OpsCredentialMissingError, get_ops_settings
from onceflow.topology import KafkaNode, Layout, Topology
from stack import jvm, postgres, prometheus, spark
from stack.health import Probe, answers, connector_runs, slot_kept, stage_progresses
from stack.waiting import port_open

# Named wherever it is looked for: the overview's connector hop, the tests that read its log.
CONNECTOR_WATCHDOG = "connector-watchdog"


@dataclass(frozen=True)
class Component:
    """One supervised process of the local stack."""

    name: str
    command: str
    ports: tuple[int, ...]
    ready: Callable[[], bool]
    where: str
    user: str | None = None
    # The group id its packets carry for the network-fault rules (Layout.network_group).
    network_group: int | None = None
    stopsignal: str = "TERM"
    stopwait: int = 60
    start_timeout: float = 120
    # Variables for this process only (on top of the settings every process gets, which
    # hold no secret).
    env: tuple[tuple[str, str], ...] = ()
    # The database roles whose passwords it uses (onceflow.settings.connections.ROLES): it
    # reads each from its file, or, with passwords_in_env, gets them in its environment
    # (ONCEFLOW_<ROLE>_DB_PASSWORD). No program holds another role's password.
    db_roles: tuple[str, ...] = ()
    passwords_in_env: bool = False
    # The Kafka principal it connects as (onceflow/settings/kafka_auth.py), None when it uses no
    # Kafka client: it reads that principal's password from its file or variable when it
    # connects; a Kafka node's or Connect worker's is in its rendered properties (mode 0600).
    kafka_principal: str | None = None
    # Whether it holds the Spark cluster's shared secret (onceflow/settings/spark_auth.py): the
    # master and the workers from their properties file, the job's driver from the secret's
    # file; a worker's executors get it in their environment from the worker (Spark's way).
    spark_secret: bool = False
    # Components of one wave start together and are then awaited together; `make up` runs
    # the wave's follow-up (topics, the connector) once all of them are ready.
    wave: str = ""
    # Whether it works now (`make status`, the overview): None when it does; by default, its
    # readiness within a deadline. Readiness (`make up`) stays `ready`.
    probe: Probe | None = None

    @property
    def kind(self) -> str:
        return self.wave or self.name

    def check(self) -> str | None:
        """Why the component does not work now, in one sentence; None when it works."""
        if self.probe is not None:
            return self.probe()
        return None if self.ready() else f"{self.name} is not ready"


def _http_ok(url: str, auth: httpx.Auth | None = None) -> bool:
    return httpx.get(url, timeout=2, auth=auth).status_code == 200


def _broker_ready(node: KafkaNode) -> bool:
    """The node answers metadata requests and lists itself among the live brokers (its port
    accepts connections earlier, before it has joined the quorum)."""
    if not port_open("127.0.0.1", node.port):
        return False
    admin = AdminClient({**client_config(node.address, "broker"), "log_level": 0})
    return node.node_id in admin.list_topics(timeout=5).brokers


def _metrics(port: int | None) -> str:
    return f", metrics http://127.0.0.1:{port}" if port else ""


def _aggregation(python: Path, topology: Topology) -> Component:
    """The job is ready when its metrics port answers; the Spark UI is where it runs when on."""
    agg, metrics_port = get_aggregation_settings(), get_observability_settings().agg_metrics_port
    # Of the topology asked about, which may not be this process's (compose's tests).
    standalone = AggregationSettings(topology=topology).on_standalone_cluster
    ui = f"http://{agg.agg_ui_host}:{agg.agg_ui_port}"
    return Component(
        name="aggregation",
        command=f"{python} -m spark_jobs.aggregation",
        ports=(metrics_port, agg.agg_ui_port) if agg.agg_ui_enabled else (metrics_port,),
        ready=functools.partial(port_open, "127.0.0.1", metrics_port),
        where=f"Spark UI {ui}" if agg.agg_ui_enabled else f"metrics :{metrics_port}",
        start_timeout=180,
        probe=functools.partial(stage_progresses, f"http://127.0.0.1:{metrics_port}/metrics"),
        # The driver's role, and the executors' staging-only one (handed to their tasks).
        db_roles=("spark", "spark_stage"),
        kafka_principal="aggregation",
        spark_secret=standalone,
    )


def _kafka_nodes(layout: Layout, jmx_base: int | None) -> list[Component]:
    parts = []
    for node in layout.kafka:
        jmx = node.jmx_port(jmx_base) if jmx_base else None
        parts.append(
            Component(
                name=node.program,
                command=jvm.kafka_command(node.program, layout.memory.kafka_heap, jmx),
                ports=(node.port, node.controller_port, *filter(None, [jmx])),
                ready=functools.partial(_broker_ready, node),
                where=f"{node.address} (node {node.node_id}){_metrics(jmx)}",
                wave="kafka",
                kafka_principal="broker",
            )
        )
    return parts


def _worker_works(url: str, connect_url: str, connector: str, slot: Probe) -> str | None:
    """The worker answers its REST API (to the ops credential), the connector and its tasks
    run, and the slot they read is not lost."""
    try:
        auth = get_ops_settings().auth()
    except OpsCredentialMissingError as exc:
        return str(exc)
    return (
        answers(f"{url}/connectors", auth=auth)
        or connector_runs(connect_url, connector, auth=auth)
        or slot()
    )


def _worker_ready(url: str) -> bool:
    return _http_ok(f"{url}/connectors", auth=get_ops_settings().auth())


def _connect_workers(
    layout: Layout, jmx_base: int | None, connect_url: str, connector: str, slot: Probe
) -> list[Component]:
    parts = []
    for worker in layout.connect:
        jmx = worker.jmx_port(jmx_base) if jmx_base else None
        parts.append(
            Component(
                name=worker.program,
                command=jvm.connect_command(worker.program, layout.memory.connect_heap, jmx),
                ports=(worker.port, *filter(None, [jmx])),
                ready=functools.partial(_worker_ready, worker.url),
                where=f"{worker.url}{_metrics(jmx)}",
                start_timeout=180,
                wave="connect",
                probe=functools.partial(_worker_works, worker.url, connect_url, connector, slot),
                # The connector's config names ${env:ONCEFLOW_CDC_DB_PASSWORD}.
                db_roles=("cdc",),
                passwords_in_env=True,
                kafka_principal="connect",
            )
        )
    return parts


def _spark(layout: Layout, data: paths.DataDirs) -> list[Component]:
    """The standalone master and its workers (none in the single topology: local[*])."""
    cluster = layout.spark
    if cluster is None:
        return []
    env = spark.daemon_env(layout.memory)
    master = Component(
        name=cluster.program,
        command=spark.master_command(cluster),
        ports=(cluster.port, cluster.ui_port),
        ready=functools.partial(_http_ok, f"{cluster.ui}/json/"),
        where=f"{cluster.url} (UI {cluster.ui})",
        env=env,
        wave="spark",
        spark_secret=True,
    )
    workers = [
        Component(
            name=worker.program,
            command=spark.worker_command(
                cluster, worker, layout.memory, data.spark_work(worker.program)
            ),
            ports=(worker.ui_port,),
            ready=functools.partial(spark.worker_alive, cluster, worker),
            where=f"UI {worker.ui}, 1 core, {layout.memory.spark_worker_offer} for executors",
            env=env,
            wave="spark",
            spark_secret=True,
        )
        for worker in cluster.workers
    ]
    return [master, *workers]


def components(settings: Settings) -> list[Component]:
    """All components of the pipeline, in the order they must start."""
    layout = settings.layout
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
            probe=functools.partial(answers, f"http://127.0.0.1:{notify.metrics_port(n)}/metrics"),
            # A batch commits within seconds; past this the instance is killed, which exactly
            # once survives (the broker may already be down when `make down` reaches it).
            stopwait=20,
            kafka_principal="notifications",
        )
        for n in range(1, notify.notify_instances + 1)
    ]
    every = [
        Component(
            name="postgres",
            command=postgres.server_command(settings),
            ports=(settings.pg_port,),
            ready=lambda: postgres.accepts_connections(settings),
            where=f"postgresql://{settings.pg_host}:{settings.pg_port}/{settings.pg_database}",
            user=postgres.os_user(),
            stopsignal="INT",
        ),
        *_kafka_nodes(layout, kafka_jmx),
        *_connect_workers(
            layout,
            connect_jmx,
            settings.connect_url,
            settings.connector_name,
            lambda: slot_kept(settings.dsn("analyst"), settings.replication_slot),
        ),
        *_spark(layout, settings.data),
        # Restarts a FAILED connector task, or a connector stuck UNASSIGNED while its task runs
        # (services/ops/connect_watchdog.py); it serves nothing: its process is its health.
        Component(
            name=CONNECTOR_WATCHDOG,
            command=f"{python} -m services.ops.connect_watchdog",
            ports=(),
            ready=lambda: True,
            where=f"watches {settings.connector_name} (its log: each restart)",
            stopwait=10,
        ),
        Component(
            name="api",
            command=f"{python} -m services.orders",
            ports=(settings.api_port,),
            ready=lambda: _http_ok(api + "/readyz"),
            where=f"{api} ({api}/docs)",
            probe=functools.partial(answers, api + "/readyz"),
            db_roles=("app",),
        ),
        Component(
            name="maintenance",
            command=f"{python} -m services.maintenance",
            ports=(retention.maintenance_metrics_port,),
            ready=lambda: port_open("127.0.0.1", retention.maintenance_metrics_port),
            where=f"metrics http://127.0.0.1:{retention.maintenance_metrics_port}/metrics",
            probe=functools.partial(
                answers, f"http://127.0.0.1:{retention.maintenance_metrics_port}/metrics"
            ),
            # Its tasks' roles (services/maintenance/tasks.py: the key purge as app, the
            # prunes of the job's bookkeeping as maintenance) and the reconciler's (app,
            # reconcile); not the job's.
            db_roles=("app", "maintenance", "reconcile"),
            # The reconciler reads the outbox topic.
            kafka_principal="ops",
        ),
        _aggregation(python, settings.topology),
        *notifications,
        # Observability last: nothing in the pipeline waits on it (docs/observability.md).
        Component(
            name="postgres-exporter",
            command=prometheus.exporter_command(observe),
            ports=(observe.pg_exporter_port,),
            ready=functools.partial(port_open, "127.0.0.1", observe.pg_exporter_port),
            where=f"metrics http://127.0.0.1:{observe.pg_exporter_port}/metrics",
            probe=functools.partial(
                answers, f"http://127.0.0.1:{observe.pg_exporter_port}/metrics"
            ),
            env=tuple(prometheus.exporter_env(settings).items()),
            db_roles=("monitor",),
        ),
        Component(
            name="prometheus",
            command=prometheus.server_command(observe, settings.data),
            ports=(observe.prometheus_port,),
            ready=lambda: _http_ok(prometheus_url + "/-/ready"),
            where=prometheus_url,
            probe=functools.partial(answers, prometheus_url + "/-/ready"),
        ),
        # The dashboard reads Prometheus and serves a page; a dashboard that fails to start
        # leaves every pipeline component running.
        Component(
            name="dashboard",
            command=f"{python} -m services.dashboard",
            ports=(observe.dashboard_port,),
            ready=lambda: _http_ok(f"http://127.0.0.1:{observe.dashboard_port}/healthz"),
            where=f"http://127.0.0.1:{observe.dashboard_port} (live plots, order journeys)",
            probe=functools.partial(answers, f"http://127.0.0.1:{observe.dashboard_port}/healthz"),
            stopwait=10,
            # An order's journey and the overview (services/ops: journey.py, lag.py; the
            # ledger as its read-only role, observer).
            db_roles=("app", "observer", "analyst"),
            kafka_principal="ops",
        ),
    ]
    return [replace(c, network_group=layout.network_group(c.name)) for c in every]
