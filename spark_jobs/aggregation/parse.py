"""Raw Kafka rows -> typed order events and dead letters (pure DataFrame -> DataFrame).

The Spark reader of the one event definition (onceflow.event_definition): every check is
derived by code from its phases, FIELDS and RELATIONS, as the Python reader (onceflow.events)
derives its own, so a record gets the same reason from both. Everything is a built-in column
expression (code-generated; no Python UDF).

How the phases map onto Spark, and why they cost little on valid records:
- RAW: byte length, `is_valid_utf8`, and, only for a text holding a `\\u` escape, the
  definition's regexes for lone surrogates and U+0000 (from_json would silently read a lone
  surrogate as "?").
- from_json reads the value into the schema (schema.EVENT). A record whose text IS to_json of
  what was read (the connector's form: jsonb's key order, no spaces), or is what `json.dumps`
  writes of it in the definition's order (its separators; its array compared with its spaces
  removed), has exactly the declared fields, each once, of its JSON type, in strict JSON:
  phases 2-4 hold and are skipped. Any other text (also a valid event written otherwise, e.g.
  with escapes) takes the exact path below.
  That text is not written by to_json: it is concatenated from the typed fields between literal
  keys (only an array's elements go through to_json), which is exact because it is compared
  only with a text without a backslash (no escapes); `_complete` and the choice of one form by
  the text's first key use no lambda and no second rendering (docs/benchmarks.md: what these
  checks cost a backfill).
- The exact path for phases 2-4 reads the text as a variant (`try_parse_json`, which refuses
  duplicate keys), and checks syntax by parsing it wrapped twice: `[text]` must be an array of
  one value under the strict options, and `{"x":text}` must parse too; the two wrappers cannot
  both hide trailing content. Field types are the variant's (`schema_of_variant`): a string
  is STRING, an integer within 64 bits BIGINT. Its array lambdas run for these rare records only.
- Phases 5 and 6 read the typed columns. The items' skus are checked as one joined text.

Known differences from the Python reader: none. JSON_LIMITS in the definition states Jackson's
limits (nesting, digits per number) so the Python reader applies them too.
"""

from collections.abc import Callable
from functools import cache
from typing import NamedTuple

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)
from pyspark.sql.types import ArrayType, StringType

from onceflow import event_definition as D  # noqa: N812
from onceflow.event_definition import Field, Json
from spark_jobs.aggregation import schema as S  # noqa: N812

JSON_OPTIONS = {
    "mode": "PERMISSIVE",
    "columnNameOfCorruptRecord": S.CORRUPT_COLUMN,
    "allowSingleQuotes": "false",
    "allowNonNumericNumbers": "false",
    "allowNumericLeadingZeros": "false",
    "allowUnquotedControlChars": "false",
}
_TO_JSON = {"ignoreNullFields": "true"}
_COMPACT = (",", ":")  # to_json's separators: item, key
_DUMPS = (", ", ": ")  # json.dumps's default separators
_SEPARATOR = "\n"  # joins an array's strings; no declared pattern matches it
_VARIANT_TYPE = {Json.STRING: "STRING", Json.INTEGER: "BIGINT"}
_VARIANT_PREFIX = {Json.OBJECT: "OBJECT<", Json.ARRAY: "ARRAY<"}
_OBJECT = "map<string,variant>"
# A value no valid event has, per JSON type: `array_contains` of it tells a null element.
_NO_VALUE: dict[Json, str | int] = {Json.STRING: _SEPARATOR, Json.INTEGER: -(2**63)}


def _text() -> Column:
    return F.col("value").cast("string")


def _message(template: str, name: str, value: Column) -> Column:
    """`template` with `{name}` replaced by the text of `value`."""
    before, found, after = template.partition(f"{{{name}}}")
    return F.concat(F.lit(before), value.cast("string"), F.lit(after)) if found else F.lit(template)


def _backslash() -> Column:
    """Whether the text holds a backslash: one scan, kept as a column for phase 1 (only a text
    with one can hold ESCAPE_MARK) and the canonical-text check (only a text without one)."""
    return _text().contains("\\")


