"""Raw Kafka rows -> typed order events and dead letters (pure DataFrame -> DataFrame).

Input: the Kafka source's columns (key, value, topic, partition, offset, timestamp, headers). A
record is a valid v1 event only if every check below passes; otherwise it becomes a dead letter
carrying the first failed check as its reason. Nothing is guessed or repaired.
"""

from functools import cache

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)

from onceflow import contract as C  # noqa: N812
from spark_jobs.aggregation import schema as S  # noqa: N812

JSON_OPTIONS = {
    "mode": "PERMISSIVE",
    "columnNameOfCorruptRecord": S.CORRUPT_COLUMN,
    "allowSingleQuotes": "false",
    "allowNonNumericNumbers": "false",
    "allowNumericLeadingZeros": "false",
    "allowUnquotedControlChars": "false",
}


def _header(name: str) -> Column:
    """The first header called `name`, as UTF-8 text (null when absent). array_position is
    code-generated; a filter() lambda would be interpreted row by row."""
    headers = F.col("headers")
    position = F.array_position(headers["key"], name)
    return F.when(position > 0, F.element_at(headers["value"], position.cast("int"))).cast("string")


def _timestamp_ok(c: Column) -> Column:
    return c.rlike(S.TIMESTAMP_PATTERN) & F.try_to_timestamp(c).isNotNull()


@cache
def _error(max_event_bytes: int) -> Column:
    """The first reason the record is not a valid v1 event, or null when it is one.

    Built once per process (a Column is an unresolved expression, reusable by every batch):
    building this tree costs hundreds of py4j calls.
    """
    ev = F.col("ev")
    order = ev["order"]
    items = order["items"]
    text = F.col("value").cast("string")
    # Item checks use array functions (code-generated) rather than lambdas (interpreted).
    skus, quantities, prices = items["sku"], items["quantity"], items["unit_price_cents"]
    items_total = F.aggregate(
        items,
        F.lit(0).cast("long"),
        lambda acc, i: acc + i["quantity"] * i["unit_price_cents"],
    )
    required = [
        ("event_id", ev["event_id"]),
        ("event_type", ev["event_type"]),
        ("occurred_at", ev["occurred_at"]),
        ("order", order),
        ("order.id", order["id"]),
        ("order.customer_id", order["customer_id"]),
        ("order.currency", order["currency"]),
        ("order.status", order["status"]),
        ("order.total_cents", order["total_cents"]),
        ("order.created_at", order["created_at"]),
        ("order.updated_at", order["updated_at"]),
        ("order.items", items),
    ]
    known_types = list(S.STATUS_OF)
    expected_status = F.create_map(*[F.lit(x) for kv in S.STATUS_OF.items() for x in kv])[
        ev["event_type"]
    ]
    header_id, header_type = _header("id"), _header("eventType")

    chain = (
        F.when(F.col("value").isNull(), F.lit("empty value (tombstone)"))
        .when(
            F.octet_length("value") > max_event_bytes,
            F.concat(
                F.lit("oversized: "),
                F.octet_length("value").cast("string"),
                F.lit(f" bytes > {max_event_bytes}"),
            ),
        )
        .when(~F.is_valid_utf8(text), F.lit("value is not UTF-8 text"))
        .when(
            F.col("ev").isNull() | ev[S.CORRUPT_COLUMN].isNotNull(),
            # Parse again only for the rare bad record, to say why.
            F.when(F.try_parse_json(text).isNull(), F.lit("value is not JSON"))
            .when(F.json_object_keys(text).isNull(), F.lit("value is not a JSON object"))
            .otherwise(F.lit("wrong schema: a field has the wrong JSON type")),
        )
        .when(ev["schema_version"].isNull(), F.lit("missing field schema_version"))
        .when(
            ev["schema_version"] != S.SCHEMA_VERSION,
            F.concat(F.lit("unsupported schema_version "), ev["schema_version"].cast("string")),
        )
    )
    for name, column in required:
        chain = chain.when(column.isNull(), F.lit(f"missing field {name}"))
    return (
        chain.when(
            ~ev["event_type"].isin(known_types),
            F.concat(F.lit("unknown event_type "), ev["event_type"]),
        )
        .when(~ev["event_id"].rlike(S.UUID_PATTERN), F.lit("event_id is not a UUID"))
        .when(~_timestamp_ok(ev["occurred_at"]), F.lit("occurred_at is not an ISO 8601 time"))
        .when(
            ~order["created_at"].rlike(S.TIMESTAMP_PATTERN),
            F.lit("order.created_at is not an ISO 8601 time"),
        )
        .when(
            ~order["updated_at"].rlike(S.TIMESTAMP_PATTERN),
            F.lit("order.updated_at is not an ISO 8601 time"),
        )
        .when(F.length(order["id"]) == 0, F.lit("order.id is empty"))
        .when(~order["customer_id"].rlike(S.NAME_PATTERN), F.lit("invalid order.customer_id"))
        .when(~order["currency"].rlike(S.CURRENCY_PATTERN), F.lit("invalid order.currency"))
        .when(
            order["status"] != expected_status,
            F.lit("order.status does not match event_type"),
        )
        .when(
            (F.size(items) < C.MIN_ITEMS) | (F.size(items) > C.MAX_ITEMS),
            F.lit(f"order.items must have {C.MIN_ITEMS}..{C.MAX_ITEMS} items"),
        )
        .when(
            (F.size(F.array_compact(skus)) != F.size(items))
            | (F.size(F.array_compact(quantities)) != F.size(items))
            | (F.size(F.array_compact(prices)) != F.size(items)),
            F.lit("order.items[] has a missing sku, quantity or unit_price_cents"),
        )
        .when(
            ~F.array_join(skus, "\n").rlike(S.SKU_LIST_PATTERN), F.lit("invalid order.items[].sku")
        )
        .when(
            (F.array_min(quantities) < C.MIN_QUANTITY) | (F.array_max(quantities) > C.MAX_QUANTITY),
            F.lit(f"order.items[].quantity outside {C.MIN_QUANTITY}..{C.MAX_QUANTITY}"),
        )
        .when(
            (F.array_min(prices) < C.MIN_UNIT_PRICE_CENTS)
            | (F.array_max(prices) > C.MAX_UNIT_PRICE_CENTS),
            F.lit(
                "order.items[].unit_price_cents outside "
                f"{C.MIN_UNIT_PRICE_CENTS}..{C.MAX_UNIT_PRICE_CENTS}"
            ),
        )
        .when(
            order["total_cents"] != items_total,
            F.lit("order.total_cents is not the sum of its items"),
        )
        .when(F.col("key").isNull(), F.lit("missing key"))
        .when(F.col("key").cast("string") != order["id"], F.lit("key does not match order.id"))
        .when(
            header_id.isNotNull() & (header_id != ev["event_id"]),
            F.lit("header id does not match event_id"),
        )
        .when(
            header_type.isNotNull() & (header_type != ev["event_type"]),
            F.lit("header eventType does not match event_type"),
        )
    )


