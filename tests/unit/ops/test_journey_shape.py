"""Journey.as_dict(): plain JSON types, ISO 8601 UTC times; order ids are UUIDs; Kafka not
answering leaves `produced` unknown (the databases are stubbed here)."""

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from onceflow.settings import NotificationSettings, Settings
from services.notifications.transform import notification_id
from services.ops import journey as journey_module
from services.ops.journey import Batch, EventHop, Journey, Notification, _hop, parse_order_id

T0 = datetime(2026, 11, 23, 13, 0, 0, 123456, tzinfo=UTC)
EVENT = "6f1c1b6e-0a34-4a51-9d2a-6c4b1f0e9b10"
ORDER = "0f8fad5b-d9cb-469f-a165-70867728950e"


def test_as_dict_holds_only_json_types_and_iso_utc_times() -> None:
    hop = EventHop(
        event_id=EVENT,
        event_type="OrderPlaced",
        occurred_at=T0.astimezone(timezone(timedelta(hours=2))),
        kafka_partition=1,
        kafka_offset=41,
        kafka_timestamp=T0 + timedelta(seconds=0.5),
        batch=Batch("q-1", 7, T0 + timedelta(seconds=2)),
        notification=Notification(notification_id(EVENT), True),
    )
    journey = Journey(ORDER, "outbox.event.order", "PLACED", T0, T0, (hop,))
    doc = journey.as_dict()
    assert json.loads(journey.to_json()) == doc
    assert doc["order"] == {
        "status": "PLACED",
        "created_at": "2026-11-23T13:00:00.123456Z",
        "updated_at": "2026-11-23T13:00:00.123456Z",
    }
    (event,) = doc["events"]
    assert event["occurred_at"] == "2026-11-23T13:00:00.123456Z"
    assert event["kafka"] == {
        "partition": 1,
        "offset": 41,
        "timestamp": "2026-11-23T13:00:00.623456Z",
    }
    assert event["batch"] == {
        "query_id": "q-1",
        "batch_id": 7,
        "committed_at": "2026-11-23T13:00:02.123456Z",
    }
    assert event["notification"] == {"id": notification_id(EVENT), "produced": True}
    assert event["seconds_after_commit"] == {"kafka": 0.5, "applied": 2.0}
    assert doc["notes"] == []


def test_an_order_unknown_to_the_api_has_no_order_part() -> None:
    assert Journey(ORDER, "t", None, None, None, ()).as_dict()["order"] is None


def test_produced_compares_the_groups_committed_offset_with_the_events_offset() -> None:
    row = (EVENT, "OrderPaid", T0, 2, 10, T0, "q", 3, None)
    assert _hop(row, {2: 11}, known=True).notification.produced is True
    assert _hop(row, {2: 10}, known=True).notification.produced is False
    assert _hop(row, {2: None}, known=True).notification.produced is False
    assert _hop(row, {}, known=False).notification.produced is None
    assert _hop(row, {2: 11}, known=True).batch == Batch("q", 3, None)


def test_order_ids_are_canonical_uuids() -> None:
    assert parse_order_id(ORDER.upper()) == ORDER
    with pytest.raises(ValueError, match="is not an order id"):
        parse_order_id("order-42")


def test_kafka_not_answering_leaves_produced_unknown_with_a_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    row = (EVENT, "OrderPlaced", T0, 0, 3, T0, "q", 1, T0)
    monkeypatch.setattr(journey_module, "_order_row", lambda _s, _o: ("PLACED", T0, T0))
    monkeypatch.setattr(journey_module, "_event_rows", lambda _s, _o: [row])
    nowhere = Settings(kafka_bootstrap="127.0.0.1:1")  # nothing listens on port 1
    found = journey_module.journey(
        settings=nowhere, order_id=ORDER, notify=NotificationSettings(), kafka_timeout=1
    )
    assert found is not None
    assert [e.notification.produced for e in found.events] == [None]
    (note,) = found.notes
    assert note.startswith("Kafka did not say which notifications were produced within 1 s")
    assert found.as_dict()["events"][0]["notification"]["produced"] is None


def test_an_order_neither_the_api_nor_the_job_knows_is_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(journey_module, "_order_row", lambda _s, _o: None)
    monkeypatch.setattr(journey_module, "_event_rows", lambda _s, _o: [])
    assert journey_module.journey(settings=Settings(), order_id=ORDER) is None
