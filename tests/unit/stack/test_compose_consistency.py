"""docker-compose.yml must describe the same pipeline as the local stack's own files."""

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from onceflow.paths import ROOT
from onceflow.settings import (
    AggregationSettings,
    ApiSettings,
    NotificationSettings,
    ObservabilitySettings,
    RetentionSettings,
    Settings,
)
from stack import jvm, prometheus
from stack.components import components

# Worker settings that differ by topology (addresses, paths, replication), not by behaviour.
TOPOLOGY = re.compile(
    r"bootstrap\.servers|listeners|rest\.advertised\..*|plugin\..*|.*replication\.factor"
)
IMAGE_ENV_NAMES = {
    "group.id": "GROUP_ID",
    "config.storage.topic": "CONFIG_STORAGE_TOPIC",
    "offset.storage.topic": "OFFSET_STORAGE_TOPIC",
    "status.storage.topic": "STATUS_STORAGE_TOPIC",
}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return document


def _properties(path: Path) -> dict[str, str]:
    pairs = (
        line.split("=", 1)
        for line in path.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    )
    return {key.strip(): value.strip() for key, value in pairs}


def _pom_property(pom: str, name: str) -> str:
    match = re.search(
        rf"<{name}>([^<]+)</{name}>", (ROOT / "stack" / "jvm" / pom / "pom.xml").read_text()
    )
    assert match, f"{name} not in {pom}/pom.xml"
    return match.group(1)


def test_compose_registers_the_connector_file_of_the_local_stack(compose: dict[str, Any]) -> None:
    init = compose["services"]["connect-init"]
    assert "./connect/orders-outbox.json:/connect/orders-outbox.json:ro" in init["volumes"]
    assert f"/connectors/{Settings().connector_name}/config" in init["command"]


def test_connector_env_references_are_all_provided(compose: dict[str, Any]) -> None:
    names = re.findall(
        r"\$\{env:([A-Z_]+)\}", (ROOT / "connect" / "orders-outbox.json").read_text()
    )
    assert names, "the connector file should take addresses and secrets from the environment"
    assert set(names) <= set(compose["services"]["connect"]["environment"])


def test_compose_worker_matches_worker_properties(compose: dict[str, Any]) -> None:
    env = {k: str(v) for k, v in compose["services"]["connect"]["environment"].items()}
    for key, value in _properties(ROOT / "connect" / "worker.properties").items():
        if TOPOLOGY.fullmatch(key):
            continue
        name = IMAGE_ENV_NAMES.get(key, "CONNECT_" + key.upper().replace(".", "_"))
        assert env.get(name) == value, (
            f"worker.properties {key}={value} but compose {name}={env.get(name)}"
        )


def test_compose_uses_only_known_settings_and_the_same_topic(compose: dict[str, Any]) -> None:
    classes = (
        Settings,
        ApiSettings,
        AggregationSettings,
        RetentionSettings,
        NotificationSettings,
        ObservabilitySettings,
    )
    fields = {f"ONCEFLOW_{name.upper()}" for cls in classes for name in cls.model_fields}
    for service in compose["services"].values():
        used = {name for name in service.get("environment", {}) if name.startswith("ONCEFLOW_")}
        assert used <= fields, used - fields
    assert compose["x-onceflow-env"]["ONCEFLOW_TOPIC"] == Settings().topic
    connector = json.loads((ROOT / "connect" / "orders-outbox.json").read_text())
    route = connector.get("config", connector)["transforms.outbox.route.topic.replacement"]
    assert route.replace("${routedByValue}", "order") == Settings().topic


def test_compose_images_match_the_local_versions(compose: dict[str, Any]) -> None:
    assert compose["x-kafka"]["image"] == f"apache/kafka:{_pom_property('kafka', 'kafka.version')}"
    debezium = _pom_property("debezium", "debezium.version")
    assert compose["services"]["connect"]["image"] == f"quay.io/debezium/connect:{debezium}"


