"""The aggregation job's content fingerprint of a valid event, computed without Spark, so that a
replay remembers what the job would have (spark_jobs/aggregation/parse.py `fingerprint`:
Spark's xxhash64, seed 42, of the event as from_json reads it).

Spark hashes a struct field by field and an array element by element, each hash the next one's
seed; a string is hashed as its UTF-8 bytes, a long as its 8 bytes, a null leaves the seed as it
is. The event's struct has the definition's fields in wire order (spark_jobs/aggregation/
schema.py), only strings, longs, objects and arrays of objects.
tests/spark/ops/test_fingerprint.py holds this equal to Spark's.
"""

import struct
from typing import Any

from onceflow import event_definition as D  # noqa: N812
from onceflow.event_definition import Field, Json

SEED = 42  # Spark's xxhash64 default
_MASK = (1 << 64) - 1
_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _MASK


def _round(acc: int, lane: int) -> int:
    return _rotl((acc + lane * _P2) & _MASK, 31) * _P1 & _MASK


def _merge(h: int, acc: int) -> int:
    return ((h ^ _round(0, acc)) * _P1 + _P4) & _MASK


def _avalanche(h: int) -> int:
    h = (h ^ (h >> 33)) * _P2 & _MASK
    h = (h ^ (h >> 29)) * _P3 & _MASK
    return h ^ (h >> 32)


def xxh64(data: bytes, seed: int) -> int:
    """XXH64 of `data` (little-endian lanes, as Spark reads them), unsigned."""
    n, i, seed = len(data), 0, seed & _MASK
    if n >= 32:
        acc = [(seed + _P1 + _P2) & _MASK, (seed + _P2) & _MASK, seed, (seed - _P1) & _MASK]
        while i + 32 <= n:
            lanes = struct.unpack_from("<4Q", data, i)
            acc = [_round(a, lane) for a, lane in zip(acc, lanes, strict=True)]
            i += 32
        h = (_rotl(acc[0], 1) + _rotl(acc[1], 7) + _rotl(acc[2], 12) + _rotl(acc[3], 18)) & _MASK
        for a in acc:
            h = _merge(h, a)
    else:
        h = (seed + _P5) & _MASK
    h = (h + n) & _MASK
    while i + 8 <= n:
        (lane,) = struct.unpack_from("<Q", data, i)
        h = (_rotl(h ^ _round(0, lane), 27) * _P1 + _P4) & _MASK
        i += 8
    if i + 4 <= n:
        (word,) = struct.unpack_from("<I", data, i)
        h = (_rotl(h ^ (word * _P1 & _MASK), 23) * _P2 + _P3) & _MASK
        i += 4
    while i < n:
        h = _rotl(h ^ (data[i] * _P5 & _MASK), 11) * _P1 & _MASK
        i += 1
    return _avalanche(h)


def _value(value: Any, field: Field, seed: int) -> int:
    if value is None:
        return seed
    if field.json is Json.STRING:
        return xxh64(str(value).encode("utf-8"), seed)
    if field.json is Json.INTEGER:
        return xxh64(struct.pack("<q", value), seed)
    if field.json is Json.OBJECT:
        return _object(value, field.path, seed)
    for element in value:  # an array of objects
        seed = _object(element, field.elements, seed)
    return seed


def _object(doc: dict[str, Any], path: str, seed: int) -> int:
    for field in D.wire_order(D.children(path)):
        seed = _value(doc.get(field.name), field, seed)
    return seed


def fingerprint(doc: dict[str, Any]) -> int:
    """The job's fingerprint of the valid v1 event `doc` (its parsed JSON), as a signed
    64-bit integer (a bigint)."""
    unsigned = _object(doc, D.ROOT, SEED)
    return unsigned - (1 << 64) if unsigned >= 1 << 63 else unsigned
