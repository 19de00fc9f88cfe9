"""One local SparkSession for the aggregation unit tests (tests/spark/session.py)."""

from tests.spark.session import spark

__all__ = ["spark"]
