"""Tunables of the aggregation job (`ONCEFLOW_AGG_*`).

docs/analytics.md says which of them may change without invalidating the checkpoint.
"""

from functools import lru_cache
from pathlib import Path
from typing import Literal, Self

from pydantic import model_validator

from onceflow import contract, paths
from onceflow.settings.topology import SINGLE_DATA, TopologySettings
from onceflow.topology import SINGLE

Fault = Literal[
    "",
    "crash_after_commit",
    "crash_mid_write",
    "crash_before_write",
    "lose_one_event",
    "duplicate_one_event",
    "crash_mid_isolation",
]


class AggregationSettings(TopologySettings):
    """Tunables of the PySpark aggregation job. Where it runs (master, memory, checkpoints)
    defaults to the topology's layout."""

    # Streaming: how often a micro-batch starts, and at most how many Kafka records one takes.
    agg_trigger_interval: str = "1 second"
    agg_max_offsets_per_trigger: int = 100_000
    # Backfill (availableNow from the earliest offset): larger batches amortise per-batch cost.
    agg_backfill_max_offsets_per_trigger: int = 250_000
    # Backfill: split the topic's partitions into at least this many Spark tasks (3 Kafka
    # partitions on 2 cores would otherwise leave a core idle for a third of every batch).
    agg_backfill_min_partitions: int = 8
    # A batch's offset range ends at the transaction's commit marker, which a read_committed
    # fetch never returns: the broker then holds the fetch for this long before the task moves
    # on (Kafka's default, 500 ms, was most of a small batch's time).
    agg_kafka_fetch_max_wait_ms: int = 50
    # On the machine's disk locally; on a cluster of machines, a path every node reaches
    # (HDFS, S3, NFS: docs/operations.md). Default: the topology's data folder.
    agg_checkpoint_dir: Path = SINGLE_DATA.spark_checkpoints / "aggregation"
    agg_backfill_checkpoint_root: Path = SINGLE_DATA.spark_checkpoints / "backfill"
    # Only used when the checkpoint is new; a restart resumes from the checkpoint's offsets.
    agg_starting_offsets: str = "earliest"
    # true: stop with an error if records we never read were deleted by retention (lost data).
    agg_fail_on_data_loss: bool = True

    # Records larger than this (bytes of the Kafka value) are dead letters ("oversized").
    agg_max_event_bytes: int = contract.MAX_EVENT_BYTES

    # Defaults: the topology's (local[*], or its standalone master in client mode).
    agg_spark_master: str = SINGLE.spark_master
    agg_driver_memory: str = SINGLE.memory.driver
    # Standalone only: each executor's heap and cores (one executor per worker core).
    agg_executor_memory: str = SINGLE.memory.executor
    agg_executor_cores: int = 1
    agg_shuffle_partitions: int = 4
    agg_ui_host: str = "127.0.0.1"
    # Where executors reach the driver (spark.driver.host); empty: agg_ui_host. On a cluster
    # (client mode) with agg_ui_host 0.0.0.0, this is the driver's hostname (compose: aggregation).
    agg_driver_host: str = ""
    agg_ui_port: int = 4040
    agg_ui_enabled: bool = True
    agg_spark_kafka_jars: Path = paths.LIB / "spark-kafka"

    # Postgres connections the driver may hold at once (micro-batches are applied one at a time;
    # each Spark task staging a batch opens its own, stage.py).
    agg_pg_max_connections: int = 2
    agg_pg_statement_timeout_ms: int = 120_000
    # Session memory of the job's connections: a backfill batch stages ~100 MB in temp tables
    # and sorts them; at Postgres' defaults (8 MB, 4 MB) both spill to disk.
    agg_pg_temp_buffers: str = "256MB"
    agg_pg_work_mem: str = "64MB"

    # TEST ONLY: kill the driver (os._exit) at a point of the sink to prove crash safety.
    # crash_after_commit: after the Postgres commit, before Spark commits the batch.
    # crash_mid_write: inside the Postgres transaction, after some upserts, before commit.
    # crash_before_write: after the executors staged the batch, before the fold transaction.
    # lose_one_event / duplicate_one_event: the first batch with new events counts one of them
    # not at all / twice (the oracles must notice: tests/integration/test_mutations.py).
    # crash_mid_isolation: while records the database refused are isolated, after a piece
    # applied under its savepoint, before commit (sink.py, isolate.py).
    fault: Fault = ""
    # The fault fires on the n-th batch with records that this process applies (1 = first).
    fault_after_batches: int = 1

    @property
    def on_standalone_cluster(self) -> bool:
        """The job is a client of a Spark standalone master, which asks for the cluster's shared
        secret (onceflow/settings/spark_auth.py); local[*] asks for none."""
        return self.agg_spark_master.startswith("spark://")

    @model_validator(mode="after")
    def _follow_topology(self) -> Self:
        checkpoints = self.data.spark_checkpoints
        self.default(
            agg_spark_master=self.layout.spark_master,
            agg_driver_memory=self.layout.memory.driver,
            agg_executor_memory=self.layout.memory.executor,
            agg_checkpoint_dir=checkpoints / "aggregation",
            agg_backfill_checkpoint_root=checkpoints / "backfill",
        )
        return self


@lru_cache
def get_aggregation_settings() -> AggregationSettings:
    """Return the job's settings, read once per process."""
    return AggregationSettings()
