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
# The Prometheus JMX exporter agent (stack/jvm/jmx/pom.xml) and its rules per JVM.
JMX_AGENT = paths.LIB / "jmx" / "jmx_prometheus_javaagent.jar"
JMX_RULES = Path("observability/jmx")


def jmx_agent(port: int, rules: str) -> str:
    """The -javaagent option serving this JVM's metrics on 127.0.0.1:port, per `rules`."""
    return f"-javaagent:{JMX_AGENT}=127.0.0.1:{port}:{JMX_RULES / rules}"


def _java(component: str, heap: str, main: str, *args: str, agent: str | None = None) -> list[str]:
    return [
        "java",
        "-Xms256m",
        f"-Xmx{heap}",
        "-XX:+UseG1GC",
        "-XX:MaxGCPauseMillis=20",
        "-XX:+ExitOnOutOfMemoryError",
        "-Djava.awt.headless=true",
        f"-Dlog4j2.configurationFile={LOG4J}",
        *([agent] if agent else []),
        "-cp",
        f"{paths.LIB / component}/*",
        main,
        *args,
    ]


def kafka_command(jmx_port: int | None) -> str:
    """The KRaft broker+controller, its metrics on 127.0.0.1:jmx_port (None: no agent)."""
    return " ".join(
        _java(
            "kafka",
            "1g",
            "kafka.Kafka",
            str(KAFKA_PROPERTIES),
            agent=jmx_agent(jmx_port, "kafka.yml") if jmx_port else None,
        )
    )


def connect_command(jmx_port: int | None) -> str:
    """The Kafka Connect distributed worker, its (and Debezium's) metrics on 127.0.0.1:jmx_port
    (None: no agent)."""
    return " ".join(
        _java(
            "connect",
            "1g",
            "org.apache.kafka.connect.cli.ConnectDistributed",
            str(WORKER_PROPERTIES),
            agent=jmx_agent(jmx_port, "connect.yml") if jmx_port else None,
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
