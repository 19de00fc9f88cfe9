"""Exactly once across crashes: Kafka Connect, the Kafka broker and the aggregation job are
killed with SIGKILL (the whole process group, as a power cut would) while orders keep flowing;
supervisor restarts them, and afterwards every change is on the topic exactly once and counted
exactly once. Before the job is killed the ledger is pruned as hard as maintenance ever may (only
each query's newest batch stays): replay safety must not need more."""

from datetime import timedelta

import httpx
import psycopg

from onceflow.settings import Settings
from services.maintenance.tasks import TASKS, Windows
from stack import connector
from stack.waiting import port_open, wait_for
from tests.e2e import analytics, exactly_once
from tests.e2e.processes import kill, restarted
from tests.e2e.writer import Writer


def _prune_ledger_to_newest(settings: Settings) -> int:
    ledger = next(task for task in TASKS if task.name == "ledger")
    with psycopg.connect(settings.dsn(ledger.role), autocommit=True) as conn:
        return ledger.run(conn, Windows(timedelta(hours=24), timedelta(0)), batch=1000)


def test_killed_connect_broker_and_job_lose_and_duplicate_nothing(
    api: httpx.Client, analyst: analytics.Conn, settings: Settings, writer: Writer
) -> None:
    analytics.barrier(api, analyst)
    before = exactly_once.baseline(settings)
    writer.start()  # after the barrier: the baseline holds none of its orders
    writer.wait_more()

    old = kill("connect")
    wait_for(lambda: restarted("connect", old), what="Connect restarted", timeout=120)
    wait_for(lambda: connector.running(settings), what="connector running again", timeout=180)
    writer.wait_more()

    old = kill("kafka")
    wait_for(lambda: restarted("kafka", old), what="Kafka restarted", timeout=120)
    host, port = settings.kafka_bootstrap.rsplit(":", 1)
    wait_for(lambda: port_open(host, int(port)), what="Kafka listening", timeout=120)
    wait_for(lambda: connector.running(settings), what="connector still running", timeout=180)
    writer.wait_more()

    assert _prune_ledger_to_newest(settings) > 0
    old = kill("aggregation")
    wait_for(lambda: restarted("aggregation", old), what="the job restarted", timeout=120)
    wait_for(lambda: port_open("127.0.0.1", 4040), what="the job's Spark UI", timeout=180)
    writer.wait_more()

    expected = writer.finish()
    exactly_once.assert_exactly_once(settings, expected, before, timeout=240)
