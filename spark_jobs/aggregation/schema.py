"""The order event as an explicit Spark schema, derived from the one definition
(onceflow.event_definition), with the contract's vocabulary in the forms the job needs."""

from collections.abc import Callable

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
Order = Callable[[tuple[Field, ...]], tuple[Field, ...]]


def full_match(pattern: str) -> str:
    """A Java regex matching the whole text (rlike finds; `\\z` is the very end)."""
    return rf"^(?:{pattern})\z"


def struct(*, path: str = D.ROOT, order: Order = D.wire_order) -> StructType:
    """The object at `path` as a StructType, its fields (and theirs) in `order`."""
    return StructType(
        [StructField(f.name, spark_type(field=f, order=order)) for f in order(D.children(path))]
    )


def spark_type(*, field: Field, order: Order = D.wire_order) -> DataType:
    """The Spark type that holds a field's value."""
    if field.json is Json.OBJECT:
        return struct(path=field.path, order=order)
    if field.json is Json.ARRAY:
        return ArrayType(struct(path=field.elements, order=order))
    return _SCALARS[field.json]


def document_order(fields: tuple[Field, ...]) -> tuple[Field, ...]:
    """`fields` in the definition's (the contract's) document order."""
    return fields


# The event as records carry it: fields in the connector's (jsonb's) order (EventCheck builds a
# valid event's row in it; to_json of its items is the connector's text).
EVENT = struct()
