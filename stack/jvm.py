"""Command lines for the JVM components (Kafka broker, Kafka Connect worker), each on its own classpath."""

import subprocess
from pathlib import Path

from stack import paths

CONTROLLER_PORT = 9093
LOG4J = paths.ROOT / "stack" / "jvm" / "log4j2.properties"
KAFKA_PROPERTIES = paths.ROOT / "stack" / "kafka" / "server.properties"
WORKER_PROPERTIES = paths.ROOT / "connect" / "worker.properties"


def _java(classpath: Path, heap: str, main: str, *args: str) -> str:
    return (
        f"java -Xms256m -Xmx{heap} -XX:+UseG1GC -Djava.awt.headless=true "
        f"-Dlog4j2.configurationFile={LOG4J} -cp '{classpath}/*' {main} {' '.join(args)}"
    )


def rendered_kafka_properties() -> Path:
    """server.properties with the stack's data folder filled in."""
    target = paths.CONF / "server.properties"
    text = KAFKA_PROPERTIES.read_text().replace("@KAFKA_DATA@", str(paths.KAFKA_DATA))
    target.write_text(text)
    return target


def rendered_worker_properties() -> Path:
    """worker.properties with the plugin folder filled in."""
    target = paths.CONF / "worker.properties"
    target.write_text(WORKER_PROPERTIES.read_text().replace("@PLUGINS@", str(paths.PLUGINS)))
    return target


def kafka_command() -> str:
    """The KRaft broker+controller."""
    return _java(paths.LIB / "kafka", "1g", "kafka.Kafka", str(paths.CONF / "server.properties"))


def connect_command() -> str:
    """The Kafka Connect distributed worker."""
    return _java(
        paths.LIB / "connect",
        "1g",
        "org.apache.kafka.connect.cli.ConnectDistributed",
        str(paths.CONF / "worker.properties"),
    )


def format_kafka_storage() -> bool:
    """Format KRaft storage once (standalone controller); True when it was formatted now."""
    if (paths.KAFKA_DATA / "meta.properties").exists():
        return False
    paths.KAFKA_DATA.mkdir(parents=True, exist_ok=True)
    cluster_id = subprocess.run(
        ["java", "-cp", f"{paths.LIB / 'kafka'}/*", "kafka.tools.StorageTool", "random-uuid"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    subprocess.run(
        [
            "java", f"-Dlog4j2.configurationFile={LOG4J}", "-cp", f"{paths.LIB / 'kafka'}/*",
            "kafka.tools.StorageTool", "format", "--standalone",
            "-t", cluster_id, "-c", str(rendered_kafka_properties()),
        ],
        check=True, capture_output=True,
    )
    return True
