"""The notifications processor's content fingerprint of a valid v1 event: the first 16 bytes of
the SHA-256 of the event in its canonical form, the connector's (every object's fields in jsonb's
order, event_definition.wire_order; no whitespace). The same event written with another key
order, whitespace or escapes has the same fingerprint; any other content, another.

The aggregation job has its own (spark_jobs/aggregation/parse.fingerprint, Spark's xxhash64 of
the typed event): each consumer compares only fingerprints it computed itself.
"""

import hashlib
from typing import Any

import orjson

from onceflow import event_definition as D  # noqa: N812
from onceflow.event_definition import Json

SIZE = 16  # bytes kept of the SHA-256


def canonical(value: Any, path: str = D.ROOT) -> Any:
    """The object at `path` of a valid event with its fields (and theirs) in wire order."""
    out: dict[str, Any] = {}
    for field in D.wire_order(D.children(path)):
        item = value[field.name]
        if field.json is Json.OBJECT:
            item = canonical(item, field.path)
        elif field.json is Json.ARRAY:
            item = [canonical(element, field.elements) for element in item]
        out[field.name] = item
    return out


def fingerprint(value: bytes) -> bytes:
    """The fingerprint of a valid v1 event's record value."""
    return hashlib.sha256(orjson.dumps(canonical(orjson.loads(value)))).digest()[:SIZE]
