"""The Spark parser's reading of a record's value: one JVM pass (java/onceflow/EventCheck.java)
driven by the one event definition, exported here as data, which gives the value's dead-letter
reason or, for a valid event, its typed row (schema.EVENT, what from_json would read).

EventCheck holds the procedure of the Python reader (onceflow.events), phase by phase, and no
rule of its own: every field, type, pattern, bound, reason and limit comes from
onceflow.event_definition through `definition()`. It is registered once per SparkSession as
UDF_NAME and runs in the executors' JVMs. A plainly valid event is read in one streaming pass
(FastPath.java) that builds its typed row as it checks (no from_json); any other value is decided
by the phases. The checks as Spark column expressions cost the backfill several times more
(docs/benchmarks.md, "Cost of the one event definition's checks"). The jar is built by
`make up` (stack/build_event_check.sh) under `jar_name()`, which names the digest of the sources
and PySpark's version, so an edited source (or another PySpark) is never run stale.
"""

import calendar
import hashlib
import json
from typing import Any

import pyspark
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)
from pyspark.sql.types import StringType, StructField, StructType

from onceflow import event_definition as D  # noqa: N812
from onceflow.event_definition import Field, Json
from onceflow.paths import ROOT
from spark_jobs.aggregation import schema as S  # noqa: N812

SOURCES = ROOT / "spark_jobs" / "aggregation" / "java"
JAR_PREFIX = "onceflow-event-check-"
UDF_NAME = "onceflow_event_check"
# The relations EventCheck decides (they read the value only); the others read the record's
# key and headers and are Spark columns (parse.py), checked after these.
VALUE_RELATIONS = (D.Implies, D.SumOfProducts)
# What EventCheck returns: the reason (null for a valid value), and the valid event's row.
RESULT = StructType([StructField("error", StringType()), StructField("event", S.EVENT)])


def jar_name() -> str:
    """The jar file the current Java sources (SOURCES) compile to against this PySpark."""
    digest = hashlib.sha256(f"pyspark {pyspark.__version__}\0".encode())
    for source in sorted(SOURCES.rglob("*.java")):
        digest.update(source.relative_to(SOURCES).as_posix().encode() + b"\0")
        digest.update(source.read_bytes())
    return f"{JAR_PREFIX}{digest.hexdigest()[:12]}.jar"


def value_relations() -> tuple[D.Relation, ...]:
    """The relations EventCheck decides: those RELATIONS opens with that read the value only."""
    count = 0
    while count < len(D.RELATIONS) and isinstance(D.RELATIONS[count], VALUE_RELATIONS):
        count += 1
    if any(isinstance(r, VALUE_RELATIONS) for r in D.RELATIONS[count:]):
        raise ValueError("RELATIONS must list the value's relations before the record's")
    return D.RELATIONS[:count]


def _field(field: Field) -> dict[str, Any]:
    exported: dict[str, Any] = {
        "path": field.path,
        "name": field.name,
        "parent": field.parent,
        "json": field.json.name,
        "required": field.required,
        "one_of": list(field.one_of),
        "max_length": field.max_length,
        "pattern": field.pattern,
        "timestamp": field.timestamp,
        "minimum": field.minimum,
        "maximum": field.maximum,
        "reason": field.reason,
        "missing": D.missing(field.path),
        "wrong_type": D.wrong_type(field.path, field.json),
        "steps": [[part.removesuffix("[]"), part.endswith("[]")] for part in field.path.split(".")],
    }
    if field.json is Json.ARRAY:
        exported["elements_wrong_type"] = D.wrong_type(field.elements, Json.OBJECT)
    return exported


def _relation(relation: D.Relation) -> dict[str, Any]:
    match relation:
        case D.Implies(field=field, source=source, mapping=mapping, reason=reason):
            return {"kind": "implies", "field": field, "source": source,
                    "mapping": dict(mapping), "reason": reason}  # fmt: skip
        case D.SumOfProducts(field=field, array=array, factors=factors, reason=reason):
            return {"kind": "sum_of_products", "field": field, "array": array,
                    "factors": list(factors), "reason": reason}  # fmt: skip
    raise ValueError(f"EventCheck does not decide {relation!r}")


def definition() -> dict[str, Any]:
    """The one event definition as the data EventCheck reads."""
    objects = [D.ROOT, *(p for p in map(D.nested, D.FIELDS) if p is not None)]
    return {
        "messages": {
            "not_utf8": D.NOT_UTF8,
            "lone_surrogate": D.HAS_LONE_SURROGATE,
            "nul": D.HAS_NUL,
            "not_json": D.NOT_JSON,
            "not_object": D.NOT_OBJECT,
            "duplicate_key": D.DUPLICATE_KEY,
        },
        "fields": [_field(f) for f in D.FIELDS],
        "unknown": {path: D.unknown(path, "") for path in objects},
        "version": D.VERSION.path,
        "value_order": [f.path for f in D.VALUE_ORDER],
        "relations": [_relation(r) for r in value_relations()],
        "escape_mark": D.ESCAPE_MARK,
        "escaped_backslash": list(D.ESCAPED_BACKSLASH),
        "lone_surrogate": D.LONE_SURROGATE,
        "nul": D.NUL,
        "max_depth": D.JSON_LIMITS.max_depth,
        "max_number_digits": D.JSON_LIMITS.max_number_digits,
        # Whole seconds, exactly (timestamp() is a float: LATEST's .999999 rounds up a second):
        # the Python reader's bounds hold microseconds, and a time within the last second of
        # LATEST is within it in both (a finer fraction is not in Python's).
        "earliest": calendar.timegm(D.EARLIEST.utctimetuple()),
        "latest": calendar.timegm(D.LATEST.utctimetuple()),
        "event_schema": S.EVENT.json(),
    }


def register(spark: SparkSession) -> None:
    """Register EventCheck, built from the definition, as UDF_NAME in this session."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    check = jvm.onceflow.EventCheck(json.dumps(definition()))
    result = jvm.org.apache.spark.sql.types.DataType.fromJson(RESULT.json())
    spark._jsparkSession.udf().register(UDF_NAME, check, result)


def checked(value: Column) -> Column:
    """EventCheck's RESULT for the value (not null)."""
    return F.call_function(UDF_NAME, value)
