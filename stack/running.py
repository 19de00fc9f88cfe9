"""Which topology the running stack was started with, recorded by `make up` so that `make down`
and `make status` act on it whatever ONCEFLOW_TOPOLOGY says now."""

import os

from pydantic import ValidationError

from onceflow import paths
from onceflow.settings import TopologySettings
from onceflow.topology import Topology
from stack import supervisor


class TopologyError(RuntimeError):
    """The requested topology is unknown, or `make up` asked for one while another runs."""


def running() -> Topology | None:
    """The running stack's topology; None when nothing runs. A stack started before topologies
    existed recorded none: it is the single one."""
    if not supervisor.is_running():
        return None
    if not paths.RUNNING_TOPOLOGY.exists():
        return Topology.SINGLE
    return Topology(paths.RUNNING_TOPOLOGY.read_text().strip())


def act_on(*, starting: bool) -> Topology:
    """The topology this command acts on, made every settings class's (ONCEFLOW_TOPOLOGY of this
    process and the processes it starts): for `make up` the requested one, which must not differ
    from a running one; otherwise the running one, or the requested one when none runs."""
    try:
        requested = TopologySettings().topology
    except ValidationError as exc:
        known = " or ".join(t.value for t in Topology)
        raise TopologyError(
            f"ONCEFLOW_TOPOLOGY={exc.errors()[0].get('input')!r} is no topology: use {known}."
        ) from exc
    current = running()
    if starting and current is not None and current is not requested:
        raise TopologyError(
            f"the {current} topology is running: `make down` first, then "
            f"`ONCEFLOW_TOPOLOGY={requested} make up`."
        )
    topology = current or requested
    os.environ["ONCEFLOW_TOPOLOGY"] = topology.value
    return topology


def record(topology: Topology) -> None:
    paths.RUNNING_TOPOLOGY.parent.mkdir(parents=True, exist_ok=True)
    paths.RUNNING_TOPOLOGY.write_text(f"{topology}\n")


def forget() -> None:
    paths.RUNNING_TOPOLOGY.unlink(missing_ok=True)
