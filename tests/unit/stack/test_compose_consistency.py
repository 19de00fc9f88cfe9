"""docker-compose.yml must describe the same pipeline as the local stack's own files, in the
cluster topology of the contract (section 7)."""

import importlib
import json
import pkgutil
import re
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml
from pydantic_settings import BaseSettings

import onceflow.settings
from onceflow.paths import ROOT
from onceflow.settings import NotificationSettings, ObservabilitySettings, Settings
from onceflow.settings.kafka_auth import KafkaAuthSettings
from onceflow.topology import KafkaNode, Topology, layout
from stack import jvm, kafka_security, prometheus
from stack.components import CONNECTOR_WATCHDOG, components

# Worker settings that differ by topology (addresses, paths, replication, how long the group
# waits for a departed worker: 0 for the local single worker), not by behaviour.
TOPOLOGY = re.compile(
    r"bootstrap\.servers|listeners|rest\.advertised\..*|plugin\..*|.*replication\.factor"
    r"|scheduled\.rebalance\.max\.delay\.ms"
)

# How Debezium's Connect image turns its environment into worker properties (its
# docker-entrypoint.sh): these plain variables, then every CONNECT_* one (CONNECT_A_B -> a.b).
# It overwrites the CONNECT_* form of the plain ones with their value, or with its default.
CONNECT_IMAGE_NAMES = {
    "BOOTSTRAP_SERVERS": "bootstrap.servers",
    "GROUP_ID": "group.id",
    "CONFIG_STORAGE_TOPIC": "config.storage.topic",
    "OFFSET_STORAGE_TOPIC": "offset.storage.topic",
    "STATUS_STORAGE_TOPIC": "status.storage.topic",
    "KEY_CONVERTER": "key.converter",
    "VALUE_CONVERTER": "value.converter",
    "ADVERTISED_HOST_NAME": "rest.advertised.host.name",
    "ADVERTISED_PORT": "rest.advertised.port",
    "REST_HOST_NAME": "rest.host.name",
    "REST_PORT": "rest.port",
    "OFFSET_FLUSH_INTERVAL_MS": "offset.flush.interval.ms",
    "OFFSET_FLUSH_TIMEOUT_MS": "offset.flush.timeout.ms",
    "SHUTDOWN_TIMEOUT": "task.shutdown.graceful.timeout.ms",
}
PLAIN_NAME_OF = {prop: name for name, prop in CONNECT_IMAGE_NAMES.items()}
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
CONNECT_IMAGE_DEFAULTS = {"key.converter": JSON_CONVERTER, "value.converter": JSON_CONVERTER}

# apache/spark's images run as user `spark`, uid 185 (`ARG spark_uid=185` in their Dockerfile).
SPARK_IMAGE_UID = 185
SPARK_MASTER_URL = "spark://spark-master:7077"


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


def _replicas(compose: dict[str, Any], base: str) -> dict[str, dict[str, Any]]:
    """The services `<base>-1`, `<base>-2`, ... by name."""
    return {
        name: service
        for name, service in compose["services"].items()
        if re.fullmatch(rf"{base}-\d+", name)
    }


def _command(service: dict[str, Any]) -> list[str]:
    return [str(word) for word in service.get("command", [])]


def _mounts(service: dict[str, Any]) -> dict[str, str]:
    """Path in the container -> volume name or host path (short syntax)."""
    return {v.split(":")[1]: v.split(":")[0] for v in service.get("volumes", [])}


def _worker_properties(env: dict[str, Any]) -> dict[str, str]:
    """The worker properties Debezium's image makes of a Connect service's environment."""
    props = dict(CONNECT_IMAGE_DEFAULTS)
    for name, value in env.items():
        if name.startswith("ONCEFLOW_") or name == "KAFKA_OPTS":
            continue
        if name in CONNECT_IMAGE_NAMES:
            props[CONNECT_IMAGE_NAMES[name]] = str(value)
            continue
        assert name.startswith("CONNECT_"), f"{name}: Debezium's image ignores it"
        key = name.removeprefix("CONNECT_").lower().replace("_", ".")
        assert key not in PLAIN_NAME_OF, f"{name}: the image overwrites it ({PLAIN_NAME_OF[key]})"
        props[key] = str(value)
    return props


def _broker_properties(env: dict[str, Any]) -> dict[str, str]:
    """The server properties apache/kafka's image makes of a broker's KAFKA_* variables (its
    KafkaDockerWrapper: KAFKA_A_B -> a.b, `__` -> `_`, `___` -> `-`)."""
    return {
        name.removeprefix("KAFKA_")
        .lower()
        .replace("_", ".")
        .replace("...", "-")
        .replace("..", "_"): str(value)
        for name, value in env.items()
        if name.startswith("KAFKA_") and name != "KAFKA_OPTS"
    }


