"""The connector watchdog (services/ops/connect_watchdog.py) on the running stack: the connector's
task FAILS for real, and the watchdog, not the test, restarts it; the orders placed around it are
on the topic, counted and notified exactly once.

How the task fails: a producer with the task's transactional id initialises its transactions,
as a newer instance of the task would (KIP-618): the broker bumps the id's epoch, so the task's
next send or commit is refused (ProducerFencedException / InvalidProducerEpochException) within
its next poll (Debezium's heartbeat writes every few seconds), and Connect marks it FAILED and
leaves it so, as after a network fault that outlasted its transaction."""

import uuid

import httpx
from confluent_kafka import Producer

from onceflow.settings import Settings
from onceflow.settings.kafka_auth import KafkaAuthSettings
from stack import connector
from stack.components import CONNECTOR_WATCHDOG
from stack.waiting import wait_for
from tests.cluster import kafka_nodes, program_logs
from tests.e2e import analytics, exactly_once
from tests.e2e.orders import Expected, post_history


def _fence_the_task(settings: Settings) -> None:
    """Take the task's transactional id over, as Connect's principal (whose ACLs own it)."""
    auth = KafkaAuthSettings(kafka_principal=None)
    producer = Producer(
        {
            **auth.client_config(settings.kafka_bootstrap, "connect"),
            "transactional.id": kafka_nodes.connector_transactional_id(settings.connector_name),
        }
    )
    producer.init_transactions(60)
    producer.flush(10)


def test_a_failed_task_is_restarted_by_the_watchdog(
    api: httpx.Client, analyst: analytics.Conn, settings: Settings
) -> None:
    wait_for(lambda: connector.running(settings), what="the connector running", timeout=120)
    analytics.barrier(api, analyst)
    before = exactly_once.baseline(settings)
    expected = Expected()
    run = uuid.uuid4().hex[:8]
    since = program_logs.log_size(CONNECTOR_WATCHDOG)
    post_history(api, run, expected, orders=4)

    _fence_the_task(settings)
    post_history(api, run + "-f", expected, orders=4)  # their events reach the fenced task

    def restarted() -> bool:
        return "restarting task 0 (FAILED" in program_logs.log_since(CONNECTOR_WATCHDOG, since)

    wait_for(restarted, what="the watchdog restarting the FAILED task", timeout=90)
    said = next(
        line
        for line in program_logs.log_since(CONNECTOR_WATCHDOG, since).splitlines()
        if "restarting task 0" in line
    )
    assert "Fenced" in said or "epoch" in said or "transaction" in said, said
    wait_for(lambda: connector.running(settings), what="the task running again", timeout=120)
    post_history(api, run + "-a", expected, orders=4)
    exactly_once.assert_exactly_once(settings, expected, before, timeout=180)
