"""The faults the tests inject, in one place: network faults between nodes of this machine
(network.py: partition, isolate, loss, delay over a link or a detour, heal) and, in
tests.faults.processes, the process faults (kill, restart, pause). docs/operations.md,
"Rehearsing network faults".

The process faults are not imported here: they need the stack's supervisor modules, a second's
import that a rehearsal of network faults alone (or its command line) does without."""

from tests.faults.network import clean_up, cleaned_up, delay, heal, isolate, link, loss, partition
from tests.faults.nodes import NotLocalError, Program, named

__all__ = [
    "NotLocalError",
    "Program",
    "clean_up",
    "cleaned_up",
    "delay",
    "heal",
    "isolate",
    "link",
    "loss",
    "named",
    "partition",
]
