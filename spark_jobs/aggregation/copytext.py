"""DataFrames -> PostgreSQL COPY text, built inside Spark (pure DataFrame -> DataFrame).

The sink ships each micro-batch to Postgres as a few COPY payloads: every output table's rows
are rendered as COPY text lines by Spark and concatenated per table, so the driver collects a
handful of strings instead of millions of Python Row objects.
"""

from collections.abc import Sequence

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


def verbatim_field(c: Column) -> Column:
    """A COPY text field that needs no escaping (numbers, or text validated to hold none of
    backslash, tab, newline, CR); NULL as \\N."""
    return F.coalesce(c.cast("string"), F.lit(NULL))


def line(columns: Sequence[str], bytea: Sequence[str] = (), verbatim: Sequence[str] = ()) -> Column:
    """The row's fields, tab-separated, in `columns` order. `verbatim` columns skip escaping
    (four string replaces per field are most of the rendering cost)."""

    def field(name: str) -> Column:
        if name in bytea:
            return bytea_field(F.col(name))
        if name in verbatim:
            return verbatim_field(F.col(name))
        return text_field(F.col(name))

    return F.concat_ws("\t", *[field(c) for c in columns])


def bundle(lines: DataFrame) -> DataFrame:
    """(kind, payload, rows) from (kind, line) rows: each kind's lines joined by newlines, one
    row per kind and input partition (grouping by the partition id keeps the concatenation
    parallel and lets the map side collapse each partition into one row before the shuffle)."""
    return (
        lines.select("kind", F.spark_partition_id().alias("part"), "line")
        .groupBy("kind", "part")
        .agg(
            F.concat_ws("\n", F.collect_list("line")).alias("payload"),
            F.count(F.lit(1)).alias("rows"),
        )
    )


def payloads(bundled: DataFrame) -> dict[str, str]:
    """Collect a bundle: kind -> COPY text (newline-terminated lines)."""
    chunks: dict[str, list[str]] = {}
    for row in bundled.collect():
        chunks.setdefault(row["kind"], []).append(row["payload"])
    return {kind: "\n".join(texts) + "\n" for kind, texts in chunks.items()}
