"""Kafka's SASL settings and ACL table (stack/kafka_security.py): every listener of every node
of both topologies asks for SASL, the broker principal is the only super user, and the ACL
table lets only Connect write the outbox topic (the real node's refusals:
tests/integration/stack/test_kafka_acls.py)."""

from dataclasses import replace
from pathlib import Path

import pytest
from confluent_kafka.admin import AclOperation, AclPermissionType, AdminClient, ResourceType

from onceflow.settings import NotificationSettings, Settings
from onceflow.settings.kafka_auth import (
    PRINCIPALS,
    KafkaAuthSettings,
    KafkaPasswordMissingError,
)
from onceflow.topology import SINGLE, Layout, Topology, layout
from stack import kafka_migration, kafka_security, node_configs

LAYOUTS = [SINGLE, layout(Topology.CLUSTER)]


@pytest.fixture
def auth(tmp_path: Path) -> KafkaAuthSettings:
    settings = KafkaAuthSettings(
        kafka_sasl=True, kafka_password_dir=tmp_path / "kafka", kafka_principal=None
    )
    assert kafka_security.ensure_passwords(settings) == list(PRINCIPALS)
    return settings


@pytest.mark.parametrize("nodes", LAYOUTS, ids=lambda nodes: nodes.topology.value)
def test_every_listener_of_every_node_asks_for_sasl(nodes: Layout, auth: KafkaAuthSettings) -> None:
    for node in nodes.kafka:
        config = node_configs.properties(node_configs.node_properties(nodes, node, auth))
        protocols = dict(
            pair.split(":") for pair in config["listener.security.protocol.map"].split(",")
        )
        listeners = [entry.split("://")[0] for entry in config["listeners"].split(",")]
        assert {protocols[name] for name in listeners} == {"SASL_PLAINTEXT"}
        assert config["advertised.listeners"] == f"SASL_PLAINTEXT://{node.address}"
        assert config["inter.broker.listener.name"] == "SASL_PLAINTEXT"
        assert config["sasl.mechanism.inter.broker.protocol"] == "SCRAM-SHA-512"
        assert config["sasl.mechanism.controller.protocol"] == "PLAIN"
        assert config["super.users"] == "User:broker"
        assert config["allow.everyone.if.no.acl.found"] == "false"
        assert config["authorizer.class.name"].endswith("StandardAuthorizer")
        broker_password = auth.password("broker")
        assert broker_password in config["listener.name.controller.plain.sasl.jaas.config"]
        # The topology's own overrides stay (node id, quorum, log dir).
        assert config["node.id"] == str(node.node_id)


@pytest.mark.parametrize("nodes", LAYOUTS, ids=lambda nodes: nodes.topology.value)
def test_without_sasl_the_node_configs_are_unchanged(nodes: Layout) -> None:
    off = KafkaAuthSettings(kafka_sasl=False)
    for node in nodes.kafka:
        config = node_configs.properties(node_configs.node_properties(nodes, node, off))
        assert not any(key.startswith("sasl") for key in config)
        assert config["advertised.listeners"] == f"PLAINTEXT://{node.address}"


def test_the_broker_credential_is_written_at_format_time() -> None:
    assert kafka_security.format_arguments("pw") == [
        "--add-scram",
        "SCRAM-SHA-512=[name=broker,password=pw]",
    ]


def test_client_configs(auth: KafkaAuthSettings) -> None:
    config = auth.client_config("127.0.0.1:9092", "notifications")
    assert config == {
        "bootstrap.servers": "127.0.0.1:9092",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "notifications",
        "sasl.password": auth.password("notifications"),
    }
    jaas = auth.java_client_config("connect")["sasl.jaas.config"]
    assert f'username="connect" password="{auth.password("connect")}"' in jaas
    off = KafkaAuthSettings(kafka_sasl=False, kafka_password_dir=auth.kafka_password_dir)
    # A process whose clients all run as one principal (the test suites: tests/conftest.py).
    suites = auth.model_copy(update={"kafka_principal": "tests"})
    assert suites.client_config("b:1", "notifications")["sasl.username"] == "tests"
    assert 'username="tests"' in suites.java_client_config("connect")["sasl.jaas.config"]
    assert off.client_config("b:1", "ops") == {"bootstrap.servers": "b:1"}
    assert off.java_client_config("ops") == {}


def test_passwords_are_generated_once_and_private(auth: KafkaAuthSettings) -> None:
    before = {p: auth.password(p) for p in PRINCIPALS}
    assert kafka_security.ensure_passwords(auth) == []
    assert {p: auth.password(p) for p in PRINCIPALS} == before
    assert len(set(before.values())) == len(PRINCIPALS)
    for principal in PRINCIPALS:
        assert (auth.kafka_password_dir / principal).stat().st_mode & 0o777 == 0o600


