"""What one micro-batch stages in Postgres, defined once: the columns of each temp table, and
the staging area's columns and statements, all derive from it.

A batch goes through two places in Postgres: the staging area (aggregation.staged_records,
UNLOGGED, keyed by (query id, batch id); the executors write their partitions there in parallel
with Spark's JDBC writer, stage.py) and, inside the fold's transaction, the session's temp tables
(unstage.py moves the batch there, merge.py folds it). Each staged row is one Kafka record: a
valid event (error NULL: the columns of EVENTS) or a dead letter (those of DEAD_LETTERS).
The per-table aggregation happens in Postgres, inside that transaction, because only Postgres
knows which event ids earlier batches counted: the durable de-duplication must come before any
sum. Spark does the expensive, parallel part (parsing, validating, writing); measured on 2 cores,
aggregating in Spark first cost ~2.5 s of fixed overhead per micro-batch (a shuffle stage per
table) against ~0.2 s for the GROUP BYs in Postgres.
"""

from dataclasses import dataclass

AREA = "aggregation.staged_records"
# Where the executors insert a batch (into AREA): a view that shows no row, the only relation
# their role may write (migrations/sql/aggregation/staging_inbox.sql, migration 0019).
INBOX = "aggregation.staging_inbox"
# The staging area's key, before the records' columns (onceflow/schema/staged.py).
KEY = ("query_id", "batch_id")
# A record is one Kafka position: a retried Spark task may have staged its rows twice.
POSITION = ("kafka_partition", "kafka_offset")


@dataclass(frozen=True)
class Staged:
    """One column of a temp table."""

    name: str
    pg_type: str


@dataclass(frozen=True)
class StagedTable:
    """A temp table one batch is folded from (emptied at commit), filled from the staging area's
    rows that match `where`."""

    name: str
    columns: tuple[Staged, ...]
    where: str = "true"

    @property
    def names(self) -> tuple[str, ...]:
        """The column names."""
        return tuple(c.name for c in self.columns)

    def create(self) -> str:
        """The DDL, run once per connection."""
        cols = ", ".join(f"{c.name} {c.pg_type}" for c in self.columns)
        return f"CREATE TEMP TABLE IF NOT EXISTS {self.name} ({cols}) ON COMMIT DELETE ROWS"

    def unstage(self) -> str:
        """Moves one staged batch (query id, batch id) into the temp table, each record once."""
        names = ", ".join(self.names)
        position = ", ".join(POSITION)
        return (
            f"INSERT INTO {self.name} ({names}) SELECT DISTINCT ON ({position}) {names}"
            f" FROM {AREA} WHERE query_id = %s AND batch_id = %s AND {self.where}"
        )


EVENTS = StagedTable(
    "t_events",
    (
        Staged("kafka_partition", "integer"),
        Staged("kafka_offset", "bigint"),
        # The record's Kafka timestamp (an order's journey, migration 0009).
        Staged("kafka_timestamp", "timestamptz"),
        Staged("event_id", "uuid"),
        Staged("event_type", "text"),
        Staged("occurred_at", "timestamptz"),
        Staged("day", "date"),
        # order.id is only checked to equal the key: it may hold anything.
        Staged("order_id", "text"),
        Staged("customer_id", "text"),
        Staged("currency", "text"),
        Staged("status", "text"),
        Staged("status_rank", "smallint"),
        Staged("total_cents", "bigint"),
        Staged("items", "jsonb"),
        # A hash of the event's parsed content (parse.py): copies of one event id with other
        # content are dead letters (merge.py; migration 0012).
        Staged("fingerprint", "bigint"),
    ),
    "error IS NULL",
)
DEAD_LETTERS = StagedTable(
    "t_dead",
    (
        Staged("topic", "text"),
        Staged("kafka_partition", "integer"),
        Staged("kafka_offset", "bigint"),
        Staged("key", "bytea"),
        Staged("value", "bytea"),
        Staged("error", "text"),
    ),
    "error IS NOT NULL",
)
# Inside the fold: the records whose event id was counted (or comes first in the batch) with
# other content, each with its key (a valid event's key is its order id).
REUSED = StagedTable(
    "t_reused",
    (
        Staged("kafka_partition", "integer"),
        Staged("kafka_offset", "bigint"),
        Staged("key", "bytea"),
    ),
)
# Inside the fold: the batch's new event ids an earlier batch counted, with the fingerprints it
# remembered and whether one was remembered without (unknown content).
COUNTED = StagedTable(
    "t_counted",
    (
        Staged("event_id", "uuid"),
        Staged("fingerprints", "bigint[]"),
        Staged("unknown", "boolean"),
    ),
)
# Inside the fold: the refunds the batch completes (sql/refunds.sql), one row per order whose
# cancellation and payment are both counted once the batch is: the cancellation's day.
REFUNDS = StagedTable(
    "t_refunds",
    (
        Staged("order_id", "text"),
        Staged("day", "date"),
        Staged("currency", "text"),
        Staged("customer_id", "text"),
        Staged("refunded_cents", "bigint"),
    ),
)
# Inside the fold: the batch's items per UTC day, SKU and currency (sql/products.sql).
PRODUCTS = StagedTable(
    "t_products",
    (
        Staged("day", "date"),
        Staged("sku", "text"),
        Staged("currency", "text"),
        Staged("units_placed", "bigint"),
        Staged("placed_cents", "bigint"),
        Staged("units_cancelled", "bigint"),
        Staged("cancelled_cents", "bigint"),
    ),
)
# The staging area's columns after KEY: every temp table's, once, in this order.
COLUMNS = tuple(dict.fromkeys((*EVENTS.names, *DEAD_LETTERS.names)))


@dataclass(frozen=True)
class Counts:
    """What the executors staged: records, of which dead letters."""

    records: int
    dead_letters: int

    @property
    def events(self) -> int:
        """The valid records."""
        return self.records - self.dead_letters
