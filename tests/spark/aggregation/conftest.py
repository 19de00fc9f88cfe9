"""One local SparkSession for the aggregation unit tests (no Kafka, no UI, 2 shuffle partitions)."""

import logging
from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from onceflow.settings import AggregationSettings
from spark_jobs.aggregation.session import build_session


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    settings = AggregationSettings(
        agg_ui_enabled=False, agg_shuffle_partitions=2, agg_spark_master="local[2]"
    )
    session = build_session(settings, "onceflow-aggregation-unit-tests", with_kafka=False)
    yield session
    session.stop()
    # py4j logs "Closing down clientserver connection" from __del__ at interpreter exit, after
    # pytest closed the stream it captured: keep that line from becoming a logging error.
    logging.getLogger("py4j").setLevel(logging.WARNING)
