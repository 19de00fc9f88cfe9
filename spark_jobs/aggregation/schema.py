"""The order event as an explicit Spark schema, derived from the one definition
(onceflow.event_definition), with the contract's vocabulary in the forms the job needs."""

from pyspark.sql.types import (
    ArrayType,
    DataType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from onceflow import contract
from onceflow import event_definition as D  # noqa: N812
from onceflow.event_definition import Field, Json

SCHEMA_VERSION = contract.SCHEMA_VERSION

PLACED = contract.EventType.PLACED.value
CANCELLED = contract.EventType.CANCELLED.value
# event_type -> the order's status after that change; status -> its rank among one order's
# events (picks the latest of two that share an occurred_at).
STATUS_OF = {event.value: status.value for event, status in contract.STATUS_AFTER.items()}
STATUS_RANK = {status.value: rank for status, rank in contract.STATUS_RANK.items()}

_SCALARS: dict[Json, DataType] = {Json.STRING: StringType(), Json.INTEGER: LongType()}


def struct(*, path: str = D.ROOT) -> StructType:
    """The object at `path` as a StructType, its fields (and theirs) in the wire's order."""
    return StructType(
        [StructField(f.name, spark_type(field=f)) for f in D.wire_order(D.children(path))]
    )


def spark_type(*, field: Field) -> DataType:
    """The Spark type that holds a field's value."""
    if field.json is Json.OBJECT:
        return struct(path=field.path)
    if field.json is Json.ARRAY:
        return ArrayType(struct(path=field.elements))
    return _SCALARS[field.json]


# The event as records carry it: fields in the connector's (jsonb's) order (EventCheck builds a
# valid event's row in it; to_json of its items is the connector's text).
EVENT = struct()
