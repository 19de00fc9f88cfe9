"""Kafka's SASL/SCRAM and ACLs (contract section 2b) on a real KRaft node of its own: the node's
properties rendered as `make up` renders them with SASL on, its storage formatted with the
broker principal's SCRAM credential, the other principals and the ACL table created through the
Admin API as `make up` does. Then the forged writes of issue 24 are refused: to
outbox.event.order with another principal's credentials (TOPIC_AUTHORIZATION_FAILED), with a
wrong password (an authentication failure) and with none (no connection, within a bounded
timeout); and each principal can do its own part.

A node of its own (free ports, a temporary data folder), so the running stack is untouched."""

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from onceflow import paths
from onceflow.settings import NotificationSettings, Settings
from onceflow.settings.kafka_auth import AGGREGATION_GROUP_PREFIX
from stack import kafka_security
from stack.waiting import wait_for
from tests.integration.stack.kafka_writes import REFUSAL_TIMEOUT_S, code_of, produce
from tests.integration.stack.sasl_node import Node, sasl_node

pytestmark = pytest.mark.integration

NOTIFY = NotificationSettings()
OUTBOX = Settings().topic


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Node]:
    if not (paths.LIB / "kafka").is_dir():
        pytest.fail("no Kafka jars in .stack/lib/kafka: run `make up`")
    with sasl_node(tmp_path_factory.mktemp("kafka-sasl")) as started:
        admin = kafka_security.admin(started.bootstrap, started.auth)
        topics = [OUTBOX, NOTIFY.notify_topic, NOTIFY.notify_changelog_topic]
        for future in admin.create_topics([NewTopic(t, 1, 1) for t in topics]).values():
            future.result(timeout=30)
        yield started


def _clients() -> list[str]:
    return ["connect", "aggregation", "notifications", "ops", "tests"]


