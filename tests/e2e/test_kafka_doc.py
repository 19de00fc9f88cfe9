"""docs/security.md's Kafka commands work as written on the running stack: each line of the "use
them" block (Kafka's tools as ops, stack.peek, a Python client from client_config, the
idempotent `onceflow-stack kafka-sasl`). The rotation (it restarts programs) is not run here:
tests/unit/stack/test_kafka_security.py covers its refusals."""

import pytest

from onceflow import paths
from tests.e2e.doc_commands import assert_works, commands, run, section, without_comment

SECURITY = (paths.ROOT / "docs" / "security.md").read_text()
KAFKA = section(SECURITY, "Kafka: principals and ACLs", 2).text
USE = KAFKA.split("**Use them.**", 1)[1].split("**Switching", 1)[0]
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


def test_every_use_has_a_check() -> None:
    assert {without_comment(c) for c in commands(USE)} == set(CHECKS)


@pytest.mark.parametrize("command", list(CHECKS))
def test_a_use_works_as_written(command: str) -> None:
    assert_works(run(command, timeout=90), CHECKS[command])
