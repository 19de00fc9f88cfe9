"""docs/security.md's Kafka commands work as written on the running stack: each line of the "use
them" block (Kafka's tools as ops, stack.peek, a Python client from client_config, the
idempotent `onceflow-stack kafka-sasl`), and the rotation's step that sets a password in Kafka,
run with the password unchanged."""

import re

import pytest

from onceflow import paths
from onceflow.settings.kafka_auth import KafkaAuthSettings
from tests.e2e.doc_commands import commands, run, section, without_comment

SECURITY = (paths.ROOT / "docs" / "security.md").read_text()
KAFKA = section(SECURITY, "Kafka: principals and ACLs", 2).text
USE = KAFKA.split("**Use them.**", 1)[1].split("**Switching", 1)[0]
ROTATE = KAFKA.split("**Rotating a principal's password.**", 1)[1]
OPS = "--bootstrap-server 127.0.0.1:9092 --command-config .stack/secrets/kafka/ops.properties"
# command -> what its stdout must match (MULTILINE)
CHECKS = {
    f".stack/bin/kafka-topics.sh {OPS} --list": r"^outbox\.event\.order$",
    f".stack/bin/kafka-consumer-groups.sh {OPS} --describe --group onceflow-notifications": (
        r"^onceflow-notifications\s+outbox\.event\.order\s+\d+\s+\d+"
    ),
    ".venv/bin/python -m stack.peek --last 1": r"^p\d+@\d+ key=",
    ".venv/bin/python -c 'from confluent_kafka.admin import AdminClient; from "
    "onceflow.settings.kafka_auth import client_config; print(sorted(AdminClient(client_config("
    '"127.0.0.1:9092", "ops")).list_topics(timeout=10).topics))\'': r"'outbox\.event\.order'",
    ".venv/bin/onceflow-stack kafka-sasl": r"^Kafka already asked for SASL",
}
SETS_IN_KAFKA = "kafka_security.upsert_user("


def test_every_use_has_a_check() -> None:
    assert {without_comment(c) for c in commands(USE)} == set(CHECKS)


@pytest.mark.parametrize("command", list(CHECKS))
def test_a_use_works_as_written(command: str) -> None:
    result = run(command, timeout=90)
    assert result.returncode == 0, str(result)
    assert re.search(CHECKS[command], result.stdout, re.MULTILINE), str(result)


def test_the_rotations_step_in_kafka_runs() -> None:
    """The step that sets ops's password in Kafka and re-renders the files, with the file's
    password as it is (so nothing changes for the running programs)."""
    blocks = re.findall(r"^```text\n(.*?)^```$", ROTATE, re.MULTILINE | re.DOTALL)
    (step,) = [line for block in blocks for line in block.splitlines() if SETS_IN_KAFKA in line]
    password = KafkaAuthSettings(kafka_principal=None).password("ops")
    properties = (paths.SECRETS / "kafka" / "ops.properties").read_text()
    result = run(step, timeout=90)
    assert result.returncode == 0, str(result)
    assert KafkaAuthSettings(kafka_principal=None).password("ops") == password
    assert (paths.SECRETS / "kafka" / "ops.properties").read_text() == properties