def _reference(principal: str) -> str:
    """How compose writes a Kafka principal's password: its variable, with no default."""
    variable = f"ONCEFLOW_KAFKA_{principal.upper()}_PASSWORD"
    return f"${{{variable}:?set {variable} in .env}}"


def _settings_classes() -> list[type[BaseSettings]]:
    """Every settings class defined in a module of onceflow/settings, found by walking it."""
    found: list[type[BaseSettings]] = []
    for info in pkgutil.iter_modules(onceflow.settings.__path__, "onceflow.settings."):
        module = importlib.import_module(info.name)
        found += [
            obj
            for obj in vars(module).values()
            if isinstance(obj, type)
            and issubclass(obj, BaseSettings)
            and obj.__module__ == module.__name__
        ]
    return found


@dataclass
class Stage:
    """What a Dockerfile stage runs as, and the users and owned folders it has."""

    user: str = "root"
    uids: dict[str, int] = field(default_factory=dict)
    owned: dict[str, str] = field(default_factory=dict)  # folder -> owner


def _dockerfile_stages() -> dict[str, Stage]:
    """The Dockerfile's stages by name; a stage built FROM another one inherits from it."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    stages: dict[str, Stage] = {}
    stage = Stage()
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] == "FROM":
            base = stages.get(words[1], Stage())
            stage = Stage(base.user, dict(base.uids), dict(base.owned))
            stages[words[-1]] = stage
        elif words[0] == "USER":
            stage.user = words[1]
        elif words[0] == "RUN":
            for command in (c.split() for c in " ".join(words[1:]).split("&&")):
                if command[:1] == ["useradd"]:
                    stage.uids[command[-1]] = int(command[command.index("--uid") + 1])
                if command[:3] == ["install", "-d", "-o"]:
                    stage.owned[command[4]] = command[3]
    return stages


def _chowned_by(compose: dict[str, Any], volume: str) -> dict[str, str]:
    """One-shot services that chown a volume's root: service name -> the new owner."""
    found = {}
    for name, service in compose["services"].items():
        command = _command(service)
        if command[:1] == ["chown"] and _mounts(service).get(command[-1]) == volume:
            found[name] = command[1].split(":")[0]
    return found


def _waits_for(service: dict[str, Any], name: str) -> bool:
    """Whether a service starts only after one-shot service `name` succeeded."""
    depends = service.get("depends_on", {})
    condition = depends.get(name, {}).get("condition") if isinstance(depends, dict) else None
    return bool(condition == "service_completed_successfully")


def test_compose_registers_the_connector_file_of_the_local_stack(compose: dict[str, Any]) -> None:
    init = compose["services"]["connect-init"]
    assert "./connect/orders-outbox.json:/connect/orders-outbox.json:ro" in init["volumes"]
    assert f"/connectors/{Settings().connector_name}/config" in init["command"]


def test_connector_env_references_are_provided_by_every_worker(compose: dict[str, Any]) -> None:
    names = re.findall(
        r"\$\{env:([A-Z_]+)\}", (ROOT / "connect" / "orders-outbox.json").read_text()
    )
    assert names, "the connector file should take addresses and secrets from the environment"
    for worker in _replicas(compose, "connect").values():
        assert set(names) <= set(worker["environment"])


def test_compose_workers_match_worker_properties(compose: dict[str, Any]) -> None:
    local = _properties(ROOT / "connect" / "worker.properties")
    workers = _replicas(compose, "connect")
    assert workers
    for name, worker in workers.items():
        props = _worker_properties(worker["environment"])
        for key, value in local.items():
            if not TOPOLOGY.fullmatch(key):
                assert props.get(key) == value, f"{name}: {key}={props.get(key)}, locally {value}"


def test_two_connect_workers_form_one_exactly_once_group(compose: dict[str, Any]) -> None:
    workers = {
        name: _worker_properties(service["environment"])
        for name, service in _replicas(compose, "connect").items()
    }
    assert len(workers) == 2
    group = (
        "group.id",
        "config.storage.topic",
        "offset.storage.topic",
        "status.storage.topic",
        "exactly.once.source.support",
        "scheduled.rebalance.max.delay.ms",
    )
    assert len({tuple(props.get(key) for key in group) for props in workers.values()}) == 1
    for name, props in workers.items():
        assert props["exactly.once.source.support"] == "enabled", name
        for topic in ("config", "offset", "status"):
            assert props[f"{topic}.storage.replication.factor"] == "3", (name, topic)
        # Each worker is reached at its own name (the leader forwards REST calls to it).
        assert props["rest.advertised.host.name"] == name
        # A dead worker's task moves to the other one within seconds, not the default 5 minutes.
        assert int(props["scheduled.rebalance.max.delay.ms"]) <= 30_000, name


