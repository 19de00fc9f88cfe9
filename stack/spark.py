"""The Spark standalone cluster of the cluster topology: a master and its workers, started
with `spark-class` (the pip wheel of pyspark has no start scripts), on loopback only. Each asks
every peer for the shared secret (spark.authenticate), read from its 0600 properties file
(stack/spark_secret.py); a worker hands it to its executors in their environment (Spark's
`_SPARK_AUTH_SECRET`), never on a command line."""

import importlib.util
from pathlib import Path
from typing import Any

import httpx

from onceflow import paths
from onceflow.topology import HOST, Memory, SparkCluster, SparkWorker
from stack.spark_secret import DAEMON_PROPERTIES


def spark_class() -> Path:
    """pyspark's `spark-class` launcher, in the venv that runs the stack."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise RuntimeError("pyspark is not installed in the stack's venv: run `make up`.")
    return Path(spec.origin).parent / "bin" / "spark-class"


def master_command(spark: SparkCluster) -> str:
    return (
        f"{spark_class()} org.apache.spark.deploy.master.Master"
        f" --host {HOST} --port {spark.port} --webui-port {spark.ui_port}"
        f" --properties-file {DAEMON_PROPERTIES}"
    )


def worker_command(spark: SparkCluster, worker: SparkWorker, memory: Memory, work: Path) -> str:
    return (
        f"{spark_class()} org.apache.spark.deploy.worker.Worker {spark.url}"
        f" --host {HOST} --cores 1 --memory {memory.spark_worker_offer}"
        f" --webui-port {worker.ui_port} --work-dir {work}"
        f" --properties-file {DAEMON_PROPERTIES}"
    )


def daemon_env(memory: Memory) -> tuple[tuple[str, str], ...]:
    """The environment of the master and the workers (and so of the executors they start)."""
    return (
        # Every Spark port (RPC, UIs, block managers) on loopback.
        ("SPARK_LOCAL_IP", HOST),
        ("SPARK_DAEMON_MEMORY", memory.spark_daemon_heap),
        ("PYSPARK_PYTHON", str(paths.VENV_BIN / "python")),
        # No REST submission server (port 6066): the job connects as a client; no kill links
        # in the master's UI.
        ("SPARK_MASTER_OPTS", "-Dspark.master.rest.enabled=false -Dspark.ui.killEnabled=false"),
        # Finished applications' files in the work dirs are deleted after a day.
        (
            "SPARK_WORKER_OPTS",
            "-Dspark.worker.cleanup.enabled=true -Dspark.worker.cleanup.appDataTtl=86400",
        ),
    )


def master_state(spark: SparkCluster) -> dict[str, Any]:
    """The master's JSON status (workers, active applications)."""
    # /json answers with a redirect to /json/.
    state: dict[str, Any] = httpx.get(f"{spark.ui}/json/", timeout=2).json()
    return state


def worker_alive(spark: SparkCluster, worker: SparkWorker) -> bool:
    """True when the master lists this worker (by its UI address) as ALIVE."""
    return any(
        each.get("webuiaddress") == worker.ui and each.get("state") == "ALIVE"
        for each in master_state(spark).get("workers", [])
    )
