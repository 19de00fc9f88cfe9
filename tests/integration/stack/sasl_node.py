"""A Kafka node of its own (free ports, a given folder) rendered as `make up` renders one with
SASL on: its storage formatted with the broker principal's SCRAM credential, every other
principal and the ACL table created through the Admin API. For the ACL tests and the SASL
benchmark (bench/kafka_auth_bench.py), so the running stack is untouched."""

import os
import socket
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from onceflow import paths
from onceflow.settings import NotificationSettings, Settings
from onceflow.settings.kafka_auth import PRINCIPALS, KafkaAuthSettings
from onceflow.topology import HOST, KafkaNode
from stack import jvm, kafka_security
from stack.node_configs import KAFKA_TEMPLATE, render
from stack.waiting import wait_for


@dataclass(frozen=True)
class Node:
    bootstrap: str
    auth: KafkaAuthSettings
    pid: int
    # The PLAINTEXT listener's address (no authentication; its anonymous principal is a super
    # user), when asked for.
    open_bootstrap: str | None = None

    def config(self, principal: str | None, **extra: Any) -> dict[str, Any]:
        base: dict[str, Any] = (
            self.auth.client_config(self.bootstrap, principal)
            if principal
            else {"bootstrap.servers": self.bootstrap}
        )
        return {**base, "log_level": 0, **extra}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def java(main: str, *args: str) -> list[str]:
    return [
        "java",
        "-Xms128m",
        "-Xmx384m",
        "-XX:+UseSerialGC",
        f"-Dlog4j2.configurationFile={jvm.LOG4J}",
        "-cp",
        f"{paths.LIB / 'kafka'}/*",
        main,
        *args,
    ]


def admin_answers(admin: AdminClient) -> bool:
    try:
        return bool(admin.list_topics(timeout=3).brokers)
    except KafkaException:
        return False


@contextmanager
def sasl_node(folder: Path, *, with_open_listener: bool = False) -> Iterator[Node]:
    """Start the node in `folder`, yield it once every principal and ACL exists, stop it."""
    # Each client as the principal it names (not the suites' `tests`, tests/conftest.py).
    auth = KafkaAuthSettings(
        kafka_sasl=True, kafka_password_dir=folder / "secrets", kafka_principal=None
    )
    assert set(kafka_security.ensure_passwords(auth)) == set(PRINCIPALS)
    port, controller, open_port = free_port(), free_port(), free_port()
    kafka = KafkaNode("kafka", 1, port, controller, 0)
    password = auth.password(kafka_security.BROKER)
    security = (
        kafka_security.migration_overrides(kafka, password, open_port)
        if with_open_listener
        else kafka_security.node_overrides(kafka, password)
    )
    overrides = {
        "controller.quorum.bootstrap.servers": f"{HOST}:{controller}",
        "log.dirs": str(folder / "data"),
        "transaction.state.log.num.partitions": "3",
        "offsets.topic.num.partitions": "3",
        **security,
    }
    template = (paths.ROOT / KAFKA_TEMPLATE).read_text()
    properties = folder / "server.properties"
    properties.write_text(render(template, overrides, source=KAFKA_TEMPLATE))
    subprocess.run(
        java(
            "kafka.tools.StorageTool",
            "format",
            "--config",
            str(properties),
            f"--cluster-id={uuid.uuid4().hex[:22]}",
            "--standalone",
            *kafka_security.format_arguments(password),
        ),
        cwd=paths.ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )
    log = (folder / "kafka.log").open("w")
    process = subprocess.Popen(
        java("kafka.Kafka", str(properties)), cwd=paths.ROOT, stdout=log, stderr=log
    )
    try:
        admin = kafka_security.admin(kafka.address, auth)
        wait_for(lambda: admin_answers(admin), timeout=120, what="the SASL node answers")
        clients = {p for p in PRINCIPALS if p != kafka_security.BROKER}
        assert set(kafka_security.ensure_users(admin, auth)) == clients
        assert kafka_security.ensure_users(admin, auth) == []  # idempotent
        kafka_security.ensure_acls(admin, kafka_security.grants(Settings(), NotificationSettings()))
        opened = f"{HOST}:{open_port}" if with_open_listener else None
        yield Node(kafka.address, auth, process.pid, opened)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def pid_cpu_seconds(pid: int) -> float:
    """A process's user + system CPU seconds so far, as the kernel counts them."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")
