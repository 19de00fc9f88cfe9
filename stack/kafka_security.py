"""Kafka's authentication and authorisation for every topology (contract section 2b).

- Each principal's password (onceflow/settings/kafka_auth.py) is generated once into
  .stack/secrets/kafka/<principal> (mode 0600).
- Every listener of every node asks for SASL: clients and the nodes' inter-broker traffic use
  SCRAM-SHA-512 on the broker listener; the nodes authenticate to the controllers with PLAIN
  on the controller listener (SCRAM's credentials live in the metadata log that the
  controllers serve, so the controllers cannot use them themselves).
- The broker principal's SCRAM credential is written into the metadata at format time
  (`--add-scram`); the other principals' credentials and every ACL are created through the
  Admin API by `make up` (idempotent), as the broker principal, the only super user.
- StandardAuthorizer with no ACL meaning "deny": each principal gets only the ACLs of
  acl_bindings().
"""

import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from onceflow.settings import NotificationSettings, Settings
from onceflow.settings.kafka_auth import (
    AGGREGATION_GROUP_PREFIX,
    CONTROLLER_MECHANISM,
    LOCAL_KAFKA_PASSWORDS,
    MECHANISM,
    PRINCIPALS,
    KafkaAuthSettings,
    scram_jaas,
)
from onceflow.topology import HOST, KafkaNode
from stack.private_data import write_private

BROKER = "broker"
# The ops principal's Java client properties: the Kafka CLI tools' --command-config.
OPS_CLIENT_PROPERTIES = LOCAL_KAFKA_PASSWORDS / "ops.properties"
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
LISTENER = "SASL_PLAINTEXT"
SCRAM_ITERATIONS = 8192
# Kafka Connect's prefixes: its group, internal topics and task transactional ids all start with
# the worker's group.id; the leader's config-topic producer is "connect-cluster-<group.id>".
CONNECT_GROUP = "onceflow-connect"
DEBEZIUM_HEARTBEATS = "__debezium-heartbeat"
# A node's migration listener (migration_overrides) is its broker port plus this: 9099 locally.
MIGRATION_PORT_STEP = 7
# In a node's log dir: its metadata holds the broker principal's SCRAM credential (written at
# format time, or by a migration), so it can start with SASL alone. A file Kafka ignores.
SASL_MARKER = "onceflow-sasl"


def ensure_passwords(auth: KafkaAuthSettings) -> list[str]:
    """Write a password file for every principal that has none and whose password the
    environment does not set; the principals written."""
    written = []
    for principal in PRINCIPALS:
        file = auth.kafka_password_dir / principal
        if auth.given(principal):
            continue
        if file.exists() and file.read_text().strip():
            continue
        write_private(file, secrets.token_urlsafe(24) + "\n")
        written.append(principal)
    return written


def node_overrides(node: KafkaNode, broker_password: str) -> dict[str, str | None]:
    """What SASL changes in a node's properties (on top of the topology's overrides)."""
    controller_jaas = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{BROKER}" password="{broker_password}" '
        f'user_{BROKER}="{broker_password}";'
    )
    return {
        "listeners": f"{LISTENER}://{node.address},CONTROLLER://{HOST}:{node.controller_port}",
        "advertised.listeners": f"{LISTENER}://{node.address}",
        "inter.broker.listener.name": LISTENER,
        "listener.security.protocol.map": f"{LISTENER}:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": MECHANISM,
        "sasl.mechanism.inter.broker.protocol": MECHANISM,
        f"listener.name.{LISTENER.lower()}.sasl.enabled.mechanisms": MECHANISM,
        f"listener.name.{LISTENER.lower()}.{MECHANISM.lower()}.sasl.jaas.config": scram_jaas(
            BROKER, broker_password
        ),
        "sasl.mechanism.controller.protocol": CONTROLLER_MECHANISM,
        "listener.name.controller.sasl.enabled.mechanisms": CONTROLLER_MECHANISM,
        f"listener.name.controller.{CONTROLLER_MECHANISM.lower()}.sasl.jaas.config": (
            controller_jaas
        ),
        "authorizer.class.name": AUTHORIZER,
        "super.users": f"User:{BROKER}",
        "allow.everyone.if.no.acl.found": "false",
    }