def _raw_error(max_event_bytes: int) -> Column:
    """Phase 1 (on a row with the `backslash` column)."""
    value, text = F.col("value"), _text()
    size = F.octet_length("value")
    escapes = F.regexp_replace(text, *D.ESCAPED_BACKSLASH)
    escaped = F.col("backslash") & text.contains(D.ESCAPE_MARK)
    return (
        F.when(value.isNull(), F.lit(D.TOMBSTONE))
        .when(
            size > max_event_bytes,
            _message(D.OVERSIZED.replace("{max}", str(max_event_bytes)), "size", size),
        )
        .when(~F.is_valid_utf8(text), F.lit(D.NOT_UTF8))
        .when(escaped & escapes.rlike(D.LONE_SURROGATE), F.lit(D.HAS_LONE_SURROGATE))
        .when(escaped & escapes.rlike(D.NUL), F.lit(D.HAS_NUL))
    )


class _Hole:
    """Where the document form holds an array: compared apart (see _dumps_equal)."""

    def __init__(self, compact: Column) -> None:
        self.compact = compact  # the array as to_json writes it


_Part = str | Column | _Hole


def _parts(value: Column, path: str, order: S.Order, separators: tuple[str, str]) -> list[_Part]:
    """The object at `path` as text with its fields in `order` and these separators (item,
    key), concatenated from its typed fields: exact for values holding no character JSON
    escapes, which _canonical makes sure of (the text has no backslash). An array is a _Hole
    holding the array as to_json writes it (its elements' fields in `order`)."""
    comma, colon = separators
    parts: list[_Part] = []
    for f in order(D.children(path)):
        parts.append((comma if parts else "{") + f'"{f.name}"{colon}')
        column = value[f.name]
        if f.json is Json.OBJECT:
            parts += _parts(column, f.path, order, separators)
        elif f.json is Json.ARRAY:
            names = [c.name for c in order(D.children(f.elements))]
            if names != [c.name for c in D.wire_order(D.children(f.elements))]:
                column = F.arrays_zip(*[column[name].alias(name) for name in names])
                parts.append(_Hole(F.to_json(column, _TO_JSON)))
            else:  # rendered once per record, also staged (array_json)
                parts.append(_Hole(F.col(array_json(f.path))))
        elif f.json is Json.STRING:
            parts += ['"', column, '"']
        else:
            parts.append(column.cast("string"))
    parts.append("}")
    return parts


def _concat(parts: list[_Part]) -> Column:
    """The parts as one text (a _Hole as its compact array), adjacent literals as one."""
    merged: list[str | Column] = []
    for part in parts:
        item = part.compact if isinstance(part, _Hole) else part
        if isinstance(item, str) and merged and isinstance(merged[-1], str):
            merged[-1] += item
        else:
            merged.append(item)
    return F.concat(*[F.lit(x) if isinstance(x, str) else x for x in merged])


def _rendered(value: Column, path: str, order: S.Order) -> Column:
    """The object at `path` as to_json writes it with its fields in `order` (see _parts)."""
    return _concat(_parts(value, path, order, _COMPACT))


def _dumps_equal(text: Column, ev: Column) -> Column:
    """Whether the text is the document form as `json.dumps` writes it (its separators, the
    definition's order) with any spaces in its array, compared without removing the spaces of
    the whole text (one `replace` over the whole text was the backfill's dearest check,
    docs/benchmarks.md): the text around the one array must equal its rendering with
    json.dumps's separators, and the array's text with its spaces removed the array's to_json.
    Exactly what comparing the text with its spaces removed to the compact rendering accepted,
    except a text whose spaces lie elsewhere or inside a value, which takes the exact path."""
    parts = _parts(ev, D.ROOT, S.document_order, _DUMPS)
    holes = [i for i, part in enumerate(parts) if isinstance(part, _Hole)]
    if len(holes) != 1:  # not the shape this is written for: the whole text's spaces removed
        compact = F.replace(text, F.lit(" "), F.lit(""))
        return compact == _rendered(ev, D.ROOT, S.document_order)
    hole = parts[holes[0]]
    assert isinstance(hole, _Hole)
    before, after = _concat(parts[: holes[0]]), _concat(parts[holes[0] + 1 :])
    # Byte positions (octet_length, a binary substring): no walk over the text's characters.
    n, m, size = F.octet_length(before), F.octet_length(after), F.octet_length("value")
    array = F.col("value").substr(n + 1, size - n - m).cast("string")
    return (
        (size >= n + m)
        & text.startswith(before)
        & text.endswith(after)
        & (F.replace(array, F.lit(" "), F.lit("")) == hole.compact)
    )


