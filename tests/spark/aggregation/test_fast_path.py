"""EventCheck's FastPath (spark_jobs/aggregation/java) takes the valid events the connector
writes, in every serialized form, and only them: else every record would pay for the phases."""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from spark_jobs.aggregation.event_check import definition
from tests.oracle.bad_records import FORMS, GOOD, LIMIT, corpus, wire
from tests.oracle.events import event
from tests.oracle.generated import valid_events


@pytest.fixture(scope="module")
def check(spark: SparkSession) -> Any:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    return jvm.onceflow.EventCheck(json.dumps(definition()))


def test_the_connectors_form_takes_the_fast_path(check: Any) -> None:
    assert check.fast(wire(event("OrderShipped")).encode())


@settings(max_examples=60, deadline=None)
@given(valid_events(), st.sampled_from(list(FORMS)))
def test_a_generated_valid_event_takes_the_fast_path(
    check: Any, e: dict[str, Any], form: str
) -> None:
    assert check.fast(FORMS[form](e).encode())


# The reasons of records whose value is a valid event (Spark columns decide them: parse.py).
RECORD_FAULTS = ("key ", "missing key", "header ")


@pytest.mark.parametrize("form", list(FORMS))
def test_good_values_and_only_they_take_the_fast_path(check: Any, form: str) -> None:
    for name, make in GOOD.items():
        assert check.fast(make(FORMS[form])[1]), name
    for bad in corpus(LIMIT):
        value = bad.make(FORMS[form])[1]
        if value is not None:
            assert check.fast(value) == bad.reason.startswith(RECORD_FAULTS), bad.name
