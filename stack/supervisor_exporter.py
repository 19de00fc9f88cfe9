"""How often each supervised program starts, for Prometheus: supervisor's event listener
`supervisor-exporter` (rendered by stack/supervisor.py, started by supervisord itself).

Supervisor sends it every PROCESS_STATE event on stdin (its event-listener protocol), so it
sees every start, however short-lived, and needs no access to supervisor's control socket. It
serves on 127.0.0.1:`ONCEFLOW_SUPERVISOR_EXPORTER_PORT` (docs/observability.md):
- `onceflow_supervisor_process_starts_total{program,trigger}`: `automatic` when supervisor
  restarted the program on its own (from EXITED or BACKOFF: it exited or failed to start),
  `requested` when it was started (`make up`, `supervisorctl start|restart`);
- `onceflow_supervisor_process_start_time_seconds{program}`: when the current process was
  started; absent while the program is not running.
"""

import contextlib
import logging
import sys
import time
from typing import TextIO

from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server
from supervisor import childutils

log = logging.getLogger("onceflow.supervisor_exporter")

# Supervisor's own restarts: after an exit (autorestart) or a start that failed (startretries).
AUTOMATIC_FROM = frozenset({"EXITED", "BACKOFF"})
GONE = frozenset({"STOPPED", "EXITED", "BACKOFF", "FATAL"})
TRIGGERS = ("automatic", "requested")


class ProcessMetrics:
    """The series of supervisor's process-state events, in a registry of their own."""

    def __init__(self, *, programs: list[str]) -> None:
        self.registry = CollectorRegistry()
        self.starts = Counter(
            "onceflow_supervisor_process_starts_total",
            "Starts of a supervised program: automatic (supervisor restarted it) or requested",
            ("program", "trigger"),
            registry=self.registry,
        )
        self.start_time = Gauge(
            "onceflow_supervisor_process_start_time_seconds",
            "When the program's current process was started (absent while not running)",
            ("program",),
            registry=self.registry,
        )
        # At 0 from the start: increase() sees a program's first restart too.
        for program in programs:
            for trigger in TRIGGERS:
                self.starts.labels(program, trigger)

    def observe(self, *, event: str, payload: dict[str, str], now: float) -> None:
        """One event (PROCESS_STATE_<STATE>, its payload's tokens) received at `now`."""
        state = event.removeprefix("PROCESS_STATE_")
        program = payload.get("processname")
        if program is None or state == event:
            return
        if state == "STARTING":
            automatic = payload.get("from_state") in AUTOMATIC_FROM
            self.starts.labels(program, TRIGGERS[0] if automatic else TRIGGERS[1]).inc()
            self.start_time.labels(program).set(now)
        elif state in GONE:
            with contextlib.suppress(KeyError):  # never started while we listened
                self.start_time.remove(program)


def listen(*, metrics: ProcessMetrics, stdin: TextIO, stdout: TextIO) -> None:
    """Answer supervisor's events until it closes stdin (its shutdown)."""
    while True:
        childutils.listener.ready(stdout)
        line = stdin.readline()
        if not line:
            return
        headers = childutils.get_headers(line)
        payload = stdin.read(int(headers["len"]))
        try:
            metrics.observe(
                event=headers["eventname"], payload=childutils.get_headers(payload), now=time.time()
            )
        except Exception:  # a metrics bug must never block supervisor's event queue
            log.exception("could not record %s", line.strip())
        childutils.listener.ok(stdout)


def main(argv: list[str]) -> None:
    """`python -m stack.supervisor_exporter PORT PROGRAM[,PROGRAM...]`."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)  # stdout is the protocol's
    port, programs = int(argv[0]), argv[1].split(",")
    metrics = ProcessMetrics(programs=programs)
    start_http_server(port, addr="127.0.0.1", registry=metrics.registry)
    log.info("serving starts of %d programs on 127.0.0.1:%d", len(programs), port)
    listen(metrics=metrics, stdin=sys.stdin, stdout=sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
