"""Checks before anything starts: each failure is one sentence saying what to do."""

import shutil
import subprocess

from onceflow import paths
from stack import jvm, supervisor
from stack.components import Component
from stack.waiting import port_open

MIN_FREE_BYTES = 2 * 1024**3


class PreflightError(RuntimeError):
    """A prerequisite is missing; the message says what to do."""


def check(components: list[Component]) -> None:
    """Raise PreflightError for missing tools, too little disk, or a port taken by a stranger."""
    for tool, hint in (
        ("java", "install a JDK 17+ (apt-get install openjdk-17-jdk-headless)"),
        ("mvn", "install Maven (apt-get install maven)"),
    ):
        if shutil.which(tool) is None:
            raise PreflightError(f"`{tool}` is not on PATH: {hint}, then run `make up` again.")
    for tool in ("prometheus", "prometheus-postgres-exporter"):
        if shutil.which(tool) is None:
            raise PreflightError(
                f"`{tool}` is not on PATH: run `make up` (it installs it) as root."
            )
    if not jvm.JMX_AGENT.exists():
        raise PreflightError(
            f"The JMX exporter agent is missing ({jvm.JMX_AGENT}): run `make up` "
            "(stack/fetch_jars.sh fetches it)."
        )
    if not (paths.PG_BIN / "postgres").exists():
        raise PreflightError(
            "PostgreSQL 15 is not installed: run `make up` (it installs it) as root."
        )
    grouped = [c for c in components if c.network_group is not None]
    if grouped:
        _check_setpriv(grouped[0])
    free = shutil.disk_usage(paths.ROOT).free
    if free < MIN_FREE_BYTES:
        raise PreflightError(
            f"Only {free // 1024**2} MiB free on the disk holding {paths.ROOT}: "
            "free at least 2 GiB, then run `make up` again."
        )
    check_ports(components)


def _check_setpriv(component: Component) -> None:
    """The cluster starts its programs under their network groups (stack/supervisor.py): fail
    here, in one sentence, rather than as programs supervisor gave up on (no util-linux setpriv,
    not root, or a user namespace that maps no such group)."""
    group = str(component.network_group)
    try:
        done = subprocess.run(
            [supervisor.SETPRIV, "--regid", group, "--clear-groups", "--", "true"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except OSError as exc:
        raise PreflightError(
            f"{supervisor.SETPRIV} cannot run ({exc}): the cluster needs util-linux's setpriv"
            " (apt-get install util-linux), then run `make up` again."
        ) from exc
    if done.returncode != 0:
        raise PreflightError(
            f"{supervisor.SETPRIV} cannot switch to group {group} ({done.stderr.strip()}): the"
            " cluster starts its programs under groups of their own, which needs root with"
            " CAP_SETGID and that group id mapped (no user namespace with a single id)."
        )


def check_ports(components: list[Component]) -> None:
    """Raise PreflightError when a component's port is held by a process the stack did not start."""
    ours = supervisor.is_running()
    for component in components:
        if ours and supervisor.state(component.name) in ("RUNNING", "STARTING"):
            continue
        for port in component.ports:
            if port_open("127.0.0.1", port):
                raise PreflightError(
                    f"Port {port} (needed by {component.name}) is already in use by another "
                    "process: stop it or point the stack elsewhere (see .env.example)."
                )