def migration_overrides(node: KafkaNode, broker_password: str, port: int) -> dict[str, str | None]:
    """A node formatted before SASL has no SCRAM credential for the broker principal, and the
    controllers do not serve the Admin API that adds one. So it starts once with these: the
    SASL properties plus a PLAINTEXT listener on loopback `port` whose anonymous principal is
    a super user for that start only; migrate() then adds the credentials and ACLs through it,
    and the node restarts with node_overrides() alone."""
    final = node_overrides(node, broker_password)
    return {
        **final,
        "listeners": f"{final['listeners']},MIGRATION://{HOST}:{port}",
        "advertised.listeners": f"{final['advertised.listeners']},MIGRATION://{HOST}:{port}",
        "listener.security.protocol.map": (
            f"{final['listener.security.protocol.map']},MIGRATION:PLAINTEXT"
        ),
        "super.users": f"User:{BROKER};User:ANONYMOUS",
    }


def migration_port(node: KafkaNode) -> int:
    """The loopback port of a node's migration listener."""
    return node.port + MIGRATION_PORT_STEP


def has_credentials(log_dir: Path) -> bool:
    """Whether a formatted node's metadata holds the broker principal's credential (a node
    formatted before SASL was on has none, and must migrate before it can start with SASL)."""
    return (log_dir / SASL_MARKER).exists()


def mark_credentials(log_dir: Path) -> None:
    """Record that the node's metadata holds the broker principal's credential."""
    (log_dir / SASL_MARKER).write_text(
        "The metadata holds the broker principal's SCRAM credential (stack/kafka_security.py).\n"
    )


def worker_overrides(auth: KafkaAuthSettings) -> dict[str, str | None]:
    """What SASL changes in a Connect worker's properties: the worker's own clients and its
    tasks' producers, consumers and admin clients all log in as the connect principal."""
    client = auth.java_client_config("connect")
    return {
        f"{prefix}{key}": value
        for prefix in ("", "producer.", "consumer.", "admin.")
        for key, value in client.items()
    }


def client_properties(auth: KafkaAuthSettings, principal: str) -> str:
    """A Java client's properties file (the CLI tools' --command-config) for `principal`."""
    return "".join(f"{k}={v}\n" for k, v in auth.java_client_config(principal).items())


def format_arguments(broker_password: str) -> list[str]:
    """The storage tool's arguments that write the broker principal's SCRAM credential into the
    metadata at format time (before any node can authenticate another)."""
    return ["--add-scram", f"{MECHANISM}=[name={BROKER},password={broker_password}]"]


@dataclass(frozen=True)
class Grant:
    """One row of the ACL table: `principal` may do `operations` on a resource."""

    principal: str
    resource: ResourceType
    name: str
    operations: tuple[AclOperation, ...]
    prefixed: bool = False
    allow: bool = True


_O = AclOperation
_T = ResourceType