def array_json(path: str) -> str:
    """The column of classify() holding the array at `path` as to_json writes it (its elements'
    fields in the connector's order): rendered once, for the canonical-text check and the
    staged items."""
    return path.replace(".", "_") + "_json"


def _arrays_json() -> dict[str, Column]:
    """Every array field outside an array, as to_json writes it (see array_json)."""
    return {
        array_json(f.path): F.to_json(_at(f.path), _TO_JSON)
        for f in D.FIELDS
        if f.json is Json.ARRAY and "[]" not in f.path
    }


def _complete() -> Column:
    """Whether every required field was read (to_json leaves out what was not); false may also
    mean "not sure" (the exact path decides). No lambda: an element-wise field (the array of each
    element's value) holds no null, which also says each element is an object, when
    `array_contains` of a value no event has is false (null: a null element; true: the value)."""
    complete = F.lit(True)
    for field in D.FIELDS:
        value = _at(field.path)
        if "[]" in field.path and field.required:
            complete = complete & ~F.array_contains(value, F.lit(_NO_VALUE[field.json]))
        elif field.required:
            complete = complete & value.isNotNull()
    return complete


def _canonical() -> Column:
    """Whether the text is exactly what from_json read, complete, in either known form: what
    to_json writes of it (the connector's form), rendered by _rendered (cheaper than to_json),
    or the document form as json.dumps writes it (_dumps_equal), for a text without a
    backslash (no escape, so no value holds a character to_json would escape) that from_json
    read whole. The forms start with different keys, so the text's start picks the one to
    compare. A text in neither form (another spacing, a tab, a line break) takes the exact
    path, which decides the same."""
    ev, text = F.col("ev"), _text()
    first = f'{{"{D.wire_order(D.children(D.ROOT))[0].name}":'
    canonical = F.when(text.startswith(first), text == _rendered(ev, D.ROOT, D.wire_order))
    canonical = canonical.otherwise(_dumps_equal(text, ev))
    plain = ~F.col("backslash") & ev[S.CORRUPT_COLUMN].isNull()
    return F.coalesce(plain & _complete() & canonical, F.lit(False))


def _variant_is(value: Column, json: Json) -> Column:
    """Whether a present variant value is of the JSON type."""
    kind = F.schema_of_variant(value)
    if json in _VARIANT_TYPE:
        return kind == _VARIANT_TYPE[json]
    return kind.startswith(_VARIANT_PREFIX[json])


def _absent(value: Column) -> Column:
    return value.isNull() | F.is_variant_null(value)


def _present_but_not(json: Json) -> Callable[[Column], Column]:
    """A test: the variant value is present and not of the JSON type."""
    return lambda value: ~_absent(value) & ~_variant_is(value, json)


def _objects(path: str) -> Column:
    """Every object at `path` as an array of map<string, variant> (rare path: lambdas)."""
    if path == D.ROOT:
        return F.array(F.try_variant_get(F.col("v"), "$", _OBJECT))
    field = D.BY_PATH[path.removesuffix("[]")]
    parents = _objects(field.parent)
    if field.json is Json.OBJECT:
        return F.transform(parents, lambda o: F.try_variant_get(o[field.name], "$", _OBJECT))
    return F.flatten(
        F.transform(parents, lambda o: F.try_variant_get(o[field.name], "$", f"array<{_OBJECT}>"))
    )


class _Check(NamedTuple):
    """One check of phase 4: `each` tests each object at `path` (any failing fails the check);
    a check with no path is `whole`, a test of the whole record."""

    path: str | None
    reason: Column
    each: Callable[[Column], Column] | None = None
    whole: Column | None = None


def _field_test(field: Field, test: Callable[[Column], Column]) -> Callable[[Column], Column]:
    return lambda o: test(o[field.name])


def _has_extra(names: Column) -> Callable[[Column], Column]:
    return lambda o: F.size(F.array_except(F.map_keys(o), names)) > 0


