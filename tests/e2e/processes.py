"""Signals to the stack's supervised processes, the way a power cut or a stall would hit them."""

import os
import signal

from stack import supervisor
from stack.waiting import wait_for


def pid_of(name: str) -> int:
    return int(supervisor.proxy().supervisor.getProcessInfo(name)["pid"])


def kill(name: str, sig: signal.Signals = signal.SIGKILL) -> int:
    """Send `sig` to the program's whole process group (a JVM and the children it started)."""
    pid = pid_of(name)
    os.killpg(pid, sig)
    return pid


def restarted(name: str, old_pid: int) -> bool:
    info = supervisor.proxy().supervisor.getProcessInfo(name)
    return bool(info["statename"] == "RUNNING" and info["pid"] not in (0, old_pid))


def kill_and_wait_restart(name: str, timeout: float = 120) -> None:
    """SIGKILL the program and wait until supervisor has it running again."""
    old = kill(name)
    wait_for(lambda: restarted(name, old), what=f"{name} restarted", timeout=timeout)


def kill_and_keep_down(name: str) -> None:
    """SIGKILL the program, then keep supervisor from restarting it (a node that stays dead)."""
    old = kill(name)
    wait_for(
        lambda: supervisor.state(name) != "RUNNING" or pid_of(name) != old,
        what=f"supervisor to notice {name} died",
        timeout=30,
    )
    if supervisor.state(name) not in ("STOPPED", "EXITED", "FATAL"):
        supervisor.proxy().supervisor.stopProcess(name, True)
