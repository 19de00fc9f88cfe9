"""The job's SparkSession: UTC, Spark UI on a fixed port, its jars by path; local or, in the
cluster topology, a client of the standalone master (executors on its workers), authenticated
with the cluster's shared secret."""

import os
import sys
from pathlib import Path

from pyspark import SparkConf, SparkContext
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

from onceflow.paths import ROOT
from onceflow.settings import AggregationSettings
from onceflow.settings.spark_auth import get_spark_auth_settings
from spark_jobs.aggregation import event_check

LOG4J = ROOT / "spark_jobs" / "aggregation" / "log4j2.properties"


def job_jars(folder: Path) -> list[Path]:
    """The job's jars, by local path: Spark's Kafka source and the PostgreSQL JDBC driver the
    executors stage with (fetched by the stack from Maven Central), and the parser's EventCheck
    of the current source (built by the stack)."""
    current = event_check.jar_name()
    jars = sorted(
        j
        for j in folder.glob("*.jar")
        if not j.name.startswith(event_check.JAR_PREFIX) or j.name == current
    )  # another source's EventCheck (a stale jar) could win on the classpath
    for prefix in ("spark-sql-kafka", "postgresql", current):
        if not any(j.name.startswith(prefix) for j in jars):
            raise FileNotFoundError(
                f"The job's jars ({prefix}) are missing in {folder}: "
                "run `make up` (stack/fetch_jars.sh, stack/build_event_check.sh)"
            )
    return jars


def session_options(settings: AggregationSettings, app_name: str) -> dict[str, str]:
    """The driver's Spark settings, none of them a secret (PySpark puts each on the driver JVM's
    command line)."""
    java_options = f"-Dlog4j2.configurationFile=file:{LOG4J}"
    jars = job_jars(settings.agg_spark_kafka_jars)
    return {
        "spark.app.name": app_name,
        "spark.master": settings.agg_spark_master,
        "spark.driver.memory": settings.agg_driver_memory,
        "spark.driver.host": settings.agg_driver_host or settings.agg_ui_host,
        "spark.driver.bindAddress": settings.agg_ui_host,
        "spark.driver.extraJavaOptions": java_options,
        "spark.ui.enabled": str(settings.agg_ui_enabled).lower(),
        "spark.ui.port": str(settings.agg_ui_port),
        # Nobody stops a job or stage from the UI (docs/security.md): `make down` or supervisor.
        "spark.ui.killEnabled": "false",
        # No port hopping: a busy 4040 is an error, not a silent move to 4041.
        "spark.port.maxRetries": "0",
        # The checkpoint's files are the job's only: Hadoop's file system sets each file's mode
        # from its own umask (022 by default), not the process's (stack/private_data.py).
        "spark.hadoop.fs.permissions.umask-mode": "077",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": str(settings.agg_shuffle_partitions),
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.streaming.stopActiveRunOnRestart": "true",
        "spark.sql.streaming.stopTimeout": "60s",
        "spark.sql.streaming.metricsEnabled": "true",
        "spark.python.worker.reuse": "true",
        "spark.ui.showConsoleProgress": "false",
        # Standalone executors (ignored by local[*]): their size, this venv's Python for their
        # Python workers, and this checkout's modules on its path.
        "spark.executor.memory": settings.agg_executor_memory,
        "spark.executor.cores": str(settings.agg_executor_cores),
        "spark.pyspark.python": sys.executable,
        "spark.executorEnv.PYTHONPATH": str(ROOT),
        "spark.jars": ",".join(str(j) for j in jars),
    }


def build_session(settings: AggregationSettings, app_name: str) -> SparkSession:
    """Create (or return) the process's SparkSession; on a standalone master, authenticated."""
    # The Spark UI binds to SPARK_LOCAL_IP (default: every interface); keep it on loopback.
    os.environ["SPARK_LOCAL_IP"] = settings.agg_ui_host
    options = session_options(settings, app_name)
    if settings.on_standalone_cluster and SparkSession.getActiveSession() is None:
        start_authenticated(options, get_spark_auth_settings().spark_conf())
    builder = SparkSession.builder
    for key, value in options.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    event_check.register(session)
    return session


def start_authenticated(options: dict[str, str], secret: dict[str, str]) -> SparkContext:
    """Start the driver with `options` plus `secret`, keeping the secret off every command line:
    PySpark starts the driver's JVM with each setting as a `--conf` argument, which
    /proc/PID/cmdline shows every user of the host. So the JVM starts with `options` only, and
    the secret reaches its SparkConf through the Py4J gateway before the SparkContext (and with it
    the connection to the master) is made; the builder's getOrCreate() then uses that context."""
    public = SparkConf(loadDefaults=False).setAll(list(options.items()))
    # A JVM this process started before (a session since stopped) is used again, as PySpark does.
    gateway = SparkContext._gateway or launch_gateway(public)  # type: ignore[no-untyped-call]
    return SparkContext(conf=public.setAll(list(secret.items())), gateway=gateway)
