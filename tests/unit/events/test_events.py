"""onceflow.events reads the shared corpus (tests/oracle/events.py) with the reasons the
aggregation job gives for the same records (tests/spark/aggregation/test_dead_letters.py)."""

from collections.abc import Callable
from typing import Any

import pytest

from onceflow.events import InvalidEventError, parse
from tests.oracle.events import BAD, BAD_ORDERS, MAX, Record, event, record


def reason(r: Record) -> str | None:
    key, value, _topic, _partition, _offset, headers = r
    try:
        parse(key, value, headers, MAX)
    except InvalidEventError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize(("make", "expected"), BAD)
def test_bad_records_give_the_jobs_reason(make: Callable[[], Record], expected: str) -> None:
    assert reason(record(event())) is None
    assert reason(make()) == expected


@pytest.mark.parametrize(("order", "expected"), BAD_ORDERS)
def test_item_and_name_checks_are_anchored(order: dict[str, Any], expected: str) -> None:
    assert reason(record(event(order=order))) == expected


def test_the_first_header_of_a_name_counts() -> None:
    e = event()
    first_wins = [("id", e["event_id"].encode()), ("id", b"other")]
    assert reason(record(e, headers=first_wins)) is None
    second = [("id", b"other"), ("id", e["event_id"].encode())]
    assert reason(record(e, headers=second)) == "header id does not match event_id"


def test_a_valid_event_yields_its_fields() -> None:
    e = event("OrderPaid", event_id="0AB2C3D4-0000-4000-8000-000000000001")
    key, value, _topic, _partition, _offset, headers = record(e)
    parsed = parse(key, value, headers)
    assert parsed.event_id == "0ab2c3d4-0000-4000-8000-000000000001"
    assert (parsed.event_type, parsed.order_id, parsed.total_cents) == (
        "OrderPaid",
        e["order"]["id"],
        2600,
    )


@pytest.mark.parametrize(
    ("field", "value"), [("total_cents", True), ("total_cents", 2**63), ("customer_id", 5)]
)
def test_json_types_are_strict(field: str, value: Any) -> None:
    assert reason(record(event(order={field: value}))) == (
        "wrong schema: a field has the wrong JSON type"
    )
