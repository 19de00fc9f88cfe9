"""The node layout of each topology (`ONCEFLOW_TOPOLOGY`, contract sections 2 and 7): which
nodes run, on which loopback ports, in which data folder, with which memory. Pure data: the
settings take their defaults from it, `stack/` renders every node's config and command from it.

`single` is one Kafka node, one Connect worker and Spark `local[*]`; `cluster` is three KRaft
nodes (broker + controller each), two Connect workers and a Spark standalone master with two
workers. Node n of a kind is the first node's ports plus (n - 1) steps.
"""

from dataclasses import dataclass
from enum import StrEnum

HOST = "127.0.0.1"
KAFKA_PORT, CONTROLLER_PORT, KAFKA_PORT_STEP = 9092, 9093, 100
CONNECT_PORT = 8083
# Node n's JMX exporter listens on the setting's port (kafka_jmx_port, connect_jmx_port) + this
# step times (n - 1).
JMX_PORT_STEP = 10
SPARK_MASTER_PORT, SPARK_MASTER_UI_PORT, SPARK_WORKER_UI_PORT = 7077, 8080, 8081
# Cluster only: each program below runs under a group id of its own (its kind's base plus its
# number, `stack/supervisor.py` starts it with setpriv, still as root), which the network-fault
# rules match as the sender of a packet (nftables `meta skgid`, tests/faults): on loopback every
# node sends from 127.0.0.1, so no address tells kafka-1's packets from kafka-3's.
NETWORK_GROUPS = {
    "kafka": 2610,
    "connect": 2620,
    "spark-master": 2630,
    "spark-worker": 2630,
    "aggregation": 2640,
    "notifications": 2650,
    "api": 2660,
}


class Topology(StrEnum):
    """How many nodes of each kind run."""

    SINGLE = "single"
    CLUSTER = "cluster"


@dataclass(frozen=True)
class KafkaNode:
    """A KRaft node: broker and controller in one process."""

    program: str
    node_id: int
    port: int
    controller_port: int
    jmx_offset: int

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    def jmx_port(self, base: int) -> int:
        return base + self.jmx_offset


@dataclass(frozen=True)
class ConnectWorker:
    """A Kafka Connect distributed worker (all of a topology's workers form one group)."""

    program: str
    port: int
    jmx_offset: int

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def jmx_port(self, base: int) -> int:
        return base + self.jmx_offset


@dataclass(frozen=True)
class SparkWorker:
    program: str
    ui_port: int

    @property
    def ui(self) -> str:
        return f"http://{HOST}:{self.ui_port}"


@dataclass(frozen=True)
class SparkCluster:
    """A Spark standalone master and its workers, one core each."""

    workers: tuple[SparkWorker, ...]
    program: str = "spark-master"
    port: int = SPARK_MASTER_PORT
    ui_port: int = SPARK_MASTER_UI_PORT

    @property
    def url(self) -> str:
        return f"spark://{HOST}:{self.port}"

    @property
    def ui(self) -> str:
        return f"http://{HOST}:{self.ui_port}"


@dataclass(frozen=True)
class Memory:
    """The memory budget of the JVMs (docs/operations.md has the table with every process)."""

    kafka_heap: str
    connect_heap: str
    driver: str
    # Spark standalone only: the master's and workers' own heap, what each worker offers its
    # executors, and each executor's heap (it must fit in the worker's offer).
    spark_daemon_heap: str = "256m"
    spark_worker_offer: str = "1g"
    executor: str = "768m"


@dataclass(frozen=True)
class Layout:
    """Every node of one topology, its data folder (under .stack/) and its replication."""

    topology: Topology
    kafka: tuple[KafkaNode, ...]
    connect: tuple[ConnectWorker, ...]
    spark: SparkCluster | None
    data_folder: str
    replication_factor: int
    min_insync_replicas: int
    memory: Memory
    # How long the Connect group waits for a departed worker before giving its tasks to others.
    rebalance_delay_ms: int

    @property
    def bootstrap(self) -> str:
        return ",".join(node.address for node in self.kafka)

    @property
    def connect_url(self) -> str:
        return self.connect[0].url

    @property
    def quorum_voters(self) -> str:
        return ",".join(f"{n.node_id}@{HOST}:{n.controller_port}" for n in self.kafka)

    @property
    def spark_master(self) -> str:
        return self.spark.url if self.spark else "local[*]"

    def network_group(self, program: str) -> int | None:
        """The group id a program's packets carry (NETWORK_GROUPS); None on the single
        topology and for programs that need none."""
        if self.topology is Topology.SINGLE:
            return None
        kind, _, number = program.rpartition("-")
        if not number.isdigit():
            kind, number = program, "0"
        base = NETWORK_GROUPS.get(kind)
        return None if base is None else base + int(number)


def _kafka_node(n: int, count: int) -> KafkaNode:
    step = KAFKA_PORT_STEP * (n - 1)
    return KafkaNode(
        program="kafka" if count == 1 else f"kafka-{n}",
        node_id=n,
        port=KAFKA_PORT + step,
        controller_port=CONTROLLER_PORT + step,
        jmx_offset=JMX_PORT_STEP * (n - 1),
    )


def _connect_worker(n: int, count: int) -> ConnectWorker:
    return ConnectWorker(
        program="connect" if count == 1 else f"connect-{n}",
        port=CONNECT_PORT + n - 1,
        jmx_offset=JMX_PORT_STEP * (n - 1),
    )


def layout(topology: Topology) -> Layout:
    """The layout of a topology."""
    if topology is Topology.SINGLE:
        return Layout(
            topology=topology,
            kafka=(_kafka_node(1, 1),),
            connect=(_connect_worker(1, 1),),
            spark=None,
            data_folder="data",
            replication_factor=1,
            min_insync_replicas=1,
            memory=Memory(kafka_heap="1g", connect_heap="1g", driver="1g"),
            # One worker: after a crash, give its tasks back at once.
            rebalance_delay_ms=0,
        )
    return Layout(
        topology=topology,
        kafka=tuple(_kafka_node(n, 3) for n in (1, 2, 3)),
        connect=tuple(_connect_worker(n, 2) for n in (1, 2)),
        spark=SparkCluster(
            workers=tuple(
                SparkWorker(f"spark-worker-{n}", SPARK_WORKER_UI_PORT + n - 1) for n in (1, 2)
            )
        ),
        data_folder="data-cluster",
        replication_factor=3,
        min_insync_replicas=2,
        memory=Memory(kafka_heap="512m", connect_heap="768m", driver="1g"),
        # Long enough to ride out a restart, short enough that a dead worker's task moves soon.
        rebalance_delay_ms=10_000,
    )


# The default topology's layout: the settings' static defaults (what .env.example shows).
SINGLE = layout(Topology.SINGLE)
