"""W3C Trace Context: keep a valid incoming `traceparent`, otherwise start a new trace."""

import os
import re

TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$")


def valid(header: str) -> bool:
    """True for a traceparent that a W3C-conforming parser accepts."""
    match = TRACEPARENT.match(header)
    if match is None:
        return False
    version, trace_id, parent_id, _, rest = match.groups()
    if version == "ff" or trace_id == "0" * 32 or parent_id == "0" * 16:
        return False
    return version != "00" or rest is None


def new_traceparent() -> str:
    """A fresh, sampled traceparent (version 00)."""
    ids = os.urandom(24).hex()
    return f"00-{ids[:32]}-{ids[32:]}-01"


def traceparent_for(header: str | None) -> str:
    """The request's traceparent if valid, else a new one."""
    if header is not None and valid(header.strip()):
        return header.strip()
    return new_traceparent()
