"""The executors' JDBC connections (stage.Target): a connection that says nothing is dropped,
but never before the longest statement the session allows could answer (nor at all when a
statement may run for ever)."""

from onceflow.settings import AggregationSettings
from spark_jobs.aggregation import stage


def test_a_silent_connection_is_dropped_only_after_the_statement_timeout() -> None:
    settings = AggregationSettings(agg_pg_statement_timeout_ms=120_000)
    target = stage.Target("jdbc:postgresql://h/db", "u", "p", socket_timeout_s=30)
    assert target.properties()["socketTimeout"] == "30"
    assert stage.socket_timeout_s(settings) == 150
    assert stage.socket_timeout_s(settings) * 1000 > settings.agg_pg_statement_timeout_ms
    odd = AggregationSettings(agg_pg_statement_timeout_ms=120_500)
    assert stage.socket_timeout_s(odd) * 1000 > 120_500
    assert stage.socket_timeout_s(AggregationSettings(agg_pg_statement_timeout_ms=0)) == 0


def test_the_password_is_not_in_the_targets_repr() -> None:
    assert "secret" not in repr(stage.Target("jdbc:postgresql://h/db", "u", "secret"))
