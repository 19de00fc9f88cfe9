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


def test_bundles_with_a_key_are_one_per_kind_and_partition_each_line_keyed(
    spark: SparkSession,
) -> None:
    df = spark.createDataFrame([(i,) for i in range(6)], "n long").repartition(3)
    lines = df.select(
        F.when(F.col("n") % 2 == 0, "even").otherwise("odd").alias("kind"),
        copytext.line(["n"], verbatim=["n"]).alias("line"),
    )
    bundled = copytext.bundle(lines, "q\t1", "7").collect()
    seen: dict[str, set[int]] = {}
    for row in bundled:
        payload = row["payload"].split("\n")
        assert len(payload) == row["rows"]
        for line in payload:
            query_id, batch_id, part, n = line.split("\t")
            assert (query_id, batch_id, int(part)) == ("q\\t1", "7", row["part"])
            assert int(n) % 2 == (row["kind"] == "odd")
            seen.setdefault(row["kind"], set()).add(int(n))
    assert seen == {"even": {0, 2, 4}, "odd": {1, 3, 5}}
    assert len({row["part"] for row in bundled}) > 1  # rendered in several partitions
