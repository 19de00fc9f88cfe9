"""Process faults beside the network ones: the kill and restart faults of tests/e2e/processes.py
(re-exported here) and a program stalled (SIGSTOP) while a block runs."""

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager

from tests.e2e.processes import kill, kill_and_keep_down, kill_and_wait_restart, pid_of

__all__ = ["kill", "kill_and_keep_down", "kill_and_wait_restart", "paused"]


@contextmanager
def paused(program: str) -> Iterator[int]:
    """The supervised program's whole process group stopped (SIGSTOP), as a stall would hit
    it, and continued (SIGCONT) when the block ends; yields its pid."""
    pid = pid_of(program)
    os.killpg(pid, signal.SIGSTOP)
    try:
        yield pid
    finally:
        os.killpg(pid, signal.SIGCONT)
