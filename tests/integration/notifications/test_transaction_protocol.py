"""The brokers the processor writes to run Kafka 4's transaction protocol v2 (KIP-890):
`transaction.version` finalized at 2 or more on every broker of the running topology, and
the server-side partition verification that closes the hanging-transaction hole is on."""

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource

from onceflow.settings import get_settings
from onceflow.settings.kafka_auth import client_config
from tests.integration.notifications.features import finalized_features

pytestmark = pytest.mark.integration
BROKERS = get_settings().kafka_bootstrap.split(",")


@pytest.mark.parametrize("broker", BROKERS)
def test_transaction_version_2_is_finalized(broker: str) -> None:
    host, port = broker.rsplit(":", 1)
    features = finalized_features(host, int(port))
    assert "metadata.version" in features, f"no finalized features read: {features}"
    assert features.get("transaction.version", 0) >= 2, features


def test_every_broker_verifies_transactional_partitions() -> None:
    admin = AdminClient(client_config(get_settings().kafka_bootstrap, "tests"))
    nodes = admin.describe_cluster(request_timeout=30).result().nodes
    assert len(nodes) == len(BROKERS)
    for node in nodes:
        resource = ConfigResource(ConfigResource.Type.BROKER, str(node.id))
        (future,) = admin.describe_configs([resource], request_timeout=30).values()
        config = future.result()
        assert config["transaction.partition.verification.enable"].value == "true"
