"""Switch Kafka nodes formatted before SASL to SASL/SCRAM and ACLs, on a running stack or a
stopped one (docs/security.md, "Switching a node formatted before SASL").

A node formatted without SASL has no SCRAM credential for the broker principal, and the
controllers do not serve the Admin API that adds one. So every node of the topology starts
once with the SASL properties plus a loopback PLAINTEXT listener whose anonymous principal is
a super user (kafka_security.migration_overrides); the credentials and the ACL table go in
through it; every node then restarts with the final properties, and each node's log dir gets
the marker that says its metadata holds the credential. The programs that use Kafka stop
first and start again last, now authenticating. Idempotent: a topology whose nodes all carry
the marker is left alone.
"""

from collections.abc import Callable

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from onceflow import paths
from onceflow.settings import NotificationSettings, Settings
from onceflow.settings.kafka_auth import KafkaAuthSettings
from onceflow.topology import HOST, KafkaNode, Layout
from stack import kafka_security, node_configs, supervisor
from stack.components import Component
from stack.private_data import write_private
from stack.waiting import NotReadyError, port_open, wait_for

# A node's start with SASL on a cluster waits for its quorum, as in `make up`.
NODE_START_SECONDS = 180.0
ACTIVE = ("RUNNING", "STARTING", "BACKOFF")


def pending(layout: Layout) -> list[KafkaNode]:
    """The formatted nodes whose metadata lacks the broker principal's credential."""
    data = paths.data_dirs(layout.data_folder)
    return [
        node
        for node in layout.kafka
        if (data.kafka(node.program) / "meta.properties").exists()
        and not kafka_security.has_credentials(data.kafka(node.program))
    ]


def _answers_on_migration_listener(node: KafkaNode, count: int) -> bool:
    port = kafka_security.migration_port(node)
    if not port_open(HOST, port):
        return False
    admin = AdminClient({"bootstrap.servers": f"{HOST}:{port}", "log_level": 0})
    return len(admin.list_topics(timeout=5).brokers) == count


def _restart_nodes(nodes: list[Component]) -> None:
    """Stop every node, then start them all: the listeners every node talks to change."""
    for node in reversed(nodes):
        supervisor.stop(node.name)
    for node in nodes:
        supervisor.start(node.name)


def switch(
    settings: Settings,
    notify: NotificationSettings,
    auth: KafkaAuthSettings,
    parts: list[Component],
    say: Callable[[str], None],
) -> bool:
    """Migrate the topology's nodes to SASL if any lacks the broker's credential; whether it
    did. supervisord must be running with the topology's programs loaded."""
    layout = settings.layout
    if not auth.kafka_sasl or not pending(layout):
        return False
    data = paths.data_dirs(layout.data_folder)
    nodes = [part for part in parts if part.wave == "kafka"]
    clients = [
        part
        for part in parts
        if part.kafka_principal not in (None, kafka_security.BROKER)
        and supervisor.state(part.name) in ACTIVE
    ]
    for client in reversed(clients):
        say(f"{client.name}: stopping until Kafka asks for SASL")
        supervisor.stop(client.name)
    for node in layout.kafka:
        write_private(
            node_configs.config_path(node.program),
            node_configs.node_properties(layout, node, auth, migration=True),
        )
    say("Kafka: restarting with SASL and a loopback migration listener")
    _restart_nodes(nodes)
    first = layout.kafka[0]
    rows = kafka_security.grants(settings, notify)
    try:
        wait_for(
            lambda: _answers_on_migration_listener(first, len(layout.kafka)),
            what=f"{first.program}'s migration listener",
            timeout=NODE_START_SECONDS,
        )
        kafka_security.migrate(f"{HOST}:{kafka_security.migration_port(first)}", auth, rows)
    except (KafkaException, NotReadyError) as exc:
        # The migration listener is an unauthenticated super user: no node keeps it open
        # while nobody migrates (the nodes start with it again when this is run again).
        for part in reversed(nodes):
            supervisor.stop(part.name)
        raise RuntimeError(
            f"creating Kafka's credentials and ACLs through {first.program}'s migration listener "
            f"failed ({exc}); the nodes are stopped until this is run again"
        ) from exc
    say("Kafka: SCRAM credentials and ACLs created; restarting with SASL alone")
    node_configs.write_all(layout, auth)
    _restart_nodes(nodes)
    for part in nodes:
        wait_for(part.ready, what=part.name, timeout=NODE_START_SECONDS)
    for each in layout.kafka:
        kafka_security.mark_credentials(data.kafka(each.program))
    for client in clients:
        say(f"{client.name}: starting, as Kafka principal {client.kafka_principal}")
        supervisor.restart(client.name)
    for client in clients:
        wait_for(client.ready, what=client.name, timeout=client.start_timeout)
    return True