def consume_one(config: dict[str, Any], topic: str) -> bytes | None:
    consumer = Consumer(
        {**config, "auto.offset.reset": "earliest", "isolation.level": "read_committed"}
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        message = consumer.poll(REFUSAL_TIMEOUT_S)
        if message is None:
            return None
        if message.error():
            raise KafkaException(message.error())
        value: bytes | None = message.value()
        return value
    finally:
        consumer.close()


@pytest.mark.parametrize("forger", ["notifications", "aggregation", "ops", "tests"])
def test_another_principals_write_to_the_outbox_is_refused(node: Node, forger: str) -> None:
    error = produce(node.config(forger), OUTBOX)
    assert code_of(error) == KafkaError.TOPIC_AUTHORIZATION_FAILED, error


def test_a_write_without_credentials_is_refused(node: Node) -> None:
    """PLAINTEXT against a SASL listener: the broker drops the connection, nothing is written."""
    error = produce(node.config(None), OUTBOX)
    assert code_of(error) == KafkaError._MSG_TIMED_OUT, error


def test_a_wrong_password_is_refused(node: Node) -> None:
    config = {**node.config("connect"), "sasl.password": "not-the-password"}
    admin = AdminClient(config)
    with pytest.raises(KafkaException) as refused:
        admin.list_topics(timeout=REFUSAL_TIMEOUT_S)
    assert refused.value.args[0].code() in {
        KafkaError._AUTHENTICATION,
        KafkaError._TRANSPORT,
        KafkaError._TIMED_OUT,
    }


def test_connect_writes_the_outbox_in_its_transactions(node: Node) -> None:
    transactional = {"transactional.id": f"{kafka_security.CONNECT_GROUP}-orders-outbox-0"}
    assert produce(node.config("connect", **transactional), OUTBOX) is None
    # ...and no transactional id but its own.
    with pytest.raises(KafkaException) as refused:
        produce(node.config("connect", **{"transactional.id": "someone-else"}), OUTBOX)
    code = refused.value.args[0].code()
    assert code == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_readers_read_the_outbox_with_their_own_groups(node: Node) -> None:
    assert produce(node.config("connect"), OUTBOX) is None
    job = {"group.id": f"{AGGREGATION_GROUP_PREFIX}-{uuid.uuid4()}"}
    assert consume_one(node.config("aggregation", **job), OUTBOX) == b"{}"
    notifier = {"group.id": NOTIFY.notify_group}
    assert consume_one(node.config("notifications", **notifier), OUTBOX) == b"{}"
    # The job may not read the notifications.
    admin = AdminClient(node.config("aggregation"))
    hidden = admin.list_topics(NOTIFY.notify_topic, timeout=REFUSAL_TIMEOUT_S)
    error = hidden.topics[NOTIFY.notify_topic].error
    assert code_of(error) == KafkaError.TOPIC_AUTHORIZATION_FAILED, error


def test_only_the_notifications_principal_writes_the_notifications(node: Node) -> None:
    own = {"transactional.id": NOTIFY.transactional_id(0)}
    assert produce(node.config("notifications", **own), NOTIFY.notify_topic) is None
    assert produce(node.config("notifications", **own), NOTIFY.notify_changelog_topic) is None
    for forger in ("connect", "tests"):
        error = produce(node.config(forger), NOTIFY.notify_topic)
        assert code_of(error) == KafkaError.TOPIC_AUTHORIZATION_FAILED, error


def test_ops_describes_groups_and_reads_but_writes_nothing(node: Node) -> None:
    admin = AdminClient(node.config("ops"))
    assert OUTBOX in admin.list_topics(timeout=REFUSAL_TIMEOUT_S).topics
    groups = admin.list_consumer_groups().result(timeout=REFUSAL_TIMEOUT_S)
    assert groups.errors == []
    assert consume_one(node.config("ops", **{"group.id": "onceflow-ops-peek"}), OUTBOX) is not None
    error = produce(node.config("ops"), NOTIFY.notify_topic)
    assert code_of(error) == KafkaError.TOPIC_AUTHORIZATION_FAILED, error


def test_tests_principal_has_its_scratch_topics(node: Node) -> None:
    scratch = f"scratch-{uuid.uuid4()}"
    admin = AdminClient(node.config("tests"))
    admin.create_topics([NewTopic(scratch, 1, 1)])[scratch].result(timeout=30)
    transactional = {"transactional.id": scratch}
    assert produce(node.config("tests", **transactional), scratch) is None
    assert consume_one(node.config("tests", **{"group.id": scratch}), scratch) == b"{}"


def test_the_cli_tools_log_in_with_their_command_config(node: Node, tmp_path: Path) -> None:
    """The Java clients' SASL settings (what Connect's workers and Spark's Kafka source get too)
    work: Kafka's own kafka-topics.sh lists the topics as ops."""
    config = tmp_path / "ops.properties"
    config.write_text(kafka_security.client_properties(node.auth, "ops"))
    tool = paths.STATE / "bin" / "kafka-topics.sh"
    listed = subprocess.run(
        [
            str(tool),
            "--bootstrap-server",
            node.bootstrap,
            "--command-config",
            str(config),
            "--list",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    assert OUTBOX in listed.stdout.split()


def test_password_files_are_private(node: Node) -> None:
    folder: Path = node.auth.kafka_password_dir
    assert folder.stat().st_mode & 0o777 == 0o700
    for principal in ("broker", *_clients()):
        assert (folder / principal).stat().st_mode & 0o777 == 0o600


def _logs_in(config: dict[str, Any]) -> bool:
    try:
        return OUTBOX in AdminClient(config).list_topics(timeout=REFUSAL_TIMEOUT_S).topics
    except KafkaException:
        return False


def test_a_rotated_password_replaces_the_old_one(node: Node) -> None:
    """`onceflow-stack rotate-kafka-password ops` without its restarts (kafka_security.rotate,
    as the broker principal): Kafka takes the new password, the file holds it, the old one is
    refused."""
    old = node.auth.password("ops")
    assert _logs_in(node.config("ops"))
    kafka_security.rotate(kafka_security.admin(node.bootstrap, node.auth), node.auth, "ops")
    new = node.auth.password("ops")
    assert new != old
    assert (node.auth.kafka_password_dir / "ops").stat().st_mode & 0o777 == 0o600
    wait_for(
        lambda: _logs_in(node.config("ops")), what="ops logs in with its new password", timeout=30
    )
    assert not _logs_in({**node.config("ops"), "sasl.password": old})
