"""The order event of contract section 4 as an explicit Spark schema, with the contract's
vocabulary and limits in the forms the parser needs (all derived from onceflow.contract)."""

from pyspark.sql.types import (
    ArrayType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from onceflow import contract

SCHEMA_VERSION = contract.SCHEMA_VERSION
CORRUPT_COLUMN = "_corrupt_record"

PLACED = contract.EventType.PLACED.value
CANCELLED = contract.EventType.CANCELLED.value
# event_type -> the order's status after that change; status -> its rank among one order's
# events (picks the latest of two that share an occurred_at).
STATUS_OF = {event.value: status.value for event, status in contract.STATUS_AFTER.items()}
STATUS_RANK = {status.value: rank for status, rank in contract.STATUS_RANK.items()}


def full_match(pattern: str) -> str:
    """A Java regex matching the whole text (rlike finds; `\\z` is the very end)."""
    return rf"^(?:{pattern})\z"


UUID_PATTERN = full_match(contract.UUID)
NAME_PATTERN = full_match(contract.IDENTIFIER)
CURRENCY_PATTERN = full_match(contract.CURRENCY)
TIMESTAMP_PATTERN = full_match(contract.TIMESTAMP)
# The skus of an order joined by newlines: every line one identifier.
SKU_LIST_PATTERN = rf"^(?:(?:{contract.IDENTIFIER})\n)*(?:{contract.IDENTIFIER})\z"

ITEM = StructType(
    [
        StructField("sku", StringType()),
        StructField("quantity", LongType()),
        StructField("unit_price_cents", LongType()),
    ]
)

ORDER = StructType(
    [
        StructField("id", StringType()),
        StructField("customer_id", StringType()),
        StructField("currency", StringType()),
        StructField("status", StringType()),
        StructField("total_cents", LongType()),
        StructField("created_at", StringType()),
        StructField("updated_at", StringType()),
        StructField("items", ArrayType(ITEM)),
    ]
)

EVENT = StructType(
    [
        StructField("event_id", StringType()),
        StructField("event_type", StringType()),
        StructField("schema_version", LongType()),
        StructField("occurred_at", StringType()),
        StructField("order", ORDER),
    ]
)

# What from_json parses into: the event plus the raw text when a field has the wrong type.
EVENT_WITH_CORRUPT = StructType([*EVENT.fields, StructField(CORRUPT_COLUMN, StringType())])
