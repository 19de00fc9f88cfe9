"""Exactly once across crashes: Kafka Connect, the Kafka broker and the aggregation job are
killed with SIGKILL (the whole process group, as a power cut would) while orders keep flowing;
supervisor restarts them, and afterwards every change is on the topic exactly once and counted
exactly once. Before the job is killed the ledger is pruned as hard as maintenance ever may (only
each query's newest batch stays): replay safety must not need more."""

import os
import signal
import threading
import uuid
from collections.abc import Iterator
from datetime import timedelta

import httpx
import psycopg
import pytest

from onceflow.settings import Settings
from services.maintenance.tasks import TASKS, Windows
from stack import connector, supervisor
from stack.waiting import port_open, wait_for
from tests.e2e import analytics, exactly_once
from tests.e2e.orders import Expected, post_history


class Writer(threading.Thread):
    """A REST client placing and changing orders until told to stop."""

    def __init__(self, base_url: str, headers: dict[str, str]) -> None:
        super().__init__(daemon=True)
        self.base_url, self.headers = base_url, headers
        self.expected = Expected()
        self.stopping = threading.Event()
        self.failure: BaseException | None = None

    def run(self) -> None:
        run = uuid.uuid4().hex[:8]
        try:
            with httpx.Client(base_url=self.base_url, timeout=30, headers=self.headers) as api:
                for chunk in range(10_000):
                    if self.stopping.is_set():
                        return
                    post_history(api, f"{run}-{chunk}", self.expected, orders=2)
        except BaseException as exc:
            self.failure = exc

    def orders(self) -> int:
        return len(self.expected.status)

    def finish(self) -> Expected:
        self.stopping.set()
        self.join(60)
        assert not self.is_alive(), "the writer did not stop"
        assert self.failure is None, f"a write failed: {self.failure!r}"
        return self.expected


def _kill(name: str) -> int:
    pid = int(supervisor.proxy().supervisor.getProcessInfo(name)["pid"])
    os.killpg(pid, signal.SIGKILL)
    return pid


def _restarted(name: str, old_pid: int) -> bool:
    info = supervisor.proxy().supervisor.getProcessInfo(name)
    return bool(info["statename"] == "RUNNING" and info["pid"] not in (0, old_pid))


@pytest.fixture
def writer(api: httpx.Client) -> Iterator[Writer]:
    w = Writer(str(api.base_url), {"Authorization": api.headers["Authorization"]})
    yield w
    w.stopping.set()


def _prune_ledger_to_newest(settings: Settings) -> int:
    ledger = next(task for task in TASKS if task.name == "ledger")
    with psycopg.connect(settings.dsn(ledger.role), autocommit=True) as conn:
        return ledger.run(conn, Windows(timedelta(hours=24), timedelta(0)), batch=1000)


def _wait_orders(writer: Writer, at_least: int) -> None:
    wait_for(lambda: writer.orders() >= at_least, what=f"{at_least} orders posted", timeout=120)


def test_killed_connect_broker_and_job_lose_and_duplicate_nothing(
    api: httpx.Client, analyst: analytics.Conn, settings: Settings, writer: Writer
) -> None:
    analytics.barrier(api, analyst)
    before = exactly_once.baseline(analyst)
    writer.start()  # after the barrier: the baseline holds none of its orders
    _wait_orders(writer, 10)

    old = _kill("connect")
    wait_for(lambda: _restarted("connect", old), what="Connect restarted", timeout=120)
    wait_for(lambda: connector.running(settings), what="connector running again", timeout=180)
    _wait_orders(writer, writer.orders() + 10)

    old = _kill("kafka")
    wait_for(lambda: _restarted("kafka", old), what="Kafka restarted", timeout=120)
    host, port = settings.kafka_bootstrap.rsplit(":", 1)
    wait_for(lambda: port_open(host, int(port)), what="Kafka listening", timeout=120)
    wait_for(lambda: connector.running(settings), what="connector still running", timeout=180)
    _wait_orders(writer, writer.orders() + 10)

    assert _prune_ledger_to_newest(settings) > 0
    old = _kill("aggregation")
    wait_for(lambda: _restarted("aggregation", old), what="the job restarted", timeout=120)
    wait_for(lambda: port_open("127.0.0.1", 4040), what="the job's Spark UI", timeout=180)
    _wait_orders(writer, writer.orders() + 10)

    expected = writer.finish()
    exactly_once.assert_exactly_once(settings, analyst, expected, before, timeout=240)
