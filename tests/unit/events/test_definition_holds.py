"""What writes an event holds against its one definition (onceflow/event_definition.py): the
envelope built by orders.emit_event, the order document built by orders.order_json and
orders.items_json, the items orders.place_order is given, and the API's OrderOut. Every defined
field is written and every written field is defined; OrderOut states the definition's types and
bounds; the SQL takes the event type and schema version as arguments (no literal)."""

import re
from collections.abc import Callable
from dataclasses import fields
from typing import Any

import pytest

from migrations import functions
from onceflow import contract as C  # noqa: N812
from onceflow import event_definition as D  # noqa: N812
from onceflow.event_definition import Field, Json
from services.orders.domain.order import LineItem
from services.orders.entrypoints.schemas import OrderOut
from tests.unit.events.sql_objects import built_objects

JSON_TYPES = {
    Json.STRING: "string",
    Json.INTEGER: "integer",
    Json.OBJECT: "object",
    Json.ARRAY: "array",
}
# Patterns that pydantic states as a format (which implies the length).
FORMATS = {C.UUID: "uuid", C.TIMESTAMP: "date-time"}
# The JSON Schema keywords a definition's rule is comparable with.
KEYWORDS = ("type", "format", "pattern", "maxLength", "enum", "minimum", "maximum")
ARRAY_KEYWORDS = {"minimum": "minItems", "maximum": "maxItems"}
ORDER, ITEMS = "order", "order.items[]"
SCHEMA = OrderOut.model_json_schema()


def mismatch(writer: str, written: set[str], obj: str) -> str:
    """What `writer` gets wrong about the fields of the object at path `obj` ("" if nothing)."""
    defined = {f.name for f in D.children(obj)}
    where = f"the {obj or 'event'} object of onceflow/event_definition.py"
    problems = [
        *(f"{writer} does not write {name!r}, a field of {where}" for name in defined - written),
        *(
            f"{writer} writes {name!r}, which is not a field of {where}"
            for name in written - defined
        ),
    ]
    return "; ".join(sorted(problems))


def sql_keys(function: str) -> set[str]:
    """The keys of the one JSON object `function`'s file builds."""
    (built,) = built_objects((functions.FOLDER / f"{function}.sql").read_text())
    return set(built)


def resolve(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema`, or the definition in OrderOut's $defs it refers to."""
    ref = schema.get("$ref")
    return SCHEMA["$defs"][ref.rpartition("/")[2]] if ref else schema


def model_object(obj: str) -> dict[str, Any]:
    """OrderOut's JSON Schema of the object at path `obj`."""
    return SCHEMA if obj == ORDER else resolve(SCHEMA["properties"]["items"]["items"])


def rule(field: Field) -> dict[str, Any]:
    """The field's type and rule as JSON Schema keywords."""
    stated: dict[str, Any] = {"type": JSON_TYPES[field.json]}
    if field.pattern in FORMATS:
        stated["format"] = FORMATS[field.pattern]
    elif field.pattern is not None:
        stated |= {"pattern": f"^(?:{field.pattern})$", "maxLength": field.max_length}
    if field.one_of:
        stated["enum"] = list(field.one_of)
    for bound in ("minimum", "maximum"):
        if (value := getattr(field, bound)) is not None:
            keyword = ARRAY_KEYWORDS[bound] if field.json is Json.ARRAY else bound
            stated[keyword] = value
    return stated


# Each writer's field names, and the path of the object it writes.
WRITERS: dict[str, tuple[Callable[[], set[str]], str]] = {
    "orders.emit_event (the envelope)": (lambda: sql_keys("emit_event"), D.ROOT),
    "orders.order_json (the order document)": (lambda: sql_keys("order_json"), ORDER),
    "orders.items_json (a transition's items)": (lambda: sql_keys("items_json"), ITEMS),
    "LineItem (the items place_order is given)": (
        lambda: {f.name for f in fields(LineItem)},
        ITEMS,
    ),
    "OrderOut": (lambda: set(model_object(ORDER)["properties"]), ORDER),
    "ItemOut (OrderOut's items)": (lambda: set(model_object(ITEMS)["properties"]), ITEMS),
}


@pytest.mark.parametrize("writer", WRITERS)
def test_every_defined_field_is_written_and_every_written_field_defined(writer: str) -> None:
    written, obj = WRITERS[writer]
    assert not (problems := mismatch(writer, written(), obj)), problems


def test_a_missing_and_an_undefined_field_are_both_named() -> None:
    problems = mismatch("W", {"sku", "quantity", "price"}, ITEMS)
    assert problems == (
        "W does not write 'unit_price_cents', a field of the order.items[] object of "
        "onceflow/event_definition.py; W writes 'price', which is not a field of the "
        "order.items[] object of onceflow/event_definition.py"
    )


@pytest.mark.parametrize("field", [f for f in D.FIELDS if f.parent], ids=lambda f: f.path)
def test_order_out_states_the_definitions_type_and_bounds(field: Field) -> None:
    model = model_object(field.parent)
    stated = resolve(model["properties"][field.name])
    assert {k: stated[k] for k in (*KEYWORDS, *ARRAY_KEYWORDS.values()) if k in stated} == rule(
        field
    ), f"OrderOut's {field.path} is not as onceflow/event_definition.py defines it"
    assert (field.name in model["required"]) is field.required, field.path


@pytest.mark.parametrize("field", [f for f in D.FIELDS if f.gate], ids=lambda f: f.path)
def test_emit_event_writes_the_kind_of_event_it_is_given(field: Field) -> None:
    (envelope,) = built_objects((functions.FOLDER / "emit_event.sql").read_text())
    assert re.fullmatch(r"p_\w+", envelope[field.name]), (
        f"orders.emit_event writes {field.name} {envelope[field.name]}, not an argument "
        "(the API passes the contract's)"
    )


def test_place_order_writes_no_event_type_or_status_of_its_own() -> None:
    body = (functions.FOLDER / "place_order.sql").read_text()
    literals = {*C.EventType, *C.OrderStatus} & set(re.findall(r"'(\w+)'", body))
    assert not literals, f"orders.place_order writes {literals} itself, not from its arguments"
