"""copytext.py: COPY text fields (escaped, verbatim, bytea) and their bundling per table."""

from pyspark.sql import SparkSession
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)

from spark_jobs.aggregation import copytext


def test_copy_text_escapes_and_bundles(spark: SparkSession) -> None:
    df = spark.createDataFrame([("a\tb\\c\nd", None, b"\x00\xff")], "s string, n long, b binary")
    lines = df.select(copytext.line(["s", "n", "b"], bytea=["b"]).alias("line"))
    assert lines.collect()[0]["line"] == "a\\tb\\\\c\\nd\t\\N\t\\\\x00ff"
    (row,) = copytext.bundle(lines.select(F.lit("x").alias("kind"), "line")).collect()
    assert (row["kind"], row["rows"]) == ("x", 1)
    both = lines.select(F.explode(F.array(F.lit("x"), F.lit("y"))).alias("kind"), "line")
    assert copytext.payloads(copytext.bundle(both)) == {
        "x": "a\\tb\\\\c\\nd\t\\N\t\\\\x00ff\n",
        "y": "a\\tb\\\\c\\nd\t\\N\t\\\\x00ff\n",
    }


def test_verbatim_columns_skip_escaping_but_keep_nulls(spark: SparkSession) -> None:
    df = spark.createDataFrame([("a\tb", "x\ty", None)], "s string, v string, n long")
    lines = df.select(copytext.line(["s", "v", "n"], verbatim=["v", "n"]).alias("line"))
    assert lines.collect()[0]["line"] == "a\\tb\tx\ty\t\\N"
