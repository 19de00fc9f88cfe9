"""UUIDv7 ids, traceparents, cursors and request fingerprints."""

import time
from datetime import UTC, datetime
from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.orders.domain.ids import uuid7
from services.orders.entrypoints.tracing import new_traceparent, traceparent_for, valid
from services.orders.service_layer import pagination
from services.orders.service_layer.idempotency import claim


def test_uuid7_version_variant_and_time() -> None:
    before = time.time_ns() // 1_000_000
    value = uuid7()
    after = time.time_ns() // 1_000_000
    assert value.version == 7
    assert value.variant == "specified in RFC 4122"
    assert before <= value.int >> 80 <= after
    assert len({uuid7() for _ in range(1000)}) == 1000


def test_uuid7_sorts_by_time() -> None:
    first = uuid7()
    time.sleep(0.002)
    assert uuid7() > first


GOOD = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.mark.parametrize(
    "header",
    [
        "",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
        GOOD.upper(),
        "ff" + GOOD[2:],
        "00-" + "0" * 32 + "-b7ad6b7169203331-01",
        "00-0af7651916cd43dd8448eb211c80319c-" + "0" * 16 + "-01",
        GOOD + "-extra",
    ],
)
def test_invalid_traceparents_are_replaced(header: str) -> None:
    assert not valid(header)
    replaced = traceparent_for(header)
    assert replaced != header
    assert valid(replaced)


def test_valid_traceparent_is_kept() -> None:
    assert traceparent_for(GOOD) == GOOD
    assert traceparent_for(None) != traceparent_for(None)
    assert valid(new_traceparent())
    assert valid("01" + GOOD[2:] + "-future")


@given(st.datetimes(timezones=st.just(UTC)), st.uuids())
def test_cursor_round_trip(moment: datetime, order_id: UUID) -> None:
    cursor = pagination.Cursor(moment, order_id)
    text = pagination.encode(cursor)
    assert text.isascii()
    assert "=" not in text
    assert pagination.decode(text) == cursor


@pytest.mark.parametrize("text", ["", "zzz", "WyJ4Il0", "bnVsbA", "WyIyMDI2LTExLTIyIiwieCJd"])
def test_foreign_cursors_are_rejected(text: str) -> None:
    with pytest.raises(pagination.InvalidCursorError):
        pagination.decode(text)


CLIENT = UUID("01a20114-a2ad-7eaf-9c28-00000000c11e")


def test_fingerprint_ignores_key_order_but_not_values() -> None:
    a = claim("POST /orders", "k", {"a": 1, "b": [1, 2]}, client_id=CLIENT)
    assert a == claim("POST /orders", "k", {"b": [1, 2], "a": 1}, client_id=CLIENT)
    assert (
        a.fingerprint
        != claim("POST /orders", "k", {"a": 1, "b": [2, 1]}, client_id=CLIENT).fingerprint
    )
    assert a.scope == f"{CLIENT} POST /orders"
    assert len(a.fingerprint) == 32
