"""The job stages a batch in two passes (render.first_pass, then render.second_pass for the records
it deferred) so that the exact path of phases 2-4 is in no plan of a batch without such a record:
only the records whose text is not canonical are deferred, and the two passes stage what the one
pass the driver's restaging uses (render.staged_rows) stages, column for column."""

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)

from spark_jobs.aggregation import render
from tests.oracle.bad_records import FORMS, GOOD, LIMIT, corpus
from tests.spark.aggregation.records import QUERY_ID, raw_batch, record


def _by_offset(rows: DataFrame) -> list[dict[str, Any]]:
    return [r.asDict() for r in rows.orderBy("kafka_offset").collect()]


def test_only_records_not_in_a_canonical_form_are_deferred(spark: SparkSession) -> None:
    records = [
        GOOD["plain"](FORMS["document"]),  # json.dumps of the document
        GOOD["plain"](FORMS["wire"]),  # the connector's form
        GOOD["escaped-letters"](FORMS["wire"]),  # an escape: the exact path decides
        GOOD["plain"](FORMS["reversed"]),  # other key order, indented
        record(None, key=b"k", value=b"{"),  # not JSON: from_json did not read it whole
        record(None, key=b"k", value=b"\xff"),  # not UTF-8: phase 1's, never deferred
    ]
    first = render.first_pass(raw_batch(spark, records, partitions=2), LIMIT, QUERY_ID, 1)
    deferred = first.select("kafka_offset", render.DEFERRED).orderBy("kafka_offset").collect()
    assert [r[render.DEFERRED] for r in deferred] == [False, False, True, True, True, False]


def test_the_two_passes_stage_what_one_pass_does(spark: SparkSession) -> None:
    form = FORMS["document"]
    bad = corpus(LIMIT)[::4]  # of every phase
    records = [b.make(form) for b in bad] + [make(form) for make in GOOD.values()]
    batch = render.Batch(raw_batch(spark, records, partitions=2), LIMIT, QUERY_ID, 1)
    first = batch.first_pass()
    deferred = first.where(F.col(render.DEFERRED)).count()
    assert 0 < deferred < len(records)  # both passes have records
    two = render.kept(first).unionByName(batch.second_pass())
    assert _by_offset(two) == _by_offset(batch.rows())
