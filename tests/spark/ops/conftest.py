"""One local SparkSession for the ops tests that check against the job (tests/spark/session.py)."""

from tests.spark.session import spark

__all__ = ["spark"]
