"""Opaque keyset cursors: the (created_at, id) of the last order of a page."""

import base64
import binascii
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

import orjson


class InvalidCursorError(ValueError):
    """The cursor was not issued by this API."""


@dataclass(frozen=True)
class Cursor:
    """Position after which the next page starts (orders are newest first)."""

    created_at: datetime
    order_id: UUID


def encode(cursor: Cursor) -> str:
    """URL-safe, unpadded base64 of a small JSON array."""
    raw = orjson.dumps([cursor.created_at.isoformat(), str(cursor.order_id)])
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode(text: str) -> Cursor:
    """Parse a cursor from `encode`; raises InvalidCursorError on anything else."""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        created_at, order_id = orjson.loads(raw)
        moment = datetime.fromisoformat(created_at)
        if moment.tzinfo is None:
            raise ValueError("naive timestamp")
        return Cursor(created_at=moment, order_id=UUID(order_id))
    except (binascii.Error, ValueError, TypeError, orjson.JSONDecodeError) as exc:
        raise InvalidCursorError("cursor is not valid") from exc
