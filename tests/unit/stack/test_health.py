"""The probes' verdicts (stack/health.py) against a local HTTP server answering what a component
would: a stuck job, a paused connector, a crash-looping process."""

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from stack import health


class Answer(BaseHTTPRequestHandler):
    """Answers every GET with `body` and `status`."""

    body: ClassVar[str] = ""
    status: ClassVar[int] = 200

    def do_GET(self) -> None:
        data = self.body.encode()
        self.send_response(self.status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    Answer.body, Answer.status = "", 200


def _job(waiting: int, last: float) -> str:
    return (
        f"onceflow_aggregation_input_waiting {waiting}\n"
        f"onceflow_aggregation_last_batch_timestamp_seconds {last}\n"
    )


def test_a_job_with_input_waiting_and_no_batch_for_long_is_stuck(server: str) -> None:
    Answer.body = _job(1, time.time() - health.STALE_AFTER - 60)
    problem = health.stage_progresses(server)
    assert problem is not None
    assert "stuck" in problem


@pytest.mark.parametrize(("waiting", "idle"), [(0, health.STALE_AFTER + 60), (1, 5.0), (0, 5.0)])
def test_a_job_that_is_idle_or_recent_progresses(server: str, waiting: int, idle: float) -> None:
    Answer.body = _job(waiting, time.time() - idle)
    assert health.stage_progresses(server) is None


def test_an_endpoint_answering_an_error_is_a_sentence(server: str) -> None:
    Answer.status = 503
    assert health.answers(server) == f"{server} answered 503"


def _connector(state: str, *tasks: str) -> str:
    return json.dumps(
        {
            "connector": {"state": state},
            "tasks": [{"id": n, "state": s} for n, s in enumerate(tasks)],
        }
    )


def test_a_paused_connector_or_failed_task_is_unhealthy(server: str) -> None:
    Answer.body = _connector("PAUSED", "PAUSED")
    assert health.connector_runs(server, "c") == "connector c: connector PAUSED, task 0 PAUSED"
    Answer.body = _connector("RUNNING", "RUNNING", "FAILED")
    assert health.connector_runs(server, "c") == "connector c: task 1 FAILED"
    Answer.body = _connector("RUNNING")
    assert health.connector_runs(server, "c") == "connector c has no task"
    Answer.body = _connector("RUNNING", "RUNNING")
    assert health.connector_runs(server, "c") is None


def test_a_process_restarted_by_supervisor_is_unhealthy_until_it_settles() -> None:
    def works() -> None:
        return None

    assert health.verdict(health.Process("BACKOFF", None, 3), works) == "process BACKOFF"
    flapping = health.verdict(health.Process("RUNNING", 2.0, 3), works)
    assert flapping is not None
    assert "crash-looping" in flapping
    assert health.verdict(health.Process("RUNNING", health.SETTLE + 1, 3), works) is None
    assert health.verdict(health.Process("RUNNING", 2.0, 0), works) is None  # a first start


def test_a_probe_that_raises_is_a_sentence() -> None:
    def broken() -> str | None:
        raise ValueError("no such series")

    assert health.verdict(health.Process("RUNNING", 99.0, 0), broken) == (
        "probe failed: no such series"
    )


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(None, "-"), (9, "9s"), (250, "4m10s"), (7500, "2h5m"), (273600, "3d4h")],
)
def test_uptime_is_short(seconds: float | None, shown: str) -> None:
    assert health.duration(seconds) == shown


def test_a_lost_slot_fails_the_connector_in_one_sentence_and_others_do_not() -> None:
    said = health.slot_verdict("onceflow_outbox", "lost")
    assert said is not None
    assert "onceflow_outbox is LOST" in said
    assert "#a-lost-replication-slot" in said
    for status in ("reserved", "extended", "unreserved", None):  # None: Debezium creates it
        assert health.slot_verdict("onceflow_outbox", status) is None


def test_an_unreachable_database_is_a_sentence_not_an_exception() -> None:
    said = health.slot_kept("host=127.0.0.1 port=1 dbname=x user=x", "s", deadline=1)
    assert said is not None
    assert said.startswith("the replication slot could not be read")
