"""SIGTERM and SIGINT as a request to stop: the event a long-running service's loop waits on."""

import logging
import signal
import threading
from types import FrameType


def stop_requested(log: logging.Logger) -> threading.Event:
    """An event set (and logged) when the process gets SIGTERM or SIGINT."""
    stop = threading.Event()

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        log.info("received %s: stopping", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    return stop
