"""Strict JSON for the Python reader of the event definition (phase 2 of
onceflow.event_definition): exactly one value within JSON_LIMITS, duplicate keys reported.

The standard library's decoder is used, not orjson: it hands over every object's pairs (so
duplicates can be seen) and every number's text (so digits can be counted), and accepts the
nesting Jackson accepts.
"""

import json
import re
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from onceflow.event_definition import JSON_LIMITS as LIMITS

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SHALLOW = 100  # nesting the interpreter's recursion limit always has room for


class NotJsonError(ValueError):
    """The text is not exactly one strict JSON value within the limits."""


class Decoded:
    """One decoded value, and whether any of its objects repeats a key."""

    __slots__ = ("duplicate", "value")

    def __init__(self) -> None:
        self.value: Any = None
        self.duplicate = False

    def pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        """object_pairs_hook: the object as a dict, noting a repeated key."""
        obj = dict(pairs)
        if len(obj) != len(pairs):
            self.duplicate = True
        return obj


def _number(kind: type[int] | type[float]) -> Any:
    def parse(token: str) -> int | float:
        if sum(c.isdigit() for c in token) > LIMITS.max_number_digits:
            raise NotJsonError(token)
        return kind(token)

    return parse


def _constant(token: str) -> Any:
    raise NotJsonError(token)  # NaN, Infinity, -Infinity


def depth(text: str) -> int:
    """The deepest nesting of arrays and objects in a JSON text."""
    deepest = level = 0
    for char in _STRING.sub("", text):
        if char in "[{":
            level += 1
            deepest = max(deepest, level)
        elif char in "]}":
            level -= 1
    return deepest


@contextmanager
def _recursion_for(levels: int) -> Iterator[None]:
    """Room on the interpreter's recursion limit for `levels` nested values (rare: only for
    values nested hundreds deep; the C decoder recurses once per level)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + levels)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def decode(text: str) -> Decoded:
    """The one JSON value `text` holds, or NotJsonError."""
    out = Decoded()
    decoder = json.JSONDecoder(
        object_pairs_hook=out.pairs,
        parse_int=_number(int),
        parse_float=_number(float),
        parse_constant=_constant,
    )
    levels = text.count("[") + text.count("{")
    if levels > LIMITS.max_depth and depth(text) > LIMITS.max_depth:
        raise NotJsonError("nested too deeply")
    start = len(text) - len(text.lstrip(LIMITS.whitespace))
    try:
        room: AbstractContextManager[None] = (
            _recursion_for(min(levels, LIMITS.max_depth)) if levels > _SHALLOW else nullcontext()
        )
        with room:
            out.value, end = decoder.raw_decode(text, start)
    except (json.JSONDecodeError, RecursionError) as error:
        raise NotJsonError(str(error)) from None
    if text[end:].strip(LIMITS.whitespace):
        raise NotJsonError("content after the value")
    return out