def _shape(path: str) -> list[_Check]:
    """Phase 4 for the objects at `path`, depth first, in order."""
    fields = D.children(path)
    names = F.array(*[F.lit(f.name) for f in fields])
    extra = F.array_except(F.flatten(F.transform(_objects(path), F.map_keys)), names)
    unknown = F.concat(F.lit(D.unknown(path, "")), F.array_min(extra))
    checks = [_Check(path, unknown, each=_has_extra(names))]
    for field in fields:
        if field.required:
            missing = F.lit(D.missing(field.path))
            checks.append(_Check(path, missing, each=_field_test(field, _absent)))
        wrong = _field_test(field, _present_but_not(field.json))
        checks.append(_Check(path, F.lit(D.wrong_type(field.path, field.json)), each=wrong))
        if field.json is Json.OBJECT:
            checks += _shape(field.path)
        elif field.json is Json.ARRAY:
            elements = _objects(field.elements)
            not_objects = F.size(F.array_compact(elements)) != F.size(elements)
            not_object = F.lit(D.wrong_type(field.elements, Json.OBJECT))
            checks.append(_Check(None, not_object, whole=not_objects))
            checks += _shape(field.elements)
    return checks


def _first_failed(path: str, checks: list[_Check]) -> Column:
    """The index (in `checks`) of the first check of the objects at `path` that fails, or null.
    Each object is tested by all of them in one lambda, so the level's objects are built once:
    one `exists` per check, each with its own copy of the objects' expression (a Column is a
    tree), made the plan grow with fields x depth, and analysing it was the dearest step of
    building the job's plan (docs/benchmarks.md, issue 21)."""
    indexes = [i for i, check in enumerate(checks) if check.path == path]
    tests = [test for i in indexes if (test := checks[i].each) is not None]

    def position(o: Column) -> Column:  # 1-based position of the first failed test, else 0
        return F.array_position(F.array(*[test(o) for test in tests]), True)

    first = F.array_min(F.array_remove(F.transform(_objects(path), position), 0))
    return F.try_element_at(F.array(*[F.lit(i) for i in indexes]), first.cast("int"))


def _syntax_error() -> Column:
    """Phase 2."""
    text = _text()
    wrapped = F.from_json(
        F.concat(F.lit("["), text, F.lit("]")), ArrayType(StringType()), JSON_OPTIONS
    )
    closes = F.json_object_keys(F.concat(F.lit('{"x":'), text, F.lit("}")))
    one_value = F.coalesce((F.size(wrapped) == 1) & closes.isNotNull(), F.lit(False))
    return (
        F.when(~one_value, F.lit(D.NOT_JSON))
        .when(F.json_object_keys(text).isNull(), F.lit(D.NOT_OBJECT))
        .when(F.col("v").isNull(), F.lit(D.DUPLICATE_KEY))
    )


def _version_error() -> Column:
    """Phase 3."""
    field = D.VERSION
    where = f"$.{field.path}"
    value = F.try_variant_get(F.col("v"), where, "variant")
    typed = F.try_variant_get(F.col("v"), where, S.spark_type(field=field).simpleString())
    return (
        F.when(_absent(value), F.lit(D.missing(field.path)))
        .when(~_variant_is(value, field.json), F.lit(D.wrong_type(field.path, field.json)))
        .when(_breaks(field, typed), _message(field.reason, "value", typed))
    )


@cache
def _structure_error() -> Column:
    """Phases 2-4 on the exact path (null when they hold)."""
    checks = _shape(D.ROOT)
    paths = dict.fromkeys(c.path for c in checks if c.path is not None)
    firsts = [_first_failed(path, checks) for path in paths]
    firsts += [F.when(c.whole, F.lit(i)) for i, c in enumerate(checks) if c.whole is not None]
    first = F.least(*firsts)  # one copy of it: a CASE over its values would copy it per check
    reason = F.try_element_at(F.array(*[c.reason for c in checks]), first + 1)
    return F.coalesce(_syntax_error(), _version_error(), reason)


def _list_pattern(pattern: str) -> str:
    return rf"^(?:{pattern})(?:{_SEPARATOR}(?:{pattern}))*\z"


def _longer(text: Column, limit: int | Column) -> Column:
    """Whether the text has more than `limit` characters. Counting characters walks the text;
    its byte length is known, and a text has no more characters than bytes, so the count is
    needed only when the byte length is over the limit."""
    return (F.octet_length(text) > limit) & (F.length(text) > limit)


