"""Process faults beside the network ones: a program stalled (SIGSTOP) while the block runs.
The kill and restart faults are tests/e2e/processes.py's (re-exported by tests.faults)."""

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager

from tests.e2e.processes import pid_of


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
