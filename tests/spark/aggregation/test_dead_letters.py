"""Records that are not a valid v1 event are staged as dead letters with the first check they
fail, through the production path (render.staged_rows); every kind of bad record is in
test_bad_records.py."""

from pyspark.sql import SparkSession

from tests.spark.aggregation.records import errors, event, record, staged


def test_dead_letters_keep_the_raw_record(spark: SparkSession) -> None:
    out = staged(spark, [record(None, key=b"\x00k", value=b"\x01\x02")])
    (row,) = out["t_dead"]
    assert (row["key"], row["value"], row["kafka_offset"]) == ("\\x006b", "\\x0102", "0")
    assert row["error"] == "value is not JSON"
    assert out["t_events"] == []


def test_the_first_header_of_a_name_counts(spark: SparkSession) -> None:
    e = event()
    first_wins = [("id", e["event_id"].encode()), ("id", b"other")]
    assert errors(spark, [record(e, headers=first_wins)]) == [None]
    second = [("id", b"other"), ("id", e["event_id"].encode())]
    assert errors(spark, [record(e, headers=second)]) == ["header id does not match event_id"]
