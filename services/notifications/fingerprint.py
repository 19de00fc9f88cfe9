"""The notifications processor's content fingerprint of a valid v1 event: the first 16 bytes of
the SHA-256 of the event in its canonical form, the connector's (every object's fields in jsonb's
order, event_definition.wire_order; no whitespace). The same event written with another key
order, whitespace or escapes has the same fingerprint; any other content, another.

The aggregation job has its own (spark_jobs/aggregation/parse.fingerprint, Spark's xxhash64 of
the typed event): each consumer compares only fingerprints it computed itself.
"""

import hashlib
from collections.abc import Callable
from typing import Any

import orjson

from onceflow import event_definition as D  # noqa: N812
from onceflow.event_definition import Json

SIZE = 16  # bytes kept of the SHA-256


def _plans() -> dict[str, tuple[tuple[str, str | None, bool], ...]]:
    """Per object path: its fields in wire order, each with the object path it holds (None: a
    value) and whether that is an array's elements. Derived once: canonical() runs per event."""
    plans = {}
    pending = [D.ROOT]
    while pending:
        path = pending.pop()
        plan = []
        for field in D.wire_order(D.children(path)):
            inner = D.nested(field)
            plan.append((field.name, inner, field.json is Json.ARRAY))
            if inner is not None:
                pending.append(inner)
        plans[path] = tuple(plan)
    return plans


_PLANS = _plans()


def _expression(path: str, var: str, depth: int = 0) -> str:
    """Python source of the dict literal of the object in `var` at `path`, in wire order."""
    items = []
    for name, inner, array in _PLANS[path]:
        item = f"{var}[{name!r}]"
        if inner is not None:
            element = f"e{depth}"
            if array:
                item = f"[{_expression(inner, element, depth + 1)} for {element} in {item}]"
            else:
                item = _expression(inner, item, depth + 1)
        items.append(f"{name!r}: {item}")
    return "{" + ", ".join(items) + "}"


def _compiled() -> Callable[[Any], Any]:
    """canonical() as one expression generated from _PLANS (no loop over the plans per event)."""
    text = f"def canonical(value):\n    return {_expression(D.ROOT, 'value')}\n"
    namespace: dict[str, Any] = {}
    exec(compile(text, "<onceflow.fingerprint>", "exec"), namespace)  # noqa: S102
    made: Callable[[Any], Any] = namespace["canonical"]
    made.__doc__ = text
    return made


def walked(value: Any, path: str = D.ROOT) -> Any:
    """The object at `path` of a valid event with its fields (and theirs) in wire order, by
    walking the plans (what canonical() is compiled from; the tests hold the two together)."""
    out: dict[str, Any] = {}
    for name, inner, array in _PLANS[path]:
        item = value[name]
        if inner is not None:
            item = [walked(e, inner) for e in item] if array else walked(item, inner)
        out[name] = item
    return out


# A valid event with every object's fields (and theirs) in wire order.
canonical = _compiled()


def of_document(doc: dict[str, Any]) -> bytes:
    """The fingerprint of a valid v1 event, decoded."""
    return hashlib.sha256(orjson.dumps(canonical(doc))).digest()[:SIZE]


def fingerprint(value: bytes) -> bytes:
    """The fingerprint of a valid v1 event's record value."""
    return of_document(orjson.loads(value))
