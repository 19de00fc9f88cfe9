"""A hop's verdict and the sentence a failed fact becomes (services/ops/overview.py)."""

import psycopg
from confluent_kafka import KafkaError, KafkaException

from services.ops.connect_api import ConnectError
from services.ops.overview import Hop, why
from stack.checks import Checked
from stack.health import Process


def test_a_hop_is_healthy_only_when_processes_work_facts_are_read_and_none_is_wrong() -> None:
    hop = Hop("connector", ["connect"])
    hop.processes = {"connect": Checked(Process("RUNNING", 60.0, 0), None)}
    hop.facts["connector"] = {"state": "RUNNING", "tasks": [{"id": 0, "state": "RUNNING"}]}
    assert hop.healthy
    hop.facts["connector"]["state"] = "PAUSED"
    assert hop.trouble == ["the connector or a task is not RUNNING"]
    assert not hop.as_dict()["healthy"]


def test_an_unreadable_fact_or_a_frozen_process_makes_the_hop_unhealthy() -> None:
    hop = Hop("notifications", ["notifications-2"])
    hop.processes = {"notifications-2": Checked(Process("RUNNING", 60.0, 0), "did not answer")}
    assert not hop.healthy
    hop = Hop("topic", [], unavailable={"topic": "Kafka is unreachable"})
    assert not hop.healthy


def test_a_hop_not_built_has_no_verdict() -> None:
    assert Hop("reconciliation", [], built=False).as_dict()["healthy"] is None


def test_failures_are_sentences() -> None:
    kafka = KafkaException(KafkaError(KafkaError._TRANSPORT, "Broker transport failure"))
    assert why(kafka) == "Kafka is unreachable or refused the request (Broker transport failure)"
    assert why(psycopg.OperationalError("connection refused\nmore")) == (
        "the database is unreachable (connection refused)"
    )
    assert why(ConnectError("connector x is not registered")) == "connector x is not registered"
    assert why(RuntimeError()) == "RuntimeError"
    assert why(RuntimeError("odd")) == "RuntimeError: odd"