def classify(raw: DataFrame, max_event_bytes: int) -> DataFrame:
    """Every raw record with its parsed event (`ev`) and `error` (null for a valid event)."""
    text = F.col("value").cast("string")
    return (
        raw.select(
            "key",
            "value",
            "topic",
            F.col("partition").alias("kafka_partition"),
            F.col("offset").alias("kafka_offset"),
            F.col("timestamp").alias("kafka_timestamp"),
            F.col("headers"),
        )
        # Oversized and non-UTF-8 values are never handed to the JSON parser.
        .withColumn(
            "ev",
            F.when(
                (F.octet_length("value") <= max_event_bytes) & F.is_valid_utf8(text),
                F.from_json(text, S.EVENT_WITH_CORRUPT, JSON_OPTIONS),
            ),
        )
        .withColumn("error", _error(max_event_bytes))
    )


def annotated(classified: DataFrame) -> DataFrame:
    """Every record with its typed event columns (meaningful only where `error` is null), its
    raw key and value, and `error`: one pass serves both outputs (events and dead letters)."""
    ev = F.col("ev")
    occurred_at = F.try_to_timestamp(ev["occurred_at"])
    return classified.select(
        "topic",
        "kafka_partition",
        "kafka_offset",
        "kafka_timestamp",
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
        "key",
        "value",
        "error",
    )
