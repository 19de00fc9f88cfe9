"""The running stack's Kafka asks for SASL and applies the ACL table (docs/security.md): issue
24's forged write to outbox.event.order, replayed on the live broker, is refused for every
principal but Connect and for a client without credentials; ops may do what the runbooks do
(raise a topic's partitions, move a group's offsets) and write nothing.

Nothing is written to the pipeline's topics: each refused produce is refused; the runbook rights
are tried on a scratch topic and group of the tests principal."""

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from onceflow import paths
from onceflow.settings import Settings, get_settings
from onceflow.settings.kafka_auth import KafkaAuthSettings
from stack import kafka_security, node_configs
from stack.waiting import wait_for
from tests.integration.stack.kafka_writes import REFUSAL_TIMEOUT_S, code_of, produce

pytestmark = pytest.mark.integration

# Each principal as itself (the suites' ONCEFLOW_KAFKA_PRINCIPAL=tests would make every client
# a tests client).
AUTH = KafkaAuthSettings(kafka_principal=None)


def _config(settings: Settings, principal: str | None, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = (
        AUTH.client_config(settings.kafka_bootstrap, principal)
        if principal
        else {"bootstrap.servers": settings.kafka_bootstrap}
    )
    return {**base, "log_level": 0, **extra}


@pytest.fixture
def settings() -> Settings:
    return get_settings()


def test_every_listener_of_every_node_asks_for_sasl(settings: Settings) -> None:
    assert AUTH.kafka_sasl
    for node in settings.layout.kafka:
        rendered = node_configs.properties(node_configs.config_path(node.program).read_text())
        protocols = dict(
            pair.split(":") for pair in rendered["listener.security.protocol.map"].split(",")
        )
        listeners = [each.split("://")[0] for each in rendered["listeners"].split(",")]
        assert {protocols[name] for name in listeners} == {"SASL_PLAINTEXT"}, rendered["listeners"]
        assert rendered["allow.everyone.if.no.acl.found"] == "false"
        log_dir = paths.data_dirs(settings.layout.data_folder).kafka(node.program)
        assert kafka_security.has_credentials(log_dir), f"{node.program} never migrated"


@pytest.mark.parametrize("forger", ["notifications", "aggregation", "ops", "tests"])
def test_a_forged_write_to_the_live_outbox_is_refused(settings: Settings, forger: str) -> None:
    error = produce(_config(settings, forger), settings.topic)
    assert code_of(error) == KafkaError.TOPIC_AUTHORIZATION_FAILED, error


def test_a_forged_write_without_credentials_gets_no_connection(settings: Settings) -> None:
    error = produce(_config(settings, None), settings.topic)
    assert code_of(error) == KafkaError._MSG_TIMED_OUT, error


def test_a_forged_write_in_connects_transaction_is_refused(settings: Settings) -> None:
    """The tests principal may not take Connect's transactional id (which would fence it)."""
    forged = {"transactional.id": f"{kafka_security.CONNECT_GROUP}-orders-outbox-0"}
    with pytest.raises(KafkaException) as refused:
        produce(_config(settings, "tests", **forged), settings.topic)
    assert refused.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


@pytest.fixture
def scratch(settings: Settings) -> Iterator[str]:
    """A scratch topic of one partition holding one record, made by the tests principal."""
    name = f"ops-rights-{uuid.uuid4().hex[:10]}"
    admin = AdminClient(_config(settings, "tests"))
    admin.create_topics([NewTopic(name, num_partitions=1)])[name].result(timeout=30)
    try:
        assert produce(_config(settings, "tests"), name) is None
        yield name
    finally:
        admin.delete_topics([name])[name].result(timeout=30)


def test_ops_raises_partitions_and_moves_offsets_but_writes_nothing(
    settings: Settings, scratch: str
) -> None:
    admin = AdminClient(_config(settings, "ops"))
    admin.create_partitions([NewPartitions(scratch, 2)])[scratch].result(timeout=30)
    # The controller took it; on a cluster, the broker asked may learn it a moment later.
    wait_for(
        lambda: len(admin.list_topics(scratch, timeout=10).topics[scratch].partitions) == 2,
        what=f"{scratch}'s metadata with 2 partitions",
        timeout=30,
    )
    # A group's offsets, as `kafka-consumer-groups.sh --reset-offsets` moves them.
    group = f"ops-rights-{uuid.uuid4().hex[:10]}"
    mover = Consumer(_config(settings, "ops", **{"group.id": group}))
    try:
        mover.commit(offsets=[TopicPartition(scratch, 0, 1)], asynchronous=False)
        committed = mover.committed([TopicPartition(scratch, 0)], timeout=REFUSAL_TIMEOUT_S)
    finally:
        mover.close()
    assert [each.offset for each in committed] == [1]
    error = produce(_config(settings, "ops"), scratch)
    assert code_of(error) == KafkaError.TOPIC_AUTHORIZATION_FAILED, error
