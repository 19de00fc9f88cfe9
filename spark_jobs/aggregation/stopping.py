"""Stopping on SIGTERM/SIGINT without cutting a micro-batch short."""

import contextlib
import logging
import signal
import time
from collections.abc import Iterator
from types import FrameType

from pyspark.sql.streaming.query import StreamingQuery

log = logging.getLogger("onceflow.aggregation")


class Stopper:
    """SIGTERM/SIGINT: finish the running micro-batch, then stop the query."""

    def __init__(self) -> None:
        self.requested = False

    def install(self) -> None:
        signal.signal(signal.SIGTERM, self._handle)
        signal.signal(signal.SIGINT, self._handle)

    @contextlib.contextmanager
    def shielding_children(self) -> Iterator[None]:
        """Start child processes (the Spark JVM) with SIGTERM ignored.

        A supervisor stopping the whole process group (stopasgroup) would otherwise make the
        JVM run its shutdown hooks at once, killing the micro-batch in flight; a JVM started
        with SIGTERM ignored keeps ignoring it, and this process stops Spark in order instead.
        """
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        log.info("received %s: stopping after the running micro-batch", signal.Signals(signum).name)
        self.requested = True


def stop_gracefully(query: StreamingQuery, timeout: float = 50) -> None:
    """Let the running micro-batch finish (bounded), then stop the query.

    When the whole process group got the signal, the Spark JVM is already shutting down; any
    batch it interrupted is rolled back in Postgres and re-run from the checkpoint next time.
    """
    try:
        deadline = time.monotonic() + timeout
        while query.isActive and query.status.get("isTriggerActive"):
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        query.stop()
    except Exception as exc:  # the JVM is gone or going: nothing left to stop
        log.info("Spark stopped with the process group (%s)", type(exc).__name__)
