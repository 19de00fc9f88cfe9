"""The order event of contract section 4, as an explicit Spark schema, and its vocabulary."""

from pyspark.sql.types import (
    ArrayType,
    LongType,
    StringType,
    StructField,
    StructType,
)

SCHEMA_VERSION = 1
CORRUPT_COLUMN = "_corrupt_record"

PLACED = "OrderPlaced"
PAID = "OrderPaid"
SHIPPED = "OrderShipped"
CANCELLED = "OrderCancelled"

# event_type -> the order's status after that change, and its rank among one order's events
# (used to pick the latest event when two share an occurred_at).
STATUS_OF = {PLACED: "PLACED", PAID: "PAID", SHIPPED: "SHIPPED", CANCELLED: "CANCELLED"}
STATUS_RANK = {"PLACED": 0, "PAID": 1, "SHIPPED": 2, "CANCELLED": 2}

MAX_ITEMS = 100
MAX_QUANTITY = 10_000
MAX_UNIT_PRICE_CENTS = 100_000_000

UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\z"
NAME_PATTERN = r"^[A-Za-z0-9._:-]{1,64}\z"
CURRENCY_PATTERN = r"^[A-Z]{3}\z"
TIMESTAMP_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})\z"

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