def grants(settings: Settings, notify: NotificationSettings) -> list[Grant]:
    """Who may do what (docs/security.md's table)."""
    outbox = settings.topic
    read = (_O.READ, _O.DESCRIBE)
    write = (_O.WRITE, _O.DESCRIBE)
    # What the tests principal is denied on the pipeline's own resources.
    forged = (_O.WRITE, _O.DELETE, _O.ALTER)  # topics: no record written, no topic deleted
    owned = (_O.READ, _O.DELETE)  # groups: no offset committed or deleted
    fenced = (_O.WRITE,)  # transactional ids: no init_transactions (it fences the owner)
    return [
        # Kafka Connect: the only writer of the outbox topic; its internal topics, group and
        # transactional ids (KIP-618), Debezium's heartbeat topic.
        Grant("connect", _T.TOPIC, outbox, (*write, _O.CREATE, _O.DESCRIBE_CONFIGS)),
        Grant("connect", _T.TOPIC, CONNECT_GROUP, (_O.ALL,), prefixed=True),
        Grant("connect", _T.TOPIC, DEBEZIUM_HEARTBEATS, (_O.ALL,), prefixed=True),
        Grant("connect", _T.GROUP, CONNECT_GROUP, read, prefixed=True),
        Grant("connect", _T.TRANSACTIONAL_ID, CONNECT_GROUP, write, prefixed=True),
        Grant("connect", _T.TRANSACTIONAL_ID, f"connect-cluster-{CONNECT_GROUP}", write),
        Grant("connect", _T.BROKER, "kafka-cluster", (_O.DESCRIBE, _O.IDEMPOTENT_WRITE)),
        # The aggregation job: reads the outbox with its own groups.
        Grant("aggregation", _T.TOPIC, outbox, read),
        Grant("aggregation", _T.GROUP, AGGREGATION_GROUP_PREFIX, read, prefixed=True),
        # The notifications processor: reads the outbox with its group (and its restore
        # reader's), writes the notifications topics and its changelog in its transactions.
        Grant("notifications", _T.TOPIC, outbox, read),
        Grant("notifications", _T.GROUP, notify.notify_group, read, prefixed=True),
        Grant("notifications", _T.TOPIC, notify.notify_topic, (*read, _O.WRITE), prefixed=True),
        Grant("notifications", _T.TOPIC, notify.notify_changelog_topic, (*read, _O.WRITE)),
        Grant("notifications", _T.TRANSACTIONAL_ID, notify.notify_group, write, prefixed=True),
        Grant("notifications", _T.BROKER, "kafka-cluster", (_O.DESCRIBE, _O.IDEMPOTENT_WRITE)),
        # Ops tooling: describes and reads everything (lag, groups, transactions, peek), and
        # what the runbooks do (docs/operations.md): raise a topic's partitions (ALTER on the
        # topic), move a group's offsets (READ on the group), abort a hanging transaction
        # (WriteTxnMarkers: CLUSTER_ACTION, not the cluster's ALTER, which would let ops
        # change the ACLs). It writes no record anywhere.
        Grant("ops", _T.TOPIC, "*", (*read, _O.DESCRIBE_CONFIGS, _O.ALTER)),
        Grant("ops", _T.GROUP, "*", (_O.DESCRIBE, _O.READ)),
        Grant("ops", _T.TRANSACTIONAL_ID, "*", (_O.DESCRIBE,)),
        Grant(
            "ops",
            _T.BROKER,
            "kafka-cluster",
            (_O.DESCRIBE, _O.DESCRIBE_CONFIGS, _O.CLUSTER_ACTION),
        ),
        # The test suites: their own scratch topics, groups and transactions, and reading the
        # pipeline's; never a write to the pipeline's topics, Connect's or the processor's state,
        # nor their groups' offsets or transactional ids (explicit denies, which win over the
        # wildcards): a forged record in onceflow-connect-offsets would move Debezium's LSN, one
        # in the changelog would suppress a notification, a transactional id fences its owner.
        Grant("tests", _T.TOPIC, "*", (_O.ALL,)),
        Grant("tests", _T.GROUP, "*", (_O.ALL,)),
        Grant("tests", _T.TRANSACTIONAL_ID, "*", (_O.ALL,)),
        Grant(
            "tests",
            _T.BROKER,
            "kafka-cluster",
            (_O.DESCRIBE, _O.DESCRIBE_CONFIGS, _O.IDEMPOTENT_WRITE),
        ),
        Grant("tests", _T.TOPIC, outbox, (_O.WRITE, _O.DELETE, _O.ALTER), allow=False),
        Grant("tests", _T.TOPIC, notify.notify_topic, forged, prefixed=True, allow=False),
        Grant("tests", _T.TOPIC, notify.notify_changelog_topic, forged, allow=False),
        Grant("tests", _T.TOPIC, CONNECT_GROUP, forged, prefixed=True, allow=False),
        Grant("tests", _T.TOPIC, DEBEZIUM_HEARTBEATS, forged, prefixed=True, allow=False),
        Grant("tests", _T.GROUP, notify.notify_group, owned, prefixed=True, allow=False),
        Grant("tests", _T.GROUP, CONNECT_GROUP, owned, prefixed=True, allow=False),
        Grant(
            "tests", _T.TRANSACTIONAL_ID, notify.notify_group, fenced, prefixed=True, allow=False
        ),
        Grant("tests", _T.TRANSACTIONAL_ID, CONNECT_GROUP, fenced, prefixed=True, allow=False),
        Grant(
            "tests", _T.TRANSACTIONAL_ID, f"connect-cluster-{CONNECT_GROUP}", fenced, allow=False
        ),
    ]


