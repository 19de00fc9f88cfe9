"""Schema `orders`: the order aggregate, the transactional outbox and Idempotency-Key records."""

from sqlalchemy import (
    CHAR,
    BigInteger,
    CheckConstraint,
    Column,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    Table,
    Text,
    Uuid,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

from onceflow.schema.metadata import TIMESTAMPTZ, metadata

# API clients (contract section 3): each holds scopes and an optional own rate limit; its keys
# are in api_keys. A revoked client's keys all stop working.
clients = Table(
    "clients",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column(
        "scopes",
        ARRAY(Text),
        CheckConstraint("scopes <@ ARRAY['orders:write', 'orders:read']"),
        nullable=False,
    ),
    Column("rate_per_s", Double, CheckConstraint("rate_per_s > 0")),
    Column("created_at", TIMESTAMPTZ, nullable=False, server_default=text("now()")),
    Column("revoked_at", TIMESTAMPTZ),
    schema="orders",
)

# Only the SHA-256 of a key is stored; the key itself is shown once, when it is issued.
api_keys = Table(
    "api_keys",
    metadata,
    Column("key_hash", LargeBinary, primary_key=True),
    Column("client_id", Uuid, ForeignKey("orders.clients.id"), nullable=False),
    Column("created_at", TIMESTAMPTZ, nullable=False, server_default=text("now()")),
    Column("revoked_at", TIMESTAMPTZ),
    Column("last_used_at", TIMESTAMPTZ),
    # Migration 0016: a key past it is not live (contract §2b: keys may expire, rotation overlaps).
    Column(
        "expires_at",
        TIMESTAMPTZ,
        comment="When the key stops working (NULL: never); set by clients rotate --overlap",
    ),
    schema="orders",
)
Index("api_keys_by_client", api_keys.c.client_id)

orders = Table(
    "orders",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("customer_id", Text, nullable=False),
    Column("currency", CHAR(3), nullable=False),
    Column(
        "status",
        Text,
        CheckConstraint("status IN ('PLACED', 'PAID', 'SHIPPED', 'CANCELLED')"),
        nullable=False,
    ),
    Column("total_cents", BigInteger, CheckConstraint("total_cents >= 0"), nullable=False),
    Column("created_at", TIMESTAMPTZ, nullable=False),
    Column("updated_at", TIMESTAMPTZ, nullable=False),
    # The client that placed the order (migration 0006): reads and changes are scoped to it.
    Column("client_id", Uuid, ForeignKey("orders.clients.id"), nullable=False),
    schema="orders",
)
Index("orders_newest", orders.c.created_at.desc(), orders.c.id.desc())
Index("orders_by_client", orders.c.client_id, orders.c.created_at.desc(), orders.c.id.desc())
Index("orders_by_customer", orders.c.customer_id, orders.c.created_at.desc(), orders.c.id.desc())
Index("orders_by_status", orders.c.status, orders.c.created_at.desc(), orders.c.id.desc())

order_items = Table(
    "order_items",
    metadata,
    Column(
        "order_id",
        Uuid,
        ForeignKey("orders.orders.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("line_no", SmallInteger, primary_key=True),
    Column("sku", Text, nullable=False),
    Column("quantity", Integer, CheckConstraint("quantity BETWEEN 1 AND 10000"), nullable=False),
    Column(
        "unit_price_cents",
        BigInteger,
        CheckConstraint("unit_price_cents BETWEEN 0 AND 100000000"),
        nullable=False,
    ),
    schema="orders",
)

# The shape Debezium's Outbox Event Router expects, plus the W3C traceparent. Rows are deleted
# in the transaction that inserts them: the INSERT stays in the WAL, the table stays empty.
outbox = Table(
    "outbox",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("aggregatetype", Text, nullable=False),
    Column("aggregateid", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("payload", JSONB, nullable=False),
    Column("traceparent", Text),
    schema="orders",
)

# status/body are NULL only inside the claiming transaction, never once committed.
idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("scope", Text, primary_key=True),
    Column("key", Text, CheckConstraint("length(key) BETWEEN 1 AND 255"), primary_key=True),
    Column("fingerprint", LargeBinary, nullable=False),
    Column("status", SmallInteger),
    Column("body", JSONB),
    Column("created_at", TIMESTAMPTZ, nullable=False),
    schema="orders",  # storage: fillfactor 90 (migration 0001), which metadata cannot express
)
Index("idempotency_keys_by_age", idempotency_keys.c.created_at)

# Written (and emptied at once) by Debezium's heartbeat.action.query: its INSERT moves the
# replication slot forward while no order changes.
heartbeat = Table(
    "heartbeat",
    metadata,
    Column("beat_at", TIMESTAMPTZ, primary_key=True),
    schema="orders",
)
