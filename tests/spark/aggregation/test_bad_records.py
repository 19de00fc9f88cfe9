"""The Spark parser gives every bad record of the shared corpus (tests/oracle/bad_records.py)
the reason the Python reader gives (tests/unit/events/test_events.py), in every serialized
form, and stages the unusual valid ones as events: one batch per form, through the production
path (render.staged_rows)."""

import pytest
from pyspark.sql import SparkSession

from tests.oracle.bad_records import FORMS, GOOD, LIMIT, corpus
from tests.spark.aggregation.records import errors


@pytest.mark.parametrize("form", FORMS)
def test_every_bad_record_gets_the_python_readers_reason(spark: SparkSession, form: str) -> None:
    bad = corpus(LIMIT)
    good = list(GOOD.values())
    records = [b.make(FORMS[form]) for b in bad] + [make(FORMS[form]) for make in good]
    expected = [b.reason for b in bad] + [None] * len(good)
    got = errors(spark, records, LIMIT)
    mismatches = {
        name: (want, have)
        for name, want, have in zip([b.name for b in bad] + list(GOOD), expected, got, strict=True)
        if want != have
    }
    assert mismatches == {}
