"""What one micro-batch stages in Postgres, defined once: the columns of each staged table, how
each is written as COPY text, the temp-table DDL and the COPY statement all derive from it.

The per-table aggregation happens in Postgres, inside the batch's transaction (merge.py),
because only Postgres knows which event ids earlier batches counted: the durable
de-duplication must come before any sum. Spark does the expensive, parallel part (parsing,
validating, rendering); measured on 2 cores, aggregating in Spark first cost ~2.5 s of fixed
overhead per micro-batch (a shuffle stage per table) against ~0.2 s for the GROUP BYs in Postgres.
"""

from dataclasses import dataclass
from typing import Literal

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)

from spark_jobs.aggregation import copytext
from spark_jobs.aggregation import schema as S  # noqa: N812

# text: escaped for COPY; verbatim: parse.py validated it to hold no tab, newline, CR or
# backslash (numbers, UUIDs, enums, timestamps, identifiers of [A-Za-z0-9._:-], JSON of those),
# so the four string replaces of escaping (most of the rendering cost) are skipped; bytea: hex.
Encoding = Literal["text", "verbatim", "bytea"]


@dataclass(frozen=True)
class Staged:
    """One column of a staged table."""

    name: str
    pg_type: str
    encoding: Encoding


@dataclass(frozen=True)
class StagedTable:
    """A temp table one batch is COPYed into (emptied at commit)."""

    name: str
    columns: tuple[Staged, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The column names, in COPY order."""
        return tuple(c.name for c in self.columns)

    def create(self) -> str:
        """The DDL, run once per connection."""
        cols = ", ".join(f"{c.name} {c.pg_type}" for c in self.columns)
        return f"CREATE TEMP TABLE IF NOT EXISTS {self.name} ({cols}) ON COMMIT DELETE ROWS"

    def copy(self) -> str:
        """The COPY statement that loads one payload."""
        return f"COPY {self.name} ({', '.join(self.names)}) FROM STDIN"

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
)


def status_rank(status: Column) -> Column:
    """The status's rank (contract.STATUS_RANK): orders one order's events of the same instant."""
    rank = F.create_map(*[F.lit(x) for kv in S.STATUS_RANK.items() for x in kv])
    return rank[status].cast("short")


def counted_items(event_type: Column, items: Column) -> Column:
    """The items as a JSON array for OrderPlaced and OrderCancelled (the only events
    product_sales counts), null for the others."""
    return F.when(event_type.isin(S.PLACED, S.CANCELLED), F.to_json(items))


def event_rows(events: DataFrame, *keep: str) -> DataFrame:
    """One row per record (EVENTS' columns, then the `keep` columns): the event, with its
    counted items as JSON that Postgres expands (cheaper than one Spark row per item)."""
    computed = {
        "status_rank": status_rank(F.col("status")),
        "items": counted_items(F.col("event_type"), F.col("items")),
    }
    return events.select(
        *[computed[c].alias(c) if c in computed else F.col(c) for c in EVENTS.names], *keep
    )
