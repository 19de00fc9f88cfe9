"""Time-ordered identifiers: UUIDv7 (RFC 9562), so new orders land at the right of the index."""

import os
import time
from uuid import UUID


def uuid7() -> UUID:
    """A UUIDv7: 48-bit Unix milliseconds, then 74 random bits, with version and variant."""
    millis = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (millis & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    return UUID(int=value)