def test_the_connector_watchdog_asks_every_connect_worker(compose: dict[str, Any]) -> None:
    # As on the local cluster (Settings.connect_urls: every worker of the topology), ONCEFLOW_
    # CONNECT_URL first: a worker cut off from the brokers answers with a stale status.
    env = compose["services"][CONNECTOR_WATCHDOG]["environment"]
    urls = env["ONCEFLOW_CONNECT_URLS"].split(",")
    workers = _replicas(compose, "connect")
    rest = {name: service["ports"][0].rsplit(":", 1)[1] for name, service in workers.items()}
    assert sorted(urls) == sorted(f"http://{name}:{port}" for name, port in rest.items())
    assert urls[0] == env["ONCEFLOW_CONNECT_URL"]
    assert len(urls) == len(layout(Topology.CLUSTER).connect)


def test_every_topic_is_replicated_three_times_with_min_isr_two(compose: dict[str, Any]) -> None:
    brokers = _replicas(compose, "kafka")
    assert len(brokers) == 3
    for name, broker in brokers.items():
        env = broker["environment"]
        factors = {k: int(v) for k, v in env.items() if k.endswith("_REPLICATION_FACTOR")}
        min_isr = {
            k: int(v) for k, v in env.items() if k.endswith(("_MIN_ISR", "_MIN_INSYNC_REPLICAS"))
        }
        assert set(factors) >= {
            "KAFKA_DEFAULT_REPLICATION_FACTOR",
            "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR",
            "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR",
            "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR",
        }, name
        assert set(min_isr) >= {
            "KAFKA_MIN_INSYNC_REPLICAS",
            "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR",
            "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR",
        }, name
        assert set(factors.values()) == {3}, (name, factors)
        assert set(min_isr.values()) == {2}, (name, min_isr)
        voters = env["KAFKA_CONTROLLER_QUORUM_VOTERS"].split(",")
        assert {v.split("@")[1].split(":")[0] for v in voters} == set(brokers)
    assert len({b["environment"]["KAFKA_NODE_ID"] for b in brokers.values()}) == 3
    bootstrap = compose["x-onceflow-env"]["ONCEFLOW_KAFKA_BOOTSTRAP"].split(",")
    assert {address.split(":")[0] for address in bootstrap} == set(brokers)
    # The connector's own topics (heartbeats) take the brokers' default: -1, or 3.
    connector = json.loads((ROOT / "connect" / "orders-outbox.json").read_text())
    for key, value in connector.items():
        if key.endswith("replication.factor"):
            assert value in ("-1", "3"), key


def test_settings_classes_are_discovered() -> None:
    classes = _settings_classes()
    exported = [getattr(onceflow.settings, name) for name in onceflow.settings.__all__]
    assert {obj for obj in exported if isinstance(obj, type)} <= set(classes)


def test_every_onceflow_variable_in_compose_is_a_setting(compose: dict[str, Any]) -> None:
    fields = {
        f"{cls.model_config.get('env_prefix', '')}{name}".upper()
        for cls in _settings_classes()
        for name in cls.model_fields
    }
    # Keys of environments and ${...} references alike.
    used = set(re.findall(r"\bONCEFLOW_[A-Z0-9_]+", (ROOT / "docker-compose.yml").read_text()))
    assert used
    assert used <= fields, sorted(used - fields)


def test_compose_uses_the_same_topic(compose: dict[str, Any]) -> None:
    assert compose["x-onceflow-env"]["ONCEFLOW_TOPIC"] == Settings().topic
    connector = json.loads((ROOT / "connect" / "orders-outbox.json").read_text())
    route = connector.get("config", connector)["transforms.outbox.route.topic.replacement"]
    assert route.replace("${routedByValue}", "order") == Settings().topic


def test_compose_images_match_the_local_versions(compose: dict[str, Any]) -> None:
    assert compose["x-kafka"]["image"] == f"apache/kafka:{_pom_property('kafka', 'kafka.version')}"
    debezium = _pom_property("debezium", "debezium.version")
    for worker in _replicas(compose, "connect").values():
        assert worker["image"] == f"quay.io/debezium/connect:{debezium}"


