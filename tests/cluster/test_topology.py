"""The cluster topology runs every node of its layout: three KRaft nodes with every topic
replicated three times (min ISR 2), two Connect workers in one group, a Spark standalone master
with two workers running the job's executors, and the pipeline exactly once on top of them."""

import uuid

import httpx
import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from onceflow.paths import ROOT
from onceflow.settings import Settings, get_notification_settings
from onceflow.settings.kafka_auth import client_config
from onceflow.settings.ops import get_ops_settings
from onceflow.topology import Layout
from stack import node_configs, spark, supervisor
from stack.components import CONNECTOR_WATCHDOG, components
from tests.e2e import analytics, exactly_once
from tests.e2e.orders import Expected, post_history

pytestmark = pytest.mark.integration

PROGRAMS = [
    "postgres",
    "kafka-1",
    "kafka-2",
    "kafka-3",
    "connect-1",
    "connect-2",
    "spark-master",
    "spark-worker-1",
    "spark-worker-2",
    CONNECTOR_WATCHDOG,
    "api",
    "maintenance",
    "aggregation",
    "notifications-1",
    "notifications-2",
    "postgres-exporter",
    "prometheus",
    "dashboard",
]
WORKER = node_configs.properties((ROOT / node_configs.WORKER_TEMPLATE).read_text())


def test_every_program_of_the_layout_runs(settings: Settings) -> None:
    names = [c.name for c in components(settings)]
    assert names == PROGRAMS
    assert {name: supervisor.state(name) for name in names} == dict.fromkeys(names, "RUNNING")


def test_three_brokers_replicate_every_topic_three_times(settings: Settings) -> None:
    admin = AdminClient(client_config(settings.kafka_bootstrap, "tests"))
    metadata = admin.list_topics(timeout=30)
    assert set(metadata.brokers) == {1, 2, 3}
    notify = get_notification_settings()
    expected = {
        settings.topic,
        notify.notify_topic,
        notify.notify_dlq_topic,
        notify.notify_changelog_topic,
        *(WORKER[f"{kind}.storage.topic"] for kind in ("config", "offset", "status")),
        "__consumer_offsets",
        "__transaction_state",
    }
    names = set(metadata.topics)
    assert expected <= names, expected - names
    assert any(name.startswith("__debezium-heartbeat") for name in names)
    replicas = {
        name: sorted({len(p.replicas) for p in topic.partitions.values()})
        for name, topic in metadata.topics.items()
    }
    assert replicas == {name: [3] for name in names}
    resources = [ConfigResource(ResourceType.TOPIC, name) for name in sorted(names)]
    min_isr = {
        resource.name: future.result(timeout=30)["min.insync.replicas"].value
        for resource, future in admin.describe_configs(resources).items()
    }
    assert min_isr == dict.fromkeys(names, "2")


def test_both_connect_workers_serve_the_one_group(settings: Settings, layout: Layout) -> None:
    urls = [worker.url for worker in layout.connect]
    auth = get_ops_settings().auth()  # every request needs the ops credential, the root too
    assert [httpx.get(f"{url}/connectors", timeout=10).status_code for url in urls] == [401, 401]
    roots = [httpx.get(f"{url}/", timeout=10, auth=auth) for url in urls]
    assert [root.status_code for root in roots] == [200, 200]
    assert len({root.json()["kafka_cluster_id"] for root in roots}) == 1
    statuses = [
        httpx.get(
            f"{url}/connectors/{settings.connector_name}/status", timeout=10, auth=auth
        ).json()
        for url in urls
    ]
    # One group: both read its status topic, so both report the same placement of connector and
    # task, on one of the group's workers.
    assert statuses[0] == statuses[1]
    (task,) = statuses[0]["tasks"]
    advertised = {url.removeprefix("http://") for url in urls}
    assert statuses[0]["connector"]["worker_id"] in advertised
    assert task["worker_id"] in advertised
    assert task["state"] == "RUNNING"


def test_the_job_runs_on_both_spark_workers(layout: Layout) -> None:
    cluster = layout.spark
    assert cluster is not None
    state = spark.master_state(cluster)
    alive = {w["webuiaddress"] for w in state["workers"] if w["state"] == "ALIVE"}
    assert alive == {worker.ui for worker in cluster.workers}
    (app,) = [a for a in state["activeapps"] if a["name"] == "onceflow-aggregation"]
    for worker in cluster.workers:
        executors = httpx.get(f"{worker.ui}/json/", timeout=10).json()["executors"]
        assert any(e["appid"] == app["id"] for e in executors), worker.program


def test_an_order_is_counted_and_notified_exactly_once(
    api: httpx.Client, analyst: analytics.Conn, settings: Settings
) -> None:
    analytics.barrier(api, analyst)
    before = exactly_once.baseline(settings)
    expected = Expected()
    post_history(api, uuid.uuid4().hex[:8], expected, orders=8)
    exactly_once.assert_exactly_once(settings, expected, before)
