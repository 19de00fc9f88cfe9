"""The Spark parser (EventCheck and its columns) gives every generated record the Python
reader's reason, or accepts it as the Python reader does: a differential test of the two
procedures that follow the one definition, on valid events with one fault each
(tests/oracle/generated.py), a few hundred records per Spark batch."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from tests.oracle.bad_records import LIMIT
from tests.oracle.events import Record
from tests.oracle.generated import records
from tests.python_reader import reason
from tests.spark.aggregation.records import errors


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(records(), min_size=250, max_size=250))
def test_the_readers_agree_on_generated_records(spark: SparkSession, batch: list[Record]) -> None:
    expected = [reason(r) for r in batch]
    got = errors(spark, batch, LIMIT)
    mismatches = [
        (r, want, have) for r, want, have in zip(batch, expected, got, strict=True) if want != have
    ]
    assert mismatches == []
    assert any(reason is None for reason in expected)  # the batch holds valid events too
