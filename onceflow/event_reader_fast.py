"""The v1 reader's fast path: one Python function compiled, once at import, from the one
definition (onceflow.event_definition), that accepts a valid record with no table walks.

It only ever says "valid: here is the document" or "not sure" (None); it never gives a reason.
onceflow.events.parse tries it first and, on None, runs the exact, table-driven phases, which
decide and give the dead letter its reason. So the fast path must accept no record the exact
path refuses, and it is built to refuse (fall back) on anything unusual:

- a value that is not bytes, is over the byte limit or holds a backslash at all (no escapes:
  no lone surrogate or U+0000 can hide in one, and every `"` byte delimits a string);
- anything orjson does not decode (strict RFC 8259 JSON, UTF-8, no BOM), and any exception;
- duplicate keys: orjson keeps the last copy silently, so the `"` bytes are counted. Without
  backslashes each string token takes two, so a text whose count is more than twice the decoded
  document's keys and string values held a key twice;
- any object whose key set is not its declared one, any value not of its field's type (and an
  integer outside 64 bits), any rule or relation broken.

Each check is emitted from FIELDS and RELATIONS in the same terms as the exact path's (the same
compiled patterns and timestamp check are passed in); a relation of a kind this module does not
know stops the import. tests/unit/events/test_fast_reader.py holds the two paths to the same
answers over the shared bad-record corpus and generated records.
"""

import re
from collections.abc import Callable
from typing import Any

import orjson

from onceflow import event_definition as D  # noqa: N812
from onceflow.event_definition import Field, Json

Headers = list[tuple[str, bytes | None]] | None
FastReader = Callable[[bytes | None, bytes | None, Headers, int], dict[str, Any] | None]
_PYTHON = {Json.STRING: "str", Json.INTEGER: "int", Json.OBJECT: "dict", Json.ARRAY: "list"}


