"""Which topology the running stack is, so that `make down` and `make status` act on it whatever
ONCEFLOW_TOPOLOGY says now, and `make up` of the other one stops with a sentence."""

import os

from pydantic import ValidationError

from onceflow.settings import TopologySettings
from onceflow.topology import Topology, layout
from stack import supervisor


class TopologyError(RuntimeError):
    """The requested topology is unknown, or `make up` asked for one while another runs."""


def running() -> Topology | None:
    """The running stack's topology, read from the programs its supervisord has loaded (each
    topology names its first Kafka node differently); None when nothing runs."""
    if not supervisor.is_running():
        return None
    loaded = supervisor.programs()
    for topology in Topology:
        if layout(topology).kafka[0].program in loaded:
            return topology
    return None


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
