"""Which broker does what in the cluster: partition leaders, replicas in sync, transaction
coordinators (read from the cluster's metadata, never assumed)."""

from confluent_kafka.admin import AdminClient

from onceflow import paths
from onceflow.settings.kafka_auth import client_config
from stack import node_configs


def _worker_group() -> str:
    return node_configs.properties((paths.ROOT / node_configs.WORKER_TEMPLATE).read_text())[
        "group.id"
    ]


def admin(bootstrap: str) -> AdminClient:
    return AdminClient(client_config(bootstrap, "tests"))


def leader_of(bootstrap: str, topic: str, partition: int) -> int:
    """The node id leading one partition."""
    metadata = admin(bootstrap).list_topics(topic, timeout=10)
    return int(metadata.topics[topic].partitions[partition].leader)


def fully_replicated(bootstrap: str, replicas: int = 3) -> bool:
    """Every partition of every topic (internal ones included) has a leader and all `replicas`
    in sync: the cluster is back to full strength after a node returned."""
    try:
        metadata = admin(bootstrap).list_topics(timeout=5)
    except Exception:  # a broker restarting answers nothing for a moment
        return False
    if len(metadata.brokers) < replicas:
        return False
    return all(
        p.leader >= 0 and len(p.isrs) == replicas
        for t in metadata.topics.values()
        for p in t.partitions.values()
    )


def java_hash(text: str) -> int:
    """java.lang.String#hashCode, as a signed 32-bit int."""
    h = 0
    for unit in text.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def transaction_coordinator(bootstrap: str, transactional_id: str) -> int:
    """The node coordinating a transactional id: the leader of its partition of
    __transaction_state, abs(hashCode) % that topic's partition count (Kafka's
    TransactionStateManager#partitionFor)."""
    state = admin(bootstrap).list_topics("__transaction_state", timeout=10)
    partitions = state.topics["__transaction_state"].partitions
    h = java_hash(transactional_id)
    partition = (0 if h == -(2**31) else abs(h)) % len(partitions)  # Kafka's Utils.abs
    return int(partitions[partition].leader)


def connector_transactional_id(connector: str, task: int = 0) -> str:
    """The transactional id of an exactly-once source task (KIP-618:
    "<worker group.id>-<connector>-<task>", Connect's Worker#taskTransactionalId)."""
    return f"{_worker_group()}-{connector}-{task}"
