"""What one micro-batch stages in Postgres, defined once: the columns of each staged table, how
each is written as COPY text, the staging-area and temp-table statements all derive from it.

A batch goes through two places in Postgres: the staging area (analytics.staged_*, UNLOGGED,
keyed by (query id, batch id, part); the executors COPY their parts there in parallel, stage.py)
and, inside the fold's transaction, the session's temp tables (unstage.py moves the batch there,
merge.py folds it). The per-table aggregation happens in Postgres, inside that transaction,
because only Postgres knows which event ids earlier batches counted: the durable
de-duplication must come before any sum. Spark does the expensive, parallel part (parsing,
validating, rendering, writing); measured on 2 cores, aggregating in Spark first cost ~2.5 s of
fixed overhead per micro-batch (a shuffle stage per table) against ~0.2 s for the GROUP BYs in
Postgres.
"""

from dataclasses import dataclass
from typing import Literal

from pyspark.sql import Column

from spark_jobs.aggregation import copytext

# text: escaped for COPY; verbatim: parse.py validated it to hold no tab, newline, CR or
# backslash (numbers, UUIDs, enums, timestamps, identifiers of [A-Za-z0-9._:-], JSON of those),
# so the four string replaces of escaping (most of the rendering cost) are skipped; bytea: hex.
Encoding = Literal["text", "verbatim", "bytea"]
# The staging area's key columns, before each staged table's own (onceflow/schema/staged.py).
KEY = ("query_id", "batch_id", "part")


@dataclass(frozen=True)
class Staged:
    """One column of a staged table."""

    name: str
    pg_type: str
    encoding: Encoding


@dataclass(frozen=True)
class StagedTable:
    """A temp table one batch is folded from (emptied at commit), and the staging-area table
    (`area`, "" for none) the executors COPY the batch into, keyed by KEY."""

    name: str
    columns: tuple[Staged, ...]
    area: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        """The column names, in COPY order."""
        return tuple(c.name for c in self.columns)

    def create(self) -> str:
        """The DDL, run once per connection."""
        cols = ", ".join(f"{c.name} {c.pg_type}" for c in self.columns)
        return f"CREATE TEMP TABLE IF NOT EXISTS {self.name} ({cols}) ON COMMIT DELETE ROWS"

    def stage(self) -> str:
        """The COPY statement that loads one part into the staging area (KEY, then columns)."""
        return f"COPY {self.area} ({', '.join((*KEY, *self.names))}) FROM STDIN"

    def unstage(self) -> str:
        """Moves one staged batch (query id, batch id) into the temp table."""
        names = ", ".join(self.names)
        return (
            f"INSERT INTO {self.name} ({names}) SELECT {names} FROM {self.area}"
            " WHERE query_id = %s AND batch_id = %s"
        )

    def line(self) -> Column:
        """A row rendered as one COPY text line."""
        return copytext.line(
            self.names,
            bytea=[c.name for c in self.columns if c.encoding == "bytea"],
            verbatim=[c.name for c in self.columns if c.encoding == "verbatim"],
        )


EVENTS = StagedTable(
    "t_events",
    (
        Staged("kafka_partition", "integer", "verbatim"),
        Staged("kafka_offset", "bigint", "verbatim"),
        # The record's Kafka timestamp (an order's journey, migration 0009).
        Staged("kafka_timestamp", "timestamptz", "verbatim"),
        Staged("event_id", "uuid", "verbatim"),
        Staged("event_type", "text", "verbatim"),
        Staged("occurred_at", "timestamptz", "verbatim"),
        Staged("day", "date", "verbatim"),
        # order.id is only checked to equal the key: it may hold anything.
        Staged("order_id", "text", "text"),
        Staged("customer_id", "text", "verbatim"),
        Staged("currency", "text", "verbatim"),
        Staged("status", "text", "verbatim"),
        Staged("status_rank", "smallint", "verbatim"),
        Staged("total_cents", "bigint", "verbatim"),
        Staged("items", "jsonb", "verbatim"),
    ),
    "analytics.staged_events",
)
DEAD_LETTERS = StagedTable(
    "t_dead",
    (
        Staged("topic", "text", "text"),
        Staged("kafka_partition", "integer", "verbatim"),
        Staged("kafka_offset", "bigint", "verbatim"),
        Staged("key", "bytea", "bytea"),
        Staged("value", "bytea", "bytea"),
        Staged("error", "text", "text"),
    ),
    "analytics.staged_dead_letters",
)
# The staged tables by temp-table name (what a part's `kind` says).
BY_KIND = {t.name: t for t in (EVENTS, DEAD_LETTERS)}