class _Source:
    """The function's text, its constants, and the variable holding each field's value."""

    def __init__(self, patterns: dict[str, re.Pattern[str]], long: tuple[int, int]) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {"loads": orjson.loads}
        self.patterns, self.long = patterns, long
        self.var: dict[str, str] = {}  # field path (outside arrays) -> its variable
        self.count = 0

    def const(self, value: Any) -> str:
        name = f"c{len(self.names)}"
        self.names[name] = value
        return name

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def refuse_if(self, depth: int, condition: str) -> None:
        self.emit(depth, f"if {condition}:")
        self.emit(depth + 1, "return None")

    def rule(self, depth: int, field: Field, subject: str) -> None:
        """The checks of `field`'s rule on `subject` (its value, an array's length)."""
        if field.one_of:
            self.refuse_if(depth, f"{subject} not in {self.const(frozenset(field.one_of))}")
        if field.max_length is not None:
            self.refuse_if(depth, f"len({subject}) > {field.max_length}")
        if field.pattern:
            pattern = self.const(self.patterns[field.path])
            self.refuse_if(depth, f"{pattern}.fullmatch({subject}) is None")
        if field.timestamp:
            self.refuse_if(depth, f"not instant_ok({subject})")
        if field.minimum is not None:
            self.refuse_if(depth, f"{subject} < {field.minimum}")
        if field.maximum is not None:
            self.refuse_if(depth, f"{subject} > {field.maximum}")

    def obj(self, depth: int, path: str, var: str, *, outside_arrays: bool) -> None:
        """The checks of the object in `var` at `path`, and of everything it holds."""
        fields = D.children(path)
        every = self.const(frozenset(f.name for f in fields))
        needed = self.const(frozenset(f.name for f in fields if f.required))
        keys = f"{var}.keys()"
        if all(f.required for f in fields):
            self.refuse_if(depth, f"type({var}) is not dict or {keys} != {every}")
        else:
            self.refuse_if(depth, f"type({var}) is not dict or not {every} >= {keys} >= {needed}")
        self.emit(depth, f"quotes += len({var})")
        for field in fields:
            value = self.fresh("v")
            if outside_arrays:
                self.var[field.path] = value
            inner = depth
            if field.required:  # present: the key set was checked above
                self.emit(depth, f"{value} = {var}[{field.name!r}]")
            else:
                self.emit(depth, f"{value} = {var}.get({field.name!r})")
                self.emit(depth, f"if {value} is not None:")
                inner = depth + 1
            self.value(inner, field, value, outside_arrays=outside_arrays)

    def value(self, depth: int, field: Field, value: str, *, outside_arrays: bool) -> None:
        if field.json is Json.OBJECT:  # obj() checks its type with its key set
            self.rule(depth, field, value)
            self.obj(depth, field.path, value, outside_arrays=outside_arrays)
            return
        wrong = f"type({value}) is not {_PYTHON[field.json]}"
        if field.json is Json.INTEGER:
            low, high = self.long
            wrong += f" or not {low} <= {value} <= {high}"
        self.refuse_if(depth, wrong)
        if field.json is Json.STRING:
            self.emit(depth, "quotes += 1")
        if field.json is Json.ARRAY:
            self.rule(depth, field, f"len({value})")
            element = self.fresh("e")
            self.emit(depth, f"for {element} in {value}:")
            self.obj(depth + 1, field.elements, element, outside_arrays=False)
        else:
            self.rule(depth, field, value)

    def relation(self, depth: int, relation: D.Relation) -> None:
        var = self.var
        match relation:
            case D.Implies(field=field, source=source, mapping=mapping):
                table = self.const(dict(mapping))
                self.refuse_if(depth, f"{var[field]} != {table}.get({var[source]})")
            case D.SumOfProducts(field=field, array=array, factors=(a, b)):
                total = f"sum([e[{a!r}] * e[{b!r}] for e in {var[array]}])"
                self.refuse_if(depth, f"{var[field]} != {total}")
            case D.KeyEquals(field=field):
                self.refuse_if(depth, f"key is None or key != {var[field]}.encode()")
            case D.HeaderEquals(header=header, field=field):
                self.refuse_if(depth, f"first.get({header!r}) not in (None, {var[field]}.encode())")
            case _:  # pragma: no cover - a new kind of relation needs its fast check here
                raise NotImplementedError(f"no fast check for {relation!r}")


def compile_reader(
    patterns: dict[str, re.Pattern[str]],
    instant_ok: Callable[[str], bool],
    long: tuple[int, int],
) -> FastReader:
    """The fast path: (key, value, headers, max_bytes) -> the decoded document of a valid v1
    event, or None when the exact path must decide. `patterns` (each field's compiled full
    pattern), `instant_ok` (a timestamp's range) and `long` (an integer's bounds) are the exact
    path's own."""
    src = _Source(patterns, long)
    src.names["instant_ok"] = instant_ok
    src.emit(0, "def fast(key, value, headers, max_bytes):")
    src.emit(1, "try:")
    src.refuse_if(2, 'type(value) is not bytes or len(value) > max_bytes or b"\\\\" in value')
    src.emit(2, "doc = loads(value)")
    src.emit(2, "quotes = 0")
    src.obj(2, D.ROOT, "doc", outside_arrays=True)
    # Without backslashes every `"` byte delimits a string: a key repeated in the text is one
    # more string token than the document holds.
    src.refuse_if(2, "value.count(b'\"') != 2 * quotes")
    src.emit(2, "first = dict(reversed(headers)) if headers else {}")
    for relation in D.RELATIONS:
        src.relation(2, relation)
    src.emit(1, "except Exception:")
    src.emit(2, "return None")
    src.emit(1, "return doc")
    text = "\n".join(src.lines) + "\n"
    namespace = dict(src.names)
    exec(compile(text, "<onceflow.event_reader_fast>", "exec"), namespace)  # noqa: S102
    fast: FastReader = namespace["fast"]
    fast.__doc__ = text  # the generated source, for whoever debugs it
    return fast
