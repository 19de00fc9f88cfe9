"""DataFrames -> PostgreSQL COPY text, built inside Spark (pure DataFrame -> DataFrame).

The sink ships each micro-batch to Postgres as a few COPY payloads: every output table's rows
are rendered as COPY text lines by Spark and concatenated per table, so the driver collects a
handful of strings instead of millions of Python Row objects.
"""

from collections.abc import Mapping, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)

NULL = "\\N"


def text_field(c: Column) -> Column:
    """One COPY text field: backslash, tab, newline and CR escaped; NULL as \\N."""
    s = c.cast("string")
    for raw, escaped in (("\\", "\\\\"), ("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r")):
        s = F.replace(s, F.lit(raw), F.lit(escaped))
    return F.coalesce(s, F.lit(NULL))


def bytea_field(c: Column) -> Column:
    """A bytea COPY text field in hex form (\\x...), NULL as \\N."""
    return F.coalesce(F.concat(F.lit("\\\\x"), F.lower(F.hex(c))), F.lit(NULL))


def copy_lines(df: DataFrame, columns: Sequence[str], bytea: Sequence[str] = ()) -> DataFrame:
    """One `line` column: the row's fields, tab-separated, in `columns` order."""
    fields = [bytea_field(F.col(c)) if c in bytea else text_field(F.col(c)) for c in columns]
    return df.select(F.concat_ws("\t", *fields).alias("line"))


def bundle(parts: Mapping[str, DataFrame]) -> DataFrame:
    """(kind, payload, rows): each part's lines joined by newlines, one row per non-empty kind
    and input partition (grouping by the partition id keeps the concatenation parallel and
    lets the map side collapse each partition into one row before the shuffle)."""
    tagged = [
        lines.select(F.lit(kind).alias("kind"), F.spark_partition_id().alias("part"), "line")
        for kind, lines in parts.items()
    ]
    union = tagged[0]
    for frame in tagged[1:]:
        union = union.unionByName(frame)
    return union.groupBy("kind", "part").agg(
        F.concat_ws("\n", F.collect_list("line")).alias("payload"),
        F.count(F.lit(1)).alias("rows"),
    )


def payloads(bundled: DataFrame) -> dict[str, str]:
    """Collect a bundle: kind -> COPY text (newline-terminated lines)."""
    chunks: dict[str, list[str]] = {}
    for row in bundled.collect():
        chunks.setdefault(row["kind"], []).append(row["payload"])
    return {kind: "\n".join(texts) + "\n" for kind, texts in chunks.items()}
