"""Each node of the cluster carries a group id of its own on its packets (the network-fault
rules match it); the single topology's programs start exactly as before."""

from onceflow.settings import Settings
from onceflow.topology import Topology
from stack.components import components
from stack.supervisor import SETPRIV, render_config


def test_every_cluster_node_has_a_group_of_its_own() -> None:
    groups = {c.name: c.network_group for c in components(Settings(topology=Topology.CLUSTER))}
    nodes = [n for n in groups if n.startswith(("kafka-", "connect-", "spark-", "notifications-"))]
    assert len(nodes) == 3 + 2 + 3 + 2
    assert all(groups[n] is not None for n in [*nodes, "aggregation", "api"])
    given = [g for g in groups.values() if g is not None]
    assert len(given) == len(set(given)), f"two programs share a group: {groups}"
    assert groups["postgres"] is None  # it runs as its own user: rules match that


def test_a_grouped_program_starts_under_its_group_and_single_under_none() -> None:
    cluster = Settings(topology=Topology.CLUSTER)
    conf = render_config(components(cluster), cluster)
    assert "[program:kafka-2]\ncommand=/usr/bin/setpriv --regid 2612 --clear-groups -- " in conf
    single = Settings(topology=Topology.SINGLE)
    assert all(c.network_group is None for c in components(single))
    assert SETPRIV not in render_config(components(single), single)