def _breaks_each(field: Field, values: Column) -> Column:
    """Whether any element's value breaks the field's rule (array functions only)."""
    if field.timestamp or (field.max_length is not None and field.pattern is None):
        raise NotImplementedError(f"{field.path}: no array-function check for this rule")
    broken = F.lit(False)
    if field.one_of:
        known = F.array(*[F.lit(x) for x in field.one_of])
        broken = broken | (F.size(F.array_except(values, known)) > 0)
    if field.pattern is not None:
        joined, count = F.array_join(values, _SEPARATOR), F.size(values)
        # The separator is one byte: the byte lengths count them without a walk over characters.
        removed = F.replace(joined, F.lit(_SEPARATOR), F.lit(""))
        separators = F.octet_length(joined) - F.octet_length(removed)
        if field.max_length is not None:  # spares the regex a huge text; the pattern decides
            broken = broken | _longer(joined, count * (field.max_length + 1))
        broken = broken | (separators != count - 1) | ~joined.rlike(_list_pattern(field.pattern))
    if field.minimum is not None:
        broken = broken | (F.array_min(values) < field.minimum)
    if field.maximum is not None:
        broken = broken | (F.array_max(values) > field.maximum)
    return broken


def _breaks(field: Field, value: Column) -> Column:
    """Whether a well-typed value breaks its field's rule."""
    if "[]" in field.path:
        return _breaks_each(field, value)
    if field.json is Json.ARRAY:
        value = F.size(value)
    broken = F.lit(False)
    if field.one_of:
        broken = broken | ~value.isin(list(field.one_of))
    if field.max_length is not None:
        broken = broken | _longer(value, field.max_length)
    if field.pattern is not None:
        broken = broken | ~value.rlike(S.full_match(field.pattern))
    if field.timestamp:  # its whole seconds s: |2s - (first + last)| > last - first
        # (one parse, not one per bound; EARLIEST starts a second, LATEST ends one)
        seconds = F.unix_seconds(F.try_to_timestamp(value))
        first, last = (F.unix_seconds(F.lit(t)) for t in (D.EARLIEST, D.LATEST))
        broken = broken | F.coalesce(
            F.abs(seconds * 2 - (first + last)) > last - first, F.lit(True)
        )
    if field.minimum is not None:
        broken = broken | (value < field.minimum)
    if field.maximum is not None:
        broken = broken | (value > field.maximum)
    return broken


def _at(path: str) -> Column:
    """The typed value at `path` (under an array: the array of each element's value)."""
    column = F.col("ev")
    for part in path.split("."):
        column = column[part.removesuffix("[]")]
    return column


def _header(name: str) -> Column:
    """The first header called `name`, as bytes (null when absent). array_position is
    code-generated; a filter() lambda would be interpreted row by row."""
    headers = F.col("headers")
    position = F.array_position(headers["key"], name)
    return F.when(position > 0, F.element_at(headers["value"], position.cast("int")))


def _relation(relation: D.Relation) -> list[tuple[Column, Column]]:
    """Phase 6 for one relation: (failed, reason) pairs in order."""
    reason = F.lit(relation.reason)
    match relation:
        case D.Implies(field=field, source=source, mapping=mapping):
            implied = F.create_map(*[F.lit(x) for kv in mapping.items() for x in kv])[_at(source)]
            return [(~F.coalesce(_at(field) == implied, F.lit(False)), reason)]
        case D.SumOfProducts(field=field, array=array, factors=(a, b)):
            total = F.aggregate(_at(array), F.lit(0).cast("long"), lambda acc, e: acc + e[a] * e[b])
            return [(_at(field) != total, reason)]
        case D.KeyEquals(field=field, missing=missing):
            key = F.col("key")
            return [(key.isNull(), F.lit(missing)), (_differs(key, _at(field)), reason)]
        case D.HeaderEquals(header=header, field=field):
            value = _header(header)
            return [(value.isNotNull() & _differs(value, _at(field)), reason)]


def _differs(raw: Column, text: Column) -> Column:
    """Whether the bytes `raw` are not the UTF-8 of the string `text`: compared as strings, byte
    for byte (a cast of bytes to a string copies nothing; encode() would build a Java string and
    its bytes for every record). A string from_json read is valid UTF-8 (phase 1)."""
    return raw.cast("string") != text


