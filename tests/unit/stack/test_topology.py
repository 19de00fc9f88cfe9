"""The node layout of each topology, the configs rendered from the one template per kind, and
the settings' defaults that follow the topology."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from onceflow import paths
from onceflow.settings import (
    AggregationSettings,
    NotificationSettings,
    ObservabilitySettings,
    RetentionSettings,
    Settings,
)
from onceflow.topology import SINGLE, Topology, layout
from stack import node_configs, prometheus, running, supervisor
from stack.components import components
from stack.supervisor import render_config

CLUSTER = layout(Topology.CLUSTER)


def _template(path: Path) -> dict[str, str]:
    return node_configs.properties((paths.ROOT / path).read_text())


def _rendered(path: Path, overrides: node_configs.Overrides) -> dict[str, str]:
    text = node_configs.render((paths.ROOT / path).read_text(), overrides, source=path)
    return node_configs.properties(text)


def test_the_templates_are_the_single_topology() -> None:
    broker = _template(node_configs.KAFKA_TEMPLATE)
    (node,) = SINGLE.kafka
    assert broker["node.id"] == str(node.node_id)
    assert broker["advertised.listeners"] == f"PLAINTEXT://{node.address}"
    assert broker["controller.quorum.bootstrap.servers"] == f"127.0.0.1:{node.controller_port}"
    assert paths.ROOT / broker["log.dirs"] == paths.data_dirs(SINGLE.data_folder).kafka("kafka")
    assert broker["default.replication.factor"] == str(SINGLE.replication_factor)
    assert broker["min.insync.replicas"] == str(SINGLE.min_insync_replicas)
    worker = _template(node_configs.WORKER_TEMPLATE)
    assert worker["bootstrap.servers"] == SINGLE.bootstrap
    assert worker["listeners"] == SINGLE.connect_url
    assert worker["scheduled.rebalance.max.delay.ms"] == str(SINGLE.rebalance_delay_ms)
    for kafka_node in SINGLE.kafka:
        assert node_configs.kafka_overrides(SINGLE, kafka_node) == {}
    for each in SINGLE.connect:
        assert node_configs.connect_overrides(SINGLE, each) == {}


def test_the_cluster_layout_has_the_agreed_names_and_ports() -> None:
    assert [(n.program, n.node_id, n.port, n.controller_port) for n in CLUSTER.kafka] == [
        ("kafka-1", 1, 9092, 9093),
        ("kafka-2", 2, 9192, 9193),
        ("kafka-3", 3, 9292, 9293),
    ]
    assert [n.jmx_port(9404) for n in CLUSTER.kafka] == [9404, 9414, 9424]
    assert [(w.program, w.port, w.jmx_port(9405)) for w in CLUSTER.connect] == [
        ("connect-1", 8083, 9405),
        ("connect-2", 8084, 9415),
    ]
    assert CLUSTER.bootstrap == "127.0.0.1:9092,127.0.0.1:9192,127.0.0.1:9292"
    assert CLUSTER.quorum_voters == "1@127.0.0.1:9093,2@127.0.0.1:9193,3@127.0.0.1:9293"
    assert CLUSTER.spark is not None
    assert (CLUSTER.spark.url, CLUSTER.spark.ui) == (
        "spark://127.0.0.1:7077",
        "http://127.0.0.1:8080",
    )
    assert [(w.program, w.ui_port) for w in CLUSTER.spark.workers] == [
        ("spark-worker-1", 8081),
        ("spark-worker-2", 8082),
    ]
    assert CLUSTER.data_folder != SINGLE.data_folder == "data"


@pytest.mark.parametrize("n", [1, 2, 3])
def test_each_cluster_node_is_rendered_from_the_template(n: int) -> None:
    node = CLUSTER.kafka[n - 1]
    config = _rendered(node_configs.KAFKA_TEMPLATE, node_configs.kafka_overrides(CLUSTER, node))
    template = _template(node_configs.KAFKA_TEMPLATE)
    assert config["node.id"] == str(n)
    assert (
        config["listeners"]
        == f"PLAINTEXT://{node.address},CONTROLLER://127.0.0.1:{node.controller_port}"
    )
    assert config["controller.quorum.voters"] == CLUSTER.quorum_voters
    assert "controller.quorum.bootstrap.servers" not in config
    assert config["log.dirs"] == str(paths.STATE / "data-cluster" / f"kafka-{n}")
    for key in (
        "offsets.topic.replication.factor",
        "transaction.state.log.replication.factor",
        "share.coordinator.state.topic.replication.factor",
        "default.replication.factor",
    ):
        assert config[key] == "3", key
    for key in (
        "transaction.state.log.min.isr",
        "share.coordinator.state.topic.min.isr",
        "min.insync.replicas",
    ):
        assert config[key] == "2", key
    assert config["offsets.topic.num.partitions"] == "10"
    assert config["transaction.state.log.num.partitions"] == "10"
    # Everything the topology does not change is the template's.
    changed = set(node_configs.kafka_overrides(CLUSTER, node))
    assert {k: v for k, v in config.items() if k not in changed} == {
        k: v for k, v in template.items() if k not in changed
    }


def test_each_cluster_worker_is_rendered_from_the_template() -> None:
    for worker in CLUSTER.connect:
        overrides = node_configs.connect_overrides(CLUSTER, worker)
        config = _rendered(node_configs.WORKER_TEMPLATE, overrides)
        assert config["bootstrap.servers"] == CLUSTER.bootstrap
        assert config["listeners"] == worker.url
        assert config["rest.advertised.port"] == str(worker.port)
        assert config["scheduled.rebalance.max.delay.ms"] == "10000"
        assert config["exactly.once.source.support"] == "enabled"
        for kind in ("config", "offset", "status"):
            assert config[f"{kind}.storage.replication.factor"] == "3"
        template = _template(node_configs.WORKER_TEMPLATE)
        assert config["group.id"] == template["group.id"]


def test_rendering_replaces_in_place_removes_and_appends() -> None:
    text = "# a comment=1\na=1\nb=2\n"
    rendered = node_configs.render(text, {"a": "9", "b": None, "c": "3"}, source=Path("t"))
    assert rendered.splitlines()[0].startswith("# GENERATED")
    assert node_configs.properties(rendered) == {"a": "9", "c": "3"}
    assert "# a comment=1" in rendered


def test_the_settings_follow_the_topology() -> None:
    single, cluster = Settings(topology=Topology.SINGLE), Settings(topology=Topology.CLUSTER)
    assert (single.kafka_bootstrap, single.connect_url) == (
        "127.0.0.1:9092",
        "http://127.0.0.1:8083",
    )
    assert cluster.kafka_bootstrap == CLUSTER.bootstrap
    assert cluster.connect_url == "http://127.0.0.1:8083"
    explicit = Settings(topology=Topology.CLUSTER, kafka_bootstrap="10.0.0.1:9092")
    assert explicit.kafka_bootstrap == "10.0.0.1:9092"
    agg = AggregationSettings(topology=Topology.CLUSTER)
    assert agg.agg_spark_master == "spark://127.0.0.1:7077"
    assert agg.agg_checkpoint_dir == paths.STATE / "data-cluster/spark/checkpoints/aggregation"
    assert AggregationSettings(topology=Topology.SINGLE).agg_spark_master == "local[*]"
    assert AggregationSettings(topology=Topology.SINGLE).agg_checkpoint_dir == (
        paths.STATE / "data/spark/checkpoints/aggregation"
    )
    notify = NotificationSettings(topology=Topology.CLUSTER)
    assert notify.notify_state_dir == paths.STATE / "data-cluster" / "notifications"
    assert (
        NotificationSettings(topology=Topology.SINGLE).notify_state_dir
        == paths.STATE / "data" / "notifications"
    )


def test_the_connect_urls_are_every_worker_the_connect_url_first() -> None:
    workers = tuple(worker.url for worker in CLUSTER.connect)
    assert len(workers) == 2
    assert Settings(topology=Topology.SINGLE).connect_urls == (SINGLE.connect_url,)
    cluster = Settings(topology=Topology.CLUSTER)
    assert cluster.connect_urls == workers
    second = Settings(topology=Topology.CLUSTER, connect_url=workers[1])
    assert second.connect_urls == (workers[1], workers[0])
    elsewhere = Settings(topology=Topology.CLUSTER, connect_url="http://connect-1:8083")
    assert elsewhere.connect_urls == ("http://connect-1:8083",)
    # What every supervised process gets reads back as the same list.
    exported = f'ONCEFLOW_CONNECT_URLS="{",".join(workers)}"'
    assert exported in render_config(components(cluster), cluster)
    assert Settings(connect_urls=f"{workers[0]}, {workers[1]}").connect_urls == workers
    with pytest.raises(ValidationError, match="names no Connect worker"):
        Settings(connect_urls=" , ")


def test_the_cluster_components_are_every_node_on_its_own_ports() -> None:
    settings = Settings(topology=Topology.CLUSTER)
    parts = components(settings)
    names = [c.name for c in parts]
    assert names[:9] == [
        "postgres",
        "kafka-1",
        "kafka-2",
        "kafka-3",
        "connect-1",
        "connect-2",
        "spark-master",
        "spark-worker-1",
        "spark-worker-2",
    ]
    ports = [port for c in parts for port in c.ports]
    assert len(ports) == len(set(ports))
    by_name = {c.name: c for c in parts}
    assert str(paths.STATE / "data-cluster" / "postgres") in by_name["postgres"].command
    assert str(paths.STATE / "data-cluster" / "prometheus") in by_name["prometheus"].command
    assert "--work-dir " + str(paths.STATE / "data-cluster/spark/work/spark-worker-2") in (
        by_name["spark-worker-2"].command
    )
    assert ("SPARK_LOCAL_IP", "127.0.0.1") in by_name["spark-master"].env
    assert "-Xmx512m" in by_name["kafka-3"].command
    assert "kafka-3.properties" in by_name["kafka-3"].command


def test_the_single_components_keep_their_names() -> None:
    names = [c.name for c in components(Settings(topology=Topology.SINGLE))]
    assert names[:3] == ["postgres", "kafka", "connect"]
    assert not any(name.startswith("spark") for name in names)


def test_every_process_learns_the_topology() -> None:
    settings = Settings(topology=Topology.CLUSTER)
    conf = render_config(components(settings), settings)
    assert 'ONCEFLOW_TOPOLOGY="cluster"' in conf
    assert f'ONCEFLOW_KAFKA_BOOTSTRAP="{CLUSTER.bootstrap}"' in conf


def test_prometheus_scrapes_every_node_of_the_cluster() -> None:
    config = prometheus.local_config(
        Settings(topology=Topology.CLUSTER),
        ObservabilitySettings(),
        NotificationSettings(),
        RetentionSettings(),
    )
    targets = prometheus.targets(config)
    assert targets["kafka"] == ["127.0.0.1:9404", "127.0.0.1:9414", "127.0.0.1:9424"]
    assert targets["connect"] == ["127.0.0.1:9405", "127.0.0.1:9415"]


def test_up_refuses_another_topology_while_one_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(running, "running", lambda: Topology.SINGLE)
    monkeypatch.setenv("ONCEFLOW_TOPOLOGY", "cluster")
    with pytest.raises(running.TopologyError, match="the single topology is running: `make down`"):
        running.act_on(starting=True)
    assert running.act_on(starting=False) is Topology.SINGLE  # down and status follow it


def test_an_unknown_topology_is_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(running, "running", lambda: None)
    monkeypatch.setenv("ONCEFLOW_TOPOLOGY", "galaxy")
    with pytest.raises(
        running.TopologyError, match="'galaxy' is no topology: use single or cluster"
    ):
        running.act_on(starting=True)


@pytest.mark.parametrize(
    ("loaded", "topology"),
    [
        ({"postgres", "kafka", "connect"}, Topology.SINGLE),
        ({"postgres", "kafka-1", "kafka-2", "kafka-3", "connect-1"}, Topology.CLUSTER),
    ],
)
def test_the_running_topology_is_read_from_the_loaded_programs(
    monkeypatch: pytest.MonkeyPatch, loaded: set[str], topology: Topology
) -> None:
    monkeypatch.setattr(supervisor, "is_running", lambda: True)
    monkeypatch.setattr(supervisor, "programs", lambda: loaded)
    assert running.running() is topology
    monkeypatch.setattr(supervisor, "is_running", lambda: False)
    assert running.running() is None
