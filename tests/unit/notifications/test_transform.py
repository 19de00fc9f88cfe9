"""The pure transform: a valid event -> its notification; anything else -> its dead letter."""

import json
import uuid

import pytest

from onceflow import contract
from services.notifications.transform import DeadLetter, Notification, Record, amount, route
from tests.oracle.events import MAX, event, record


def routed(e: dict[str, object] | None, **raw: object) -> Notification | DeadLetter:
    key, value, _topic, _partition, _offset, headers = record(e, **raw)  # type: ignore[arg-type]
    return route(Record(key, value, headers, partition=2, offset=41), MAX)


@pytest.mark.parametrize(("event_type", "kind"), list(contract.NOTIFICATION_KIND.items()))
def test_every_event_type_has_its_kind(event_type: contract.EventType, kind: str) -> None:
    e = event(event_type.value)
    out = routed(e)
    assert isinstance(out, Notification)
    doc = json.loads(out.value)
    assert doc["kind"] == kind
    assert set(doc) == {
        "notification_id",
        "event_id",
        "order_id",
        "customer_id",
        "kind",
        "message",
        "occurred_at",
    }
    assert (doc["event_id"], doc["order_id"], doc["customer_id"]) == (
        e["event_id"],
        e["order"]["id"],
        "c-42",
    )
    assert out.key == b"c-42"
    assert dict(out.headers) == {
        "id": doc["notification_id"].encode(),
        "eventId": doc["event_id"].encode(),
    }
    assert e["order"]["id"] in doc["message"]
    assert "26.00 EUR" in doc["message"]


def test_the_notification_id_is_uuid5_of_the_event_id() -> None:
    e = event()
    first, again = routed(e), routed(e)
    assert isinstance(first, Notification)
    assert isinstance(again, Notification)
    assert first.value == again.value
    nid = uuid.UUID(json.loads(first.value)["notification_id"])
    assert nid.version == 5
    assert nid == uuid.uuid5(uuid.UUID(contract.NOTIFICATION_NAMESPACE), e["event_id"])


def test_an_invalid_record_becomes_a_dead_letter_carrying_it() -> None:
    out = routed(None, key=b"k", value=b"\xff not json")
    assert out == DeadLetter(
        b"k",
        b"\xff not json",
        [("error", b"value is not UTF-8 text"), ("sourcePartition", b"2"), ("sourceOffset", b"41")],
    )


@pytest.mark.parametrize(
    ("cents", "currency", "text"),
    [
        (2600, "EUR", "26.00 EUR"),
        (5, "USD", "0.05 USD"),
        (1250, "JPY", "1250 JPY"),
        (0, "GBP", "0.00 GBP"),
    ],
)
def test_amounts_use_the_currencys_decimals(cents: int, currency: str, text: str) -> None:
    assert amount(cents, currency) == text
