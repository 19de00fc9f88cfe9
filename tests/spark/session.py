"""The `spark` fixture: one local SparkSession per test run (the job's jars, no UI, 2 shuffle
partitions), for tests/spark and the integration tests that run Spark without Kafka."""

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
    session = build_session(settings, "onceflow-aggregation-unit-tests")
    yield session
    session.stop()
    # py4j logs "Closing down clientserver connection" from __del__ at interpreter exit, after
    # pytest closed the stream it captured: keep that line from becoming a logging error.
    logging.getLogger("py4j").setLevel(logging.WARNING)
