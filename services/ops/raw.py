"""Raw Kafka bytes as ops read them: text when UTF-8 (control characters escaped for a
terminal), else hex; in JSON, the text (or null) and always base64, so no byte is lost."""

import base64
from typing import Any


def _escaped(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def as_text(raw: bytes) -> str | None:
    """The bytes as text when they are UTF-8, else None."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def printable(raw: bytes | None) -> str:
    """One line a terminal shows safely: the text with every unprintable character escaped, or
    `hex:` and the bytes when they are not UTF-8; `(none)` for a missing value."""
    if raw is None:
        return "(none)"
    text = as_text(raw)
    if text is None:
        return f"hex:{raw.hex()}"
    return "".join(c if c.isprintable() else _escaped(c) for c in text)


def as_json(raw: bytes | None) -> dict[str, Any] | None:
    """`{"text": str | None, "base64": str, "bytes": n}` (None for a missing value)."""
    if raw is None:
        return None
    return {
        "text": as_text(raw),
        "base64": base64.b64encode(raw).decode("ascii"),
        "bytes": len(raw),
    }
