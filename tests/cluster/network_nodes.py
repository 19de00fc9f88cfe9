"""The cluster's nodes as the fault library knows them: each program by the group its packets
carry (onceflow/topology.py, NETWORK_GROUPS) and the loopback ports it listens on; Postgres by
its OS user. `partition(...)` between two of these names cuts exactly those two nodes."""

import pwd
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from onceflow.settings import Settings, get_aggregation_settings, get_notification_settings
from onceflow.topology import Layout
from stack import postgres
from tests import faults
from tests.faults import Program

POSTGRES = "postgres"


def _group(layout: Layout, program: str) -> int:
    group = layout.network_group(program)
    if group is None:
        raise ValueError(f"{program} has no network group on the {layout.topology} topology")
    return group


def programs(settings: Settings, layout: Layout) -> dict[str, Program]:
    """Every node of the cluster the scenarios cut, by its supervisor program's name."""
    notify = get_notification_settings()

    def node(program: str, *ports: int) -> tuple[str, Program]:
        return program, Program.of_group(_group(layout, program), ports)

    assert layout.spark is not None, "the cluster runs Spark standalone"
    return dict(
        [
            *(node(n.program, n.port, n.controller_port) for n in layout.kafka),
            *(node(w.program, w.port) for w in layout.connect),
            node(layout.spark.program, layout.spark.port, layout.spark.ui_port),
            *(node(w.program, w.ui_port) for w in layout.spark.workers),
            node("aggregation", get_aggregation_settings().agg_ui_port),
            *(
                node(f"notifications-{n}", notify.metrics_port(n))
                for n in range(1, notify.notify_instances + 1)
            ),
            node("api", settings.api_port),
            (
                POSTGRES,
                Program.of_user(pwd.getpwnam(postgres.os_user()).pw_uid, (settings.pg_port,)),
            ),
        ]
    )


@contextmanager
def named(settings: Settings, layout: Layout) -> Iterator[None]:
    """The cluster's nodes named for the fault library while the block runs."""
    with faults.named(programs(settings, layout)):
        yield


@contextmanager
def cut_from_brokers(layout: Layout, node: str) -> Iterator[None]:
    """No packet between `node` and any broker (it still reaches everything else)."""
    with ExitStack() as stack:
        for broker in layout.kafka:
            if broker.program != node:
                stack.enter_context(faults.partition(node, broker.program))
        yield