def test_spark_nodes_run_the_spark_of_pyspark(compose: dict[str, Any]) -> None:
    images = {
        str(service["image"])
        for service in compose["services"].values()
        if str(service.get("image", "")).startswith("apache/spark:")
    }
    assert len(images) == 1, images
    spark = images.pop().split(":", 1)[1].split("-")[0]
    assert spark == version("pyspark") == _pom_property("spark-kafka", "spark.version")


def test_the_job_runs_in_client_mode_on_the_standalone_cluster(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert "org.apache.spark.deploy.master.Master" in _command(services["spark-master"])
    workers = _replicas(compose, "spark-worker")
    assert len(workers) == 2
    for name, worker in workers.items():
        command = _command(worker)
        assert "org.apache.spark.deploy.worker.Worker" in command
        assert command[-1] == SPARK_MASTER_URL
        # The driver and the other executors reach this worker's executors by this name.
        assert command[command.index("--host") + 1] == name
    env = services["aggregation"]["environment"]
    assert env["ONCEFLOW_AGG_SPARK_MASTER"] == SPARK_MASTER_URL
    # Executors connect back to the driver: by its service name, not its bind address.
    assert env["ONCEFLOW_AGG_DRIVER_HOST"] == "aggregation"
    assert env["ONCEFLOW_AGG_UI_HOST"] == "0.0.0.0"


def test_the_checkpoint_is_shared_by_the_driver_and_every_worker(compose: dict[str, Any]) -> None:
    services = compose["services"]
    env = services["aggregation"]["environment"]
    driver = _mounts(services["aggregation"])
    for setting in ("ONCEFLOW_AGG_CHECKPOINT_DIR", "ONCEFLOW_AGG_BACKFILL_CHECKPOINT_ROOT"):
        path = PurePosixPath(env[setting])
        mount = next((m for m in driver if path.is_relative_to(m)), None)
        assert mount, f"{setting}={path} is on no volume of the driver"
        assert driver[mount] in compose["volumes"], "a named volume"
        for name in _replicas(compose, "spark-worker"):
            assert _mounts(services[name]).get(mount) == driver[mount], (name, mount)


def test_the_checkpoint_volume_belongs_to_the_spark_user(compose: dict[str, Any]) -> None:
    services = compose["services"]
    volume = _mounts(services["aggregation"])["/checkpoints"]
    owners = _chowned_by(compose, volume)
    assert len(owners) == 1, owners
    [(init, owner)] = owners.items()
    assert services[init]["user"] == "root"
    assert owner == "spark"
    users = [name for name, s in services.items() if volume in _mounts(s).values()]
    for name in users:
        if name != init:
            assert _waits_for(services[name], init), f"{name} may start before {init}"
    # The driver is the same user as the executors on apache/spark's workers.
    aggregation = _dockerfile_stages()[services["aggregation"]["build"]["target"]]
    assert aggregation.user == owner
    assert aggregation.uids[owner] == SPARK_IMAGE_UID


def test_our_images_can_write_their_named_volumes(compose: dict[str, Any]) -> None:
    stages = _dockerfile_stages()
    for name, service in compose["services"].items():
        if "build" not in service:
            continue
        stage = stages[service["build"]["target"]]
        assert stage.user != "root", name
        for path, volume in _mounts(service).items():
            if volume not in compose["volumes"]:
                continue
            # Docker makes an empty named volume root-owned unless the image has the folder.
            chowned = {
                init
                for init, owner in _chowned_by(compose, volume).items()
                if owner == stage.user and _waits_for(service, init)
            }
            assert stage.owned.get(path) == stage.user or chowned, (name, path, stage.user)


def test_each_notifications_instance_has_its_own_number(compose: dict[str, Any]) -> None:
    notify = NotificationSettings()
    instances = _replicas(compose, "notifications")
    numbers = []
    for name, service in instances.items():
        command = _command(service)
        assert command[:3] == ["python", "-m", "services.notifications"], name
        assert name == f"notifications-{command[3]}"
        numbers.append(int(command[3]))
        state = PurePosixPath("/app") / notify.notify_state_dir.relative_to(ROOT)
        assert str(state) in _mounts(service), name
    assert sorted(numbers) == list(range(1, notify.notify_instances + 1))


def test_every_local_component_is_a_compose_service(compose: dict[str, Any]) -> None:
    # Compose runs Kafka as three brokers (kafka-1..3) and Connect as two workers (connect-1, 2);
    # every other name is the same.
    services = {re.sub(r"^(kafka|connect)-\d+$", r"\1", name) for name in compose["services"]}
    # Compose users get the local dashboard's panels in Grafana (observability/grafana).
    compose_name = {"dashboard": "grafana"}
    names = {compose_name.get(c.name, c.name) for c in components(Settings())}
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
    # No CORS `*`: the same --web.cors.origin as the local stack's (its own origin only).
    assert f"--web.cors.origin={prometheus.cors_origin(9090)}" in service["command"]
    assert yaml.safe_load(prometheus.COMPOSE.read_text()) == prometheus.compose_config()
    local = prometheus.targets(prometheus.source())
    composed = prometheus.targets(prometheus.compose_config())
    assert set(composed) == set(local) - set(prometheus.LOCAL_ONLY)
    for job, targets in composed.items():
        assert {t.rsplit(":", 1)[1] for t in targets} == {
            t.rsplit(":", 1)[1] for t in local[job]
        }, job
        hosts = {t.rsplit(":", 1)[0] for t in targets}
        assert hosts <= set(compose["services"]) | {"localhost"}, (job, hosts)


def test_compose_prometheus_scrapes_every_replica(compose: dict[str, Any]) -> None:
    composed = prometheus.targets(prometheus.compose_config())
    for job in ("kafka", "connect", "notifications"):
        assert {t.rsplit(":", 1)[0] for t in composed[job]} == set(_replicas(compose, job)), job


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
    assert exporter["environment"]["DATA_SOURCE_USER"] == Settings().monitor_db_user
    assert compose["x-onceflow-env"]["ONCEFLOW_MONITOR_DB_USER"] == Settings().monitor_db_user
    observe = ObservabilitySettings()
    jvms = [(name, observe.kafka_jmx_port, "kafka.yml") for name in _replicas(compose, "kafka")]
    jvms += [(n, observe.connect_jmx_port, "connect.yml") for n in _replicas(compose, "connect")]
    assert len(jvms) == 5
    for name, port, rules in jvms:
        service = services[name]
        agent = "/opt/jmx-agent/jmx_prometheus_javaagent.jar"
        # Connect's REST logins (BasicAuthSecurityRestExtension), as stack/jvm.py gives them.
        jaas = " -Djava.security.auth.login.config=/tmp/connect-rest/jaas.conf"
        assert service["environment"]["KAFKA_OPTS"] == (
            f"-javaagent:{agent}={port}:/opt/jmx-rules/{rules}"
            + (jaas if "connect" in name else "")
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
    services = compose["services"]
    for name, service in services.items():
        for mapping in service.get("ports", []):
            assert str(mapping).startswith("127.0.0.1:"), (name, mapping)
    observe = ObservabilitySettings()
    assert services["prometheus"]["ports"] == [f"127.0.0.1:{observe.prometheus_port}:9090"]
    assert services["grafana"]["ports"] == [f"127.0.0.1:{observe.dashboard_port}:3000"]
    # The contract's cluster addresses: Connect's REST on 8083 and 8084, Spark's UI on 8080.
    assert services["connect-1"]["ports"] == ["127.0.0.1:8083:8083"]
    assert services["connect-2"]["ports"] == ["127.0.0.1:8084:8083"]
    assert services["spark-master"]["ports"] == ["127.0.0.1:8080:8080"]


def test_compose_brokers_ask_for_sasl_as_the_local_stack(compose: dict[str, Any]) -> None:
    """Every listener of every broker: the properties of stack/kafka_security.py's
    node_overrides, but the addresses (a container's name, every interface)."""
    brokers = _replicas(compose, "kafka")
    assert len(brokers) == 3
    for name, broker in brokers.items():
        props = _broker_properties(broker["environment"])
        node = KafkaNode(name, int(props["node.id"]), 9092, 9093, 0)
        local = kafka_security.node_overrides(node, _reference("broker"))
        for key, value in local.items():
            if key == "listeners":
                value = re.sub(r"//[^:/]+:", "//:", str(value))
            if key == "advertised.listeners":
                value = f"{kafka_security.LISTENER}://{name}:9092"
            assert props.get(key) == value, (name, key, props.get(key))


def test_compose_workers_log_in_as_connect(compose: dict[str, Any]) -> None:
    """The worker and its tasks' producers, consumers and admin clients: stack/kafka_security.py's
    worker_overrides, the password being compose's reference to it."""
    auth = KafkaAuthSettings(
        kafka_sasl=True, kafka_principal=None, kafka_connect_password=_reference("connect")
    )
    local = kafka_security.worker_overrides(auth)
    assert local
    for name, worker in _replicas(compose, "connect").items():
        props = _worker_properties(worker["environment"])
        for key, value in local.items():
            assert props.get(key) == value, (name, key, props.get(key))
