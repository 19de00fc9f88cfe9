"""Raw Kafka rows -> typed order events and dead letters (pure DataFrame -> DataFrame).

The Spark reader of the one event definition (onceflow.event_definition). A record's value is
read in one JVM pass, EventCheck (event_check.py), which the definition drives as data and which
follows the Python reader's (onceflow.events) procedure, so a record gets the same reason from
both; for a valid event it also gives the typed event (schema.EVENT, as from_json would read
it). Around it, built-in column expressions (code-generated; no Python UDF):
- phase 1's first checks, the tombstone and the size, before EventCheck sees the value;
- phase 6's relations with the record's key and headers, on the typed event.
"""

from functools import cache
from typing import NamedTuple

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)

from onceflow import event_definition as D  # noqa: N812
from onceflow.event_definition import Json
from spark_jobs.aggregation import event_check

_TO_JSON = {"ignoreNullFields": "true"}


def _message(template: str, name: str, value: Column) -> Column:
    """`template` with `{name}` replaced by the text of `value`."""
    before, found, after = template.partition(f"{{{name}}}")
    return F.concat(F.lit(before), value.cast("string"), F.lit(after)) if found else F.lit(template)


def _raw_error(max_event_bytes: int) -> Column:
    """Phase 1's first checks, before EventCheck sees the value: the tombstone and the size."""
    size = F.octet_length("value")
    return F.when(F.col("value").isNull(), F.lit(D.TOMBSTONE)).when(
        size > max_event_bytes,
        _message(D.OVERSIZED.replace("{max}", str(max_event_bytes)), "size", size),
    )


def array_json(path: str) -> str:
    """The column of classify() holding the array at `path` as to_json writes it (its elements'
    fields in the connector's order): the staged items."""
    return path.replace(".", "_") + "_json"


def _arrays_json() -> dict[str, Column]:
    """Every array field outside an array, as to_json writes it (see array_json)."""
    return {
        array_json(f.path): F.to_json(_at(f.path), _TO_JSON)
        for f in D.FIELDS
        if f.json is Json.ARRAY and "[]" not in f.path
    }


def _at(path: str) -> Column:
    """The typed value at `path` (under an array: the array of each element's value)."""
    column = F.col("ev")
    for part in path.split("."):
        column = column[part.removesuffix("[]")]
    return column


def _header(name: str) -> Column:
    """The first header called `name`, as bytes (null when absent). array_position is
    code-generated; a filter() lambda would be interpreted row by row."""
    headers = F.col("headers")
    position = F.array_position(headers["key"], name)
    return F.when(position > 0, F.element_at(headers["value"], position.cast("int")))


def _relation(relation: D.Relation) -> list[tuple[Column, Column]]:
    """Phase 6 for one relation with the key or a header: (failed, reason) pairs in order."""
    reason = F.lit(relation.reason)
    match relation:
        case D.KeyEquals(field=field, missing=missing):
            key = F.col("key")
            return [(key.isNull(), F.lit(missing)), (_differs(key, _at(field)), reason)]
        case D.HeaderEquals(header=header, field=field):
            value = _header(header)
            return [(value.isNotNull() & _differs(value, _at(field)), reason)]
    raise ValueError(f"EventCheck decides {relation!r}, not a column")


def _differs(raw: Column, text: Column) -> Column:
    """Whether the bytes `raw` are not the UTF-8 of the string `text`: compared as strings, byte
    for byte (a cast of bytes to a string copies nothing; encode() would build a Java string and
    its bytes for every record). A string of a valid event is valid UTF-8 (phase 1)."""
    return raw.cast("string") != text


def _record_error() -> Column:
    """Phase 6's relations with the record's key and headers (after the value's, which
    EventCheck decides), on the typed event (null when they hold)."""
    decided = len(event_check.value_relations())
    chain = F.when(F.lit(False), F.lit(None).cast("string"))
    for relation in D.RELATIONS[decided:]:
        for failed, reason in _relation(relation):
            chain = chain.when(failed, reason)
    return chain


class _Classified(NamedTuple):
    read: tuple[Column, ...]  # the raw row's columns as classify names them
    derived: tuple[dict[str, Column], ...]  # added in turn: a later one reads earlier ones
    dropped: tuple[str, ...]  # the steps' helpers


@cache
def _classified(max_event_bytes: int) -> _Classified:
    """classify's columns, built once per process: a Column is an unresolved expression that
    serves every DataFrame with the named columns, and building one costs py4j round trips
    (docs/benchmarks.md, "The checks' columns built once")."""
    read = (
        F.col("key"),
        F.col("value"),
        F.col("topic"),
        F.col("partition").alias("kafka_partition"),
        F.col("offset").alias("kafka_offset"),
        F.col("timestamp").alias("kafka_timestamp"),
        F.col("headers"),
    )
    derived = (
        {"raw_error": _raw_error(max_event_bytes)},
        {"checked": F.when(F.col("raw_error").isNull(), event_check.checked(F.col("value")))},
        {"ev": F.col("checked")["event"]},
        _arrays_json(),
        {"error": F.coalesce("raw_error", F.col("checked")["error"], _record_error())},
    )
    return _Classified(read, derived, ("raw_error", "checked"))


def classify(raw: DataFrame, max_event_bytes: int) -> DataFrame:
    """Every raw record with its parsed event (`ev`), each of its arrays as JSON text
    (array_json) and `error` (null for a valid event)."""
    columns = _classified(max_event_bytes)
    classified = raw.select(*columns.read)
    for step in columns.derived:
        classified = classified.withColumns(step)
    return classified.drop(*columns.dropped)


def fingerprint(ev: Column) -> Column:
    """The event's content fingerprint: Spark's xxhash64 of the typed event (its fields, not its
    text), so the same event with another key order, whitespace or escapes has the same one;
    meaningful only for a valid event, whose every field is present. services/ops/
    fingerprint.py computes the same without Spark."""
    return F.xxhash64(ev)


def annotated(classified: DataFrame) -> DataFrame:
    """Every record with its typed event columns (meaningful only where `error` is null), its
    raw key and value, and `error`: one pass serves both outputs (events and dead letters)."""
    return classified.select(*_annotated())


@cache
def _annotated() -> tuple[Column, ...]:
    """annotated's columns, built once per process (see _classified)."""
    ev = F.col("ev")
    occurred_at = F.try_to_timestamp(ev["occurred_at"])
    return (
        F.col("topic"),
        F.col("kafka_partition"),
        F.col("kafka_offset"),
        F.col("kafka_timestamp"),
        F.lower(ev["event_id"]).alias("event_id"),
        ev["event_type"].alias("event_type"),
        occurred_at.alias("occurred_at"),
        F.to_date(occurred_at).alias("day"),
        ev["order"]["id"].alias("order_id"),
        ev["order"]["customer_id"].alias("customer_id"),
        ev["order"]["currency"].alias("currency"),
        ev["order"]["status"].alias("status"),
        ev["order"]["total_cents"].alias("total_cents"),
        ev["order"]["items"].alias("items"),
        F.col(array_json("order.items")).alias("items_json"),
        fingerprint(ev).alias("fingerprint"),
        F.col("key"),
        F.col("value"),
        F.col("error"),
    )