def test_a_missing_password_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ONCEFLOW_KAFKA_OPS_PASSWORD", raising=False)
    empty = KafkaAuthSettings(kafka_sasl=True, kafka_password_dir=tmp_path, kafka_principal=None)
    with pytest.raises(KafkaPasswordMissingError, match="ONCEFLOW_KAFKA_OPS_PASSWORD"):
        empty.client_config("b:1", "ops")
    with pytest.raises(ValueError, match="unknown Kafka principal"):
        empty.password("root")
    monkeypatch.setenv("ONCEFLOW_KAFKA_OPS_PASSWORD", "from-env")
    given = KafkaAuthSettings(kafka_sasl=True, kafka_password_dir=tmp_path, kafka_principal=None)
    assert given.password("ops") == "from-env"


def test_only_connect_may_write_the_outbox() -> None:
    settings, notify = Settings(), NotificationSettings()
    bindings = kafka_security.acl_bindings(kafka_security.grants(settings, notify))
    writers = {
        b.principal
        for b in bindings
        if b.restype == ResourceType.TOPIC
        and b.permission_type == AclPermissionType.ALLOW
        and b.operation in (AclOperation.WRITE, AclOperation.ALL)
        and (b.name == settings.topic or b.name == "*")
    }
    assert writers == {"User:connect", "User:tests"}
    denied = {
        b.principal
        for b in bindings
        if b.name == settings.topic
        and b.operation == AclOperation.WRITE
        and b.permission_type == AclPermissionType.DENY
    }
    # The tests' wildcard is overridden by an explicit deny on the pipeline's topics.
    assert denied == {"User:tests"}
    assert not any(b.principal == "User:broker" for b in bindings)


def test_the_migration_start_adds_one_plaintext_listener_for_itself(
    auth: KafkaAuthSettings,
) -> None:
    """A node formatted before SASL starts once with a loopback PLAINTEXT listener whose
    anonymous principal is a super user (the credentials and ACLs go in through it), then with
    the final properties, which have neither."""
    node = SINGLE.kafka[0]
    migration = kafka_security.migration_overrides(node, auth.password("broker"), 9099)
    final = kafka_security.node_overrides(node, auth.password("broker"))
    assert migration["listeners"] == f"{final['listeners']},MIGRATION://127.0.0.1:9099"
    assert str(migration["listener.security.protocol.map"]).endswith(",MIGRATION:PLAINTEXT")
    assert migration["super.users"] == "User:broker;User:ANONYMOUS"
    assert "MIGRATION" not in str(final["listeners"]) + str(final["advertised.listeners"])
    assert final["super.users"] == "User:broker"


def test_connect_workers_and_their_tasks_log_in_as_connect(auth: KafkaAuthSettings) -> None:
    overrides = kafka_security.worker_overrides(auth)
    for prefix in ("", "producer.", "consumer.", "admin."):
        assert overrides[f"{prefix}security.protocol"] == "SASL_PLAINTEXT"
        assert 'username="connect"' in str(overrides[f"{prefix}sasl.jaas.config"])


def test_rotation_refuses_the_broker_and_a_password_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused before anything is written or sent (no Kafka needed: the Admin client is never
    used)."""
    unused = AdminClient({"bootstrap.servers": "127.0.0.1:1", "log_level": 0})
    auth = KafkaAuthSettings(kafka_password_dir=tmp_path, kafka_principal=None)
    with pytest.raises(ValueError, match="not a rotatable Kafka principal"):
        kafka_security.rotate(unused, auth, "broker")
    monkeypatch.setenv("ONCEFLOW_KAFKA_OPS_PASSWORD", "from-env")
    given = KafkaAuthSettings(kafka_password_dir=tmp_path, kafka_principal=None)
    with pytest.raises(ValueError, match="ONCEFLOW_KAFKA_OPS_PASSWORD sets its password"):
        kafka_security.rotate(unused, given, "ops")
    assert list(tmp_path.iterdir()) == []


def test_a_node_formatted_without_the_brokers_credential_is_pending(tmp_path: Path) -> None:
    """`make up` and `onceflow-stack kafka-sasl` migrate the topology when a formatted node's
    log dir lacks the marker; an unformatted node is formatted with the credential instead."""
    cluster = replace(layout(Topology.CLUSTER), data_folder=str(tmp_path))
    first, second, third = cluster.kafka
    for node in (first, second):
        (tmp_path / node.program).mkdir()
        (tmp_path / node.program / "meta.properties").write_text("cluster.id=x\n")
    kafka_security.mark_credentials(tmp_path / second.program)
    assert kafka_migration.pending(cluster) == [first]
    kafka_security.mark_credentials(tmp_path / first.program)
    assert kafka_migration.pending(cluster) == []
    assert not kafka_security.has_credentials(tmp_path / third.program)
    assert kafka_security.migration_port(first) == first.port + kafka_security.MIGRATION_PORT_STEP
