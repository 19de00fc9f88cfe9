"""Command lines for the JVM components, each on its own classpath under .stack/lib.

Config files use paths relative to the repository root, which is every process's working
directory (supervisor's `directory=`), so they are used as they are in the repo.
"""

import subprocess
import uuid
from base64 import urlsafe_b64encode
from pathlib import Path

from onceflow import paths

CONTROLLER_PORT = 9093
LOG4J = Path("stack/jvm/log4j2.properties")
KAFKA_PROPERTIES = Path("stack/kafka/server.properties")
WORKER_PROPERTIES = Path("connect/worker.properties")


def _java(component: str, heap: str, main: str, *args: str) -> list[str]:
    return [
        "java",
        "-Xms256m",
        f"-Xmx{heap}",
        "-XX:+UseG1GC",
        "-XX:MaxGCPauseMillis=20",
        "-XX:+ExitOnOutOfMemoryError",
        "-Djava.awt.headless=true",
        f"-Dlog4j2.configurationFile={LOG4J}",
        "-cp",
        f"{paths.LIB / component}/*",
        main,
        *args,
    ]


def kafka_command() -> str:
    """The KRaft broker+controller."""
    return " ".join(_java("kafka", "1g", "kafka.Kafka", str(KAFKA_PROPERTIES)))


def connect_command() -> str:
    """The Kafka Connect distributed worker."""
    return " ".join(
        _java(
            "connect",
            "1g",
            "org.apache.kafka.connect.cli.ConnectDistributed",
            str(WORKER_PROPERTIES),
        )
    )


def format_kafka_storage() -> bool:
    """Format KRaft storage on first start only; the cluster id then lives in meta.properties."""
    if (paths.KAFKA_DATA / "meta.properties").exists():
        return False
    cluster_id = urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    subprocess.run(
        _java(
            "kafka",
            "256m",
            "kafka.tools.StorageTool",
            "format",
            "--config",
            str(KAFKA_PROPERTIES),
            "--cluster-id",
            cluster_id,
            "--standalone",
            "--ignore-formatted",
        ),
        cwd=paths.ROOT,
        check=True,
        capture_output=True,
    )
    return True