@cache
def _value_error() -> Column:
    """Phases 5 and 6 on the typed event (null when the record is a valid v1 event).

    Built once per process (a Column is an unresolved expression, reusable by every batch):
    building this tree costs hundreds of py4j calls.
    """
    checks = [
        (_breaks(f, _at(f.path)), _message(f.reason, "value", _at(f.path))) for f in D.VALUE_ORDER
    ]
    for relation in D.RELATIONS:
        checks += _relation(relation)
    chain = F.when(F.lit(False), F.lit(None).cast("string"))
    for failed, reason in checks:
        chain = chain.when(failed, reason)
    return chain


class _Classified(NamedTuple):
    read: tuple[Column, ...]  # the raw row's columns as classify names them, and `backslash`
    derived: tuple[dict[str, Column], ...]  # added in turn: a later one reads earlier ones
    dropped: tuple[str, ...]  # the steps' helpers


@cache
def _classified(max_event_bytes: int) -> _Classified:
    """classify's columns, built once per process. A Column is an unresolved expression that
    serves every DataFrame with the named columns, and building these costs ~3,600 py4j round
    trips: more than a small micro-batch's whole run when it was done every batch
    (docs/benchmarks.md, "The checks' columns built once")."""
    valid_text = F.col("raw_error").isNull()
    read = (
        F.col("key"),
        F.col("value"),
        F.col("topic"),
        F.col("partition").alias("kafka_partition"),
        F.col("offset").alias("kafka_offset"),
        F.col("timestamp").alias("kafka_timestamp"),
        F.col("headers"),
        _backslash().alias("backslash"),
    )
    derived = (
        {"raw_error": _raw_error(max_event_bytes)},
        # Only a value that passed phase 1 is handed to the JSON parsers.
        {"ev": F.when(valid_text, F.from_json(_text(), S.EVENT_WITH_CORRUPT, JSON_OPTIONS))},
        _arrays_json(),
        {"exact": valid_text & ~_canonical()},
        {"v": F.when(F.col("exact"), F.try_parse_json(_text()))},
        {"structure_error": F.when(F.col("exact"), _structure_error())},
        {"error": F.coalesce("raw_error", "structure_error", _value_error())},
    )
    return _Classified(read, derived, ("backslash", "raw_error", "exact", "v", "structure_error"))


def classify(raw: DataFrame, max_event_bytes: int) -> DataFrame:
    """Every raw record with its parsed event (`ev`), each of its arrays as JSON text
    (array_json) and `error` (null for a valid event)."""
    columns = _classified(max_event_bytes)
    classified = raw.select(*columns.read)
    for step in columns.derived:
        classified = classified.withColumns(step)
    return classified.drop(*columns.dropped)


def fingerprint(ev: Column) -> Column:
    """The event's content fingerprint: Spark's xxhash64 of the typed event (its fields, not its
    text), so the same event with another key order, whitespace or escapes has the same one;
    meaningful only for a valid event, whose every field is present. services/ops/
    fingerprint.py computes the same without Spark."""
    return F.xxhash64(ev)


def annotated(classified: DataFrame) -> DataFrame:
    """Every record with its typed event columns (meaningful only where `error` is null), its
    raw key and value, and `error`: one pass serves both outputs (events and dead letters)."""
    return classified.select(*_annotated())


@cache
def _annotated() -> tuple[Column, ...]:
    """annotated's columns, built once per process (see _classified)."""
    ev = F.col("ev")
    occurred_at = F.try_to_timestamp(ev["occurred_at"])
    return (
        F.col("topic"),
        F.col("kafka_partition"),
        F.col("kafka_offset"),
        F.col("kafka_timestamp"),
        F.lower(ev["event_id"]).alias("event_id"),
        ev["event_type"].alias("event_type"),
        occurred_at.alias("occurred_at"),
        F.to_date(occurred_at).alias("day"),
        ev["order"]["id"].alias("order_id"),
        ev["order"]["customer_id"].alias("customer_id"),
        ev["order"]["currency"].alias("currency"),
        ev["order"]["status"].alias("status"),
        ev["order"]["total_cents"].alias("total_cents"),
        ev["order"]["items"].alias("items"),
        F.col(array_json("order.items")).alias("items_json"),
        fingerprint(ev).alias("fingerprint"),
        F.col("key"),
        F.col("value"),
        F.col("error"),
    )
