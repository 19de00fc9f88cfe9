"""Ops pause and resume the connector: orders keep being accepted and nothing is lost."""

import httpx

from onceflow.settings import Settings
from services.ops import connect_api, lag
from stack.waiting import wait_for
from tests.e2e.kafka_reader import read_events
from tests.e2e.orders import place


def _state(settings: Settings) -> str:
    return str(connect_api.status(settings=settings)["connector"]["state"])


def test_paused_connector_loses_nothing(api: httpx.Client, settings: Settings) -> None:
    connect_api.pause(settings=settings)
    try:
        wait_for(lambda: _state(settings) == "PAUSED", what="connector paused", timeout=60)
        order = place(
            api, "ops-pause", "GBP", [{"sku": "SKU-9", "quantity": 3, "unit_price_cents": 7}]
        )
        slot = lag.slot_lag(settings=settings)
        assert slot is not None
        assert slot.bytes_behind > 0
    finally:
        connect_api.resume(settings=settings)
    wait_for(lambda: _state(settings) == "RUNNING", what="connector running", timeout=60)
    events = read_events(
        settings.kafka_bootstrap, settings.topic, keys=[order["id"]], expected=1, timeout=120
    )
    assert [e.value["event_type"] for e in events] == ["OrderPlaced"]
