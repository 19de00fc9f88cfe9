"""The Spark cluster's shared secret (issue 24): generated once, the daemons' properties file made
from it, the master and workers started with that file and no secret on their command lines or
in their environment, which programs hold it, and the job's settings, which never carry it (they
go on the driver JVM's command line)."""

import stat
from pathlib import Path

import pytest

from onceflow.settings import AggregationSettings, Settings
from onceflow.settings.spark_auth import SparkAuthSettings, SparkSecretMissingError
from onceflow.topology import Topology, layout
from spark_jobs.aggregation.event_check import jar_name
from spark_jobs.aggregation.session import session_options
from stack import spark, spark_secret
from stack.components import components

CLUSTER = layout(Topology.CLUSTER)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "secrets" / "spark"
    monkeypatch.setattr(spark_secret, "DAEMON_PROPERTIES", folder / "daemon.properties")
    return folder


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_secret_is_generated_once_and_the_daemons_file_follows_it(folder: Path) -> None:
    auth = SparkAuthSettings(spark_auth_secret_file=folder / "auth-secret")
    assert spark_secret.ensure(auth)
    secret = auth.secret()
    assert len(secret) >= 40
    written = [auth.spark_auth_secret_file, spark_secret.DAEMON_PROPERTIES]
    assert [_mode(path) for path in written] == [0o600, 0o600]
    assert _mode(folder) == 0o700
    assert spark_secret.DAEMON_PROPERTIES.read_text() == (
        f"spark.authenticate=true\nspark.authenticate.secret={secret}\n"
    )

    assert not spark_secret.ensure(auth)  # a second `make up` keeps it
    assert auth.secret() == secret


def test_the_environments_secret_wins_and_none_is_an_error(folder: Path) -> None:
    given = SparkAuthSettings(
        spark_auth_secret="from\\the-environment", spark_auth_secret_file=folder / "none"
    )
    assert not spark_secret.ensure(given)
    assert not given.spark_auth_secret_file.exists()
    # java.util.Properties reads `\\` as one backslash.
    assert spark_secret.DAEMON_PROPERTIES.read_text().endswith(
        "spark.authenticate.secret=from\\\\the-environment\n"
    )
    with pytest.raises(SparkSecretMissingError, match="ONCEFLOW_SPARK_AUTH_SECRET"):
        SparkAuthSettings(spark_auth_secret_file=folder / "none").secret()


def test_the_daemons_start_with_the_properties_file_and_no_secret() -> None:
    cluster = CLUSTER.spark
    assert cluster is not None
    commands = [
        spark.master_command(cluster),
        *(spark.worker_command(cluster, w, CLUSTER.memory, Path("/w")) for w in cluster.workers),
    ]
    assert len(commands) == 3
    for command in commands:
        assert command.endswith(f" --properties-file {spark_secret.DAEMON_PROPERTIES}")
        assert "authenticate" not in command
    env = dict(spark.daemon_env(CLUSTER.memory))
    assert not [key for key, value in env.items() if "authenticate" in value]


def test_only_the_clusters_spark_programs_and_the_job_hold_the_secret() -> None:
    def holders(topology: Topology) -> set[str]:
        return {c.name for c in components(Settings(topology=topology)) if c.spark_secret}

    assert holders(Topology.CLUSTER) == {
        "spark-master",
        "spark-worker-1",
        "spark-worker-2",
        "aggregation",
    }
    assert holders(Topology.SINGLE) == set()


def test_the_job_authenticates_on_a_standalone_master_only(tmp_path: Path) -> None:
    for jar in ("spark-sql-kafka-0-10_2.13-4.2.0.jar", "postgresql-42.7.jar", jar_name()):
        (tmp_path / jar).touch()
    cluster = AggregationSettings(topology=Topology.CLUSTER, agg_spark_kafka_jars=tmp_path)
    single = AggregationSettings(topology=Topology.SINGLE, agg_spark_kafka_jars=tmp_path)
    assert cluster.on_standalone_cluster
    assert not single.on_standalone_cluster
    options = session_options(cluster, "onceflow-aggregation")
    assert options["spark.master"] == CLUSTER.spark_master
    # What the driver is started with: no secret, and authentication comes with the secret only
    # (spark_jobs/aggregation/session.py hands both to the driver through its gateway).
    assert not [key for key in options if key.startswith("spark.authenticate")]
    secret = SparkAuthSettings(spark_auth_secret="the-secret").spark_conf()
    assert secret == {"spark.authenticate": "true", "spark.authenticate.secret": "the-secret"}