def acl_bindings(rows: Iterable[Grant]) -> list[AclBinding]:
    """The Admin API's bindings of the ACL table, one per operation."""
    return [
        AclBinding(
            row.resource,
            row.name,
            ResourcePatternType.PREFIXED if row.prefixed else ResourcePatternType.LITERAL,
            f"User:{row.principal}",
            "*",
            operation,
            AclPermissionType.ALLOW if row.allow else AclPermissionType.DENY,
        )
        for row in rows
        for operation in row.operations
    ]


def admin(bootstrap: str, auth: KafkaAuthSettings) -> AdminClient:
    """An Admin client as the broker principal (the one super user), whatever principal the
    process's other clients use (ONCEFLOW_KAFKA_PRINCIPAL)."""
    config = auth.model_copy(update={"kafka_principal": None}).client_config(bootstrap, BROKER)
    return AdminClient({**config, "log_level": 0})


def ensure_users(client: AdminClient, auth: KafkaAuthSettings, timeout: float = 30) -> list[str]:
    """Create the SCRAM credential of every client principal that has none (a rotation uses
    rotate_user); the principals created."""
    clients = [p for p in PRINCIPALS if p != BROKER]
    described = client.describe_user_scram_credentials(clients)
    assert isinstance(described, dict)  # one future per user when users are named
    missing = []
    for user, future in described.items():
        try:
            future.result(timeout=timeout)
        except KafkaException as exc:  # RESOURCE_NOT_FOUND: a user without any credential
            if exc.args[0].code() != KafkaError.RESOURCE_NOT_FOUND:
                raise
            missing.append(user)
    for user in missing:
        upsert_user(client, user, auth.password(user), timeout)
    return missing


def upsert_user(client: AdminClient, user: str, password: str, timeout: float = 30) -> None:
    """Set `user`'s SCRAM credential to `password` (a new user, or a rotation)."""
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, SCRAM_ITERATIONS)
    upsertion = UserScramCredentialUpsertion(user, info, password.encode())
    for future in client.alter_user_scram_credentials([upsertion]).values():
        future.result(timeout=timeout)


# The principals `onceflow-stack rotate-kafka-password` rotates. The broker's password is also
# every node's controller login (PLAIN, checked against the properties' own copy): nodes with
# the old and the new one cannot talk, so it changes with every node restarted together.
ROTATABLE = tuple(p for p in PRINCIPALS if p != BROKER)


def rotate(client: AdminClient, auth: KafkaAuthSettings, principal: str) -> None:
    """Give `principal` a new generated password: its SCRAM credential first (through
    `client`, as the broker), then its file; the file keeps the old one if Kafka refuses."""
    if principal not in ROTATABLE:
        raise ValueError(
            f"{principal!r} is not a rotatable Kafka principal: one of {', '.join(ROTATABLE)}"
        )
    if auth.given(principal):
        raise ValueError(
            f"ONCEFLOW_KAFKA_{principal.upper()}_PASSWORD sets its password: change it there"
        )
    new = secrets.token_urlsafe(24)
    upsert_user(client, principal, new)
    write_private(auth.kafka_password_dir / principal, new + "\n")


def ensure_acls(client: AdminClient, rows: Iterable[Grant], timeout: float = 30) -> None:
    """Create every binding of the table (the broker ignores one that exists)."""
    for future in client.create_acls(acl_bindings(rows)).values():
        future.result(timeout=timeout)


def migrate(address: str, auth: KafkaAuthSettings, rows: Iterable[Grant]) -> None:
    """Through a node's migration listener (migration_overrides): the broker principal's
    credential, every client principal's and the ACL table."""
    client = AdminClient({"bootstrap.servers": address, "log_level": 0})
    upsert_user(client, BROKER, auth.password(BROKER))
    ensure_users(client, auth)
    ensure_acls(client, rows)
