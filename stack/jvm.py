"""Command lines for the JVM components, each on its own classpath under .stack/lib.

Each Kafka node and Connect worker reads its properties rendered into .stack/conf
(stack/node_configs.py); relative paths in them resolve against the repository root, every
process's working directory (supervisor's `directory=`).
"""

import subprocess
import uuid
from base64 import urlsafe_b64encode
from pathlib import Path

from onceflow import paths
from onceflow.settings.kafka_auth import KafkaAuthSettings
from onceflow.topology import Layout
from stack import kafka_security, ops_secret
from stack.node_configs import config_path

LOG4J = Path("stack/jvm/log4j2.properties")
# The Prometheus JMX exporter agent (stack/jvm/jmx/pom.xml) and its rules per JVM.
JMX_AGENT = paths.LIB / "jmx" / "jmx_prometheus_javaagent.jar"
JMX_RULES = Path("observability/jmx")


def jmx_agent(port: int, rules: str) -> str:
    """The -javaagent option serving this JVM's metrics on 127.0.0.1:port, per `rules`."""
    return f"-javaagent:{JMX_AGENT}=127.0.0.1:{port}:{JMX_RULES / rules}"


def _java(
    component: str,
    heap: str,
    main: str,
    *args: str,
    agent: str | None = None,
    options: tuple[str, ...] = (),
) -> list[str]:
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
        *options,
        "-cp",
        f"{paths.LIB / component}/*",
        main,
        *args,
    ]


def kafka_command(program: str, heap: str, jmx_port: int | None) -> str:
    """A KRaft node (broker + controller), its metrics on 127.0.0.1:jmx_port (None: no agent)."""
    return " ".join(
        _java(
            "kafka",
            heap,
            "kafka.Kafka",
            str(config_path(program)),
            agent=jmx_agent(jmx_port, "kafka.yml") if jmx_port else None,
        )
    )


def connect_command(program: str, heap: str, jmx_port: int | None) -> str:
    """A Kafka Connect distributed worker, its (and Debezium's) metrics on 127.0.0.1:jmx_port
    (None: no agent)."""
    return " ".join(
        _java(
            "connect",
            heap,
            "org.apache.kafka.connect.cli.ConnectDistributed",
            str(config_path(program)),
            agent=jmx_agent(jmx_port, "connect.yml") if jmx_port else None,
            # The REST API's HTTP Basic logins (BasicAuthSecurityRestExtension).
            options=(f"-Djava.security.auth.login.config={ops_secret.CONNECT_JAAS}",),
        )
    )


def _cluster_id(meta: Path) -> str | None:
    for line in meta.read_text().splitlines() if meta.exists() else []:
        if line.startswith("cluster.id="):
            return line.split("=", 1)[1].strip()
    return None


def format_kafka_storage(layout: Layout, auth: KafkaAuthSettings | None = None) -> list[str]:
    """Format each node's KRaft storage on its first start only, every node with the cluster id
    the others already have (the id then lives in each meta.properties); return the nodes
    formatted. One node forms its own quorum (--standalone); several use the static quorum
    of their properties."""
    data = paths.data_dirs(layout.data_folder)
    metas = [data.kafka(node.program) / "meta.properties" for node in layout.kafka]
    known = [cluster_id for meta in metas if (cluster_id := _cluster_id(meta))]
    cluster_id = known[0] if known else urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    auth = auth or KafkaAuthSettings()
    # With SASL, the broker principal's SCRAM credential goes into the metadata at format time.
    scram = (
        kafka_security.format_arguments(auth.password(kafka_security.BROKER))
        if auth.kafka_sasl
        else []
    )
    formatted = []
    for node, meta in zip(layout.kafka, metas, strict=True):
        if meta.exists():
            continue
        standalone = ["--standalone"] if len(layout.kafka) == 1 else []
        done = subprocess.run(
            _java(
                "kafka",
                "256m",
                "kafka.tools.StorageTool",
                "format",
                "--config",
                str(config_path(node.program)),
                # One argument: an id may start with "-" (URL-safe base64), which the tool's
                # parser would take for an option.
                f"--cluster-id={cluster_id}",
                *standalone,
                *scram,
                "--ignore-formatted",
            ),
            cwd=paths.ROOT,
            check=False,
            capture_output=True,
        )
        if done.returncode != 0:
            # Not CalledProcessError: its message is the whole argv, which holds the broker
            # principal's password (--add-scram) when SASL is on.
            raise RuntimeError(
                f"formatting the storage of {node.program} failed (exit {done.returncode}): "
                f"{done.stderr.decode(errors='replace').strip()[-2000:]}"
            )
        if scram:
            kafka_security.mark_credentials(data.kafka(node.program))
        formatted.append(node.program)
    return formatted
