"""The job's SparkSession: UTC, Spark UI on a fixed port, its jars by path; local or, in the
cluster topology, a client of the standalone master (executors on its workers)."""

import os
import sys
from pathlib import Path

from pyspark.sql import SparkSession

from onceflow.paths import ROOT
from onceflow.settings import AggregationSettings

LOG4J = ROOT / "spark_jobs" / "aggregation" / "log4j2.properties"


def job_jars(folder: Path) -> list[Path]:
    """The job's jars, by local path: Spark's Kafka source and the PostgreSQL JDBC driver the
    executors stage with (fetched by the stack from Maven Central)."""
    jars = sorted(folder.glob("*.jar"))
    for prefix in ("spark-sql-kafka", "postgresql"):
        if not any(j.name.startswith(prefix) for j in jars):
            raise FileNotFoundError(
                f"The job's jars ({prefix}) are missing in {folder}: "
                "run `make up` (stack/fetch_jars.sh)"
            )
    return jars


def build_session(settings: AggregationSettings, app_name: str) -> SparkSession:
    """Create (or return) the process's SparkSession."""
    # The Spark UI binds to SPARK_LOCAL_IP (default: every interface); keep it on loopback.
    os.environ["SPARK_LOCAL_IP"] = settings.agg_ui_host
    java_options = f"-Dlog4j2.configurationFile=file:{LOG4J}"
    builder = (
        SparkSession.builder.appName(app_name)
        .master(settings.agg_spark_master)
        .config("spark.driver.memory", settings.agg_driver_memory)
        .config("spark.driver.host", settings.agg_driver_host or settings.agg_ui_host)
        .config("spark.driver.bindAddress", settings.agg_ui_host)
        .config("spark.driver.extraJavaOptions", java_options)
        .config("spark.ui.enabled", str(settings.agg_ui_enabled).lower())
        .config("spark.ui.port", str(settings.agg_ui_port))
        # Nobody stops a job or stage from the UI (docs/security.md): `make down` or supervisor.
        .config("spark.ui.killEnabled", "false")
        # No port hopping: a busy 4040 is an error, not a silent move to 4041.
        .config("spark.port.maxRetries", "0")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", str(settings.agg_shuffle_partitions))
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.streaming.stopActiveRunOnRestart", "true")
        .config("spark.sql.streaming.stopTimeout", "60s")
        .config("spark.sql.streaming.metricsEnabled", "true")
        .config("spark.python.worker.reuse", "true")
        .config("spark.ui.showConsoleProgress", "false")
        # Standalone executors (ignored by local[*]): their size, this venv's Python for their
        # Python workers, and this checkout's modules on its path.
        .config("spark.executor.memory", settings.agg_executor_memory)
        .config("spark.executor.cores", str(settings.agg_executor_cores))
        .config("spark.pyspark.python", sys.executable)
        .config("spark.executorEnv.PYTHONPATH", str(ROOT))
    )
    jars = job_jars(settings.agg_spark_kafka_jars)
    builder = builder.config("spark.jars", ",".join(str(j) for j in jars))
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    return session
