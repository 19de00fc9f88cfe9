"""The faults the tests inject, in one place: network faults between nodes of this machine
(network.py: partition, isolate, loss, delay over a link, heal) and process faults (kill and
restart from tests/e2e/processes.py, pause). docs/operations.md, "Rehearsing network faults"."""

from tests.e2e.processes import kill, kill_and_keep_down, kill_and_wait_restart
from tests.faults.network import clean_up, cleaned_up, delay, heal, isolate, link, loss, partition
from tests.faults.nodes import NotLocalError, named
from tests.faults.processes import paused

__all__ = [
    "NotLocalError",
    "clean_up",
    "cleaned_up",
    "delay",
    "heal",
    "isolate",
    "kill",
    "kill_and_keep_down",
    "kill_and_wait_restart",
    "link",
    "loss",
    "named",
    "partition",
    "paused",
]