def test_every_local_component_is_a_compose_service(compose: dict[str, Any]) -> None:
    # Compose runs Kafka as three brokers, kafka-1..3; every other name is the same.
    services = {
        name.split("-")[0] if name.startswith("kafka-") else name for name in compose["services"]
    }
    names = {component.name for component in components(Settings())}
    assert names <= services, names - services


def test_compose_prometheus_runs_the_config_rendered_from_the_local_one(
    compose: dict[str, Any],
) -> None:
    service = compose["services"]["prometheus"]
    assert (
        "./observability/prometheus/compose.yml:/etc/prometheus/prometheus.yml:ro"
        in (service["volumes"])
    )
    # rule_files: rules/*.yml, relative to the config file, in both.
    assert "./observability/prometheus/rules:/etc/prometheus/rules:ro" in service["volumes"]
    assert yaml.safe_load(prometheus.COMPOSE.read_text()) == prometheus.compose_config()
    local = prometheus.targets(prometheus.source())
    composed = prometheus.targets(prometheus.compose_config())
    assert set(composed) == set(local)
    for job, targets in composed.items():
        assert {t.rsplit(":", 1)[1] for t in targets} == {
            t.rsplit(":", 1)[1] for t in local[job]
        }, job
        hosts = {t.rsplit(":", 1)[0] for t in targets}
        assert hosts <= set(compose["services"]) | {"localhost"}, (job, hosts)


def test_compose_exporters_match_the_local_ones(compose: dict[str, Any]) -> None:
    services = compose["services"]
    exporter = services["postgres-exporter"]
    local_flags = prometheus.exporter_command(ObservabilitySettings()).split()[1:]
    same = [f for f in local_flags if not f.startswith(("--web.listen-address", "--extend"))]
    assert [f for f in exporter["command"] if not f.startswith("--extend")] == same
    assert "--extend.query-path=/etc/postgres-exporter/queries.yml" in exporter["command"]
    assert (
        "./observability/postgres/queries.yml:/etc/postgres-exporter/queries.yml:ro"
        in (exporter["volumes"])
    )
    assert "shop_monitor" in exporter["environment"]["DATA_SOURCE_NAME"]
    assert compose["x-onceflow-env"]["ONCEFLOW_MONITOR_DB_USER"] == Settings().monitor_db_user
    observe = ObservabilitySettings()
    for name, port, rules in (
        ("kafka-1", observe.kafka_jmx_port, "kafka.yml"),
        ("kafka-2", observe.kafka_jmx_port, "kafka.yml"),
        ("kafka-3", observe.kafka_jmx_port, "kafka.yml"),
        ("connect", observe.connect_jmx_port, "connect.yml"),
    ):
        service = services[name]
        agent = "/opt/jmx-agent/jmx_prometheus_javaagent.jar"
        assert service["environment"]["KAFKA_OPTS"] == (
            f"-javaagent:{agent}={port}:/opt/jmx-rules/{rules}"
        )
        assert f"./{jvm.JMX_RULES}:/opt/jmx-rules:ro" in service["volumes"]
        assert "jmx-agent:/opt/jmx-agent:ro" in service["volumes"]
    assert services["jmx-agent"]["volumes"][0] == "./stack/jvm/jmx/pom.xml:/src/pom.xml:ro"


def test_compose_grafana_mounts_the_repositorys_folders(compose: dict[str, Any]) -> None:
    grafana = compose["services"]["grafana"]
    assert (
        "./observability/grafana/provisioning:/etc/grafana/provisioning:ro" in (grafana["volumes"])
    )
    assert "./observability/grafana/dashboards:/etc/grafana/dashboards:ro" in grafana["volumes"]


def test_compose_host_ports_bind_to_loopback(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        for mapping in service.get("ports", []):
            assert str(mapping).startswith("127.0.0.1:"), (name, mapping)
    observe = ObservabilitySettings()
    assert compose["services"]["prometheus"]["ports"] == [
        f"127.0.0.1:{observe.prometheus_port}:9090"
    ]
    assert compose["services"]["grafana"]["ports"] == [f"127.0.0.1:{observe.dashboard_port}:3000"]
