"""Real Kafka (the stack's broker), real Postgres, real Spark: the job runs as a subprocess.

Isolation from the stack's own aggregation job: every run uses a unique topic, a database
created and migrated here (dropped afterwards), a temporary checkpoint, no Spark UI and its own
metrics port.
"""

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from onceflow.paths import ROOT
from onceflow.schema.metadata import BOOKKEEPING_SCHEMA
from onceflow.settings import get_settings
from stack.waiting import port_open, wait_for
from tests.integration.aggregation.history import create_topic, delete_topic
from tests.integration.databases import create_database, drop_database
from tests.integration.notifications.harness import free_port_base

pytestmark = pytest.mark.integration


class Job:
    """One `python -m spark_jobs.aggregation` process with test overrides."""

    def __init__(self, env: dict[str, str], log: Path, *args: str, cwd: Path = ROOT) -> None:
        self.log = log
        self.handle = log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "spark_jobs.aggregation", *args],
            cwd=cwd,
            env=env,
            stdout=self.handle,
            stderr=subprocess.STDOUT,
        )

    def wait(self, timeout: float = 240) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            self.handle.close()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.wait(90)

    def output(self) -> str:
        return self.log.read_text(errors="replace")


class Pipeline:
    """A test topic + database + checkpoint, and helpers to run the job against them."""

    def __init__(self, tmp: Path) -> None:
        self.id = uuid.uuid4().hex[:10]
        self.topic = f"agg-test-{self.id}"
        self.database = f"agg_test_{self.id}"
        self.settings = create_database(self.database)
        self.bootstrap = self.settings.kafka_bootstrap
        create_topic(self.bootstrap, self.topic, partitions=3)
        self.tmp = tmp
        self.checkpoint = tmp / "checkpoint"
        self.metrics_port = free_port_base(1) + 1
        self.runs = 0

    def env(self, database: str | None = None, **extra: str) -> dict[str, str]:
        # The test's own settings only; the topology stays (bench/topology_bench.py runs the
        # job on the cluster's Spark master with it).
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("ONCEFLOW_") or k == "ONCEFLOW_TOPOLOGY"
        }
        env.update(
            ONCEFLOW_TOPIC=self.topic,
            # The scratch topic is the tests principal's (docs/security.md): the job reads it
            # as that principal, also when a benchmark (not pytest) starts it.
            ONCEFLOW_KAFKA_PRINCIPAL="tests",
            ONCEFLOW_PG_DATABASE=database or self.database,
            ONCEFLOW_AGG_CHECKPOINT_DIR=str(self.checkpoint),
            ONCEFLOW_AGG_BACKFILL_CHECKPOINT_ROOT=str(self.tmp / "backfill"),
            ONCEFLOW_AGG_UI_ENABLED="false",
            ONCEFLOW_AGG_TRIGGER_INTERVAL="500 milliseconds",
            ONCEFLOW_AGG_SHUFFLE_PARTITIONS="2",
            ONCEFLOW_AGG_DRIVER_MEMORY="768m",
            ONCEFLOW_AGG_METRICS_PORT=str(self.metrics_port),
        )
        env.update({f"ONCEFLOW_{k.upper()}": v for k, v in extra.items()})
        return env

    def start(self, *args: str, database: str | None = None, **extra: str) -> Job:
        return self.start_at(ROOT, *args, database=database, **extra)

    def start_at(self, cwd: Path, *args: str, database: str | None = None, **extra: str) -> Job:
        """Start the job of the checkout at `cwd` (another one's: bench.backfill_ab)."""
        self.runs += 1
        log = self.tmp / f"job-{self.runs}.log"
        return Job(self.env(database, **extra), log, *args, cwd=cwd)

    def dsn(self, database: str | None = None, role: str = "analyst") -> str:
        return (
            get_settings().model_copy(update={"pg_database": database or self.database}).dsn(role)
        )

    def query(self, sql: str, database: str | None = None) -> list[tuple[Any, ...]]:
        """Read as the analyst; a statement naming the job's bookkeeping (schema aggregation,
        which the analyst cannot see) as the job's role, in a read-only transaction."""
        role = "spark" if f"{BOOKKEEPING_SCHEMA}." in sql else "analyst"
        with psycopg.connect(self.dsn(database, role)) as conn:
            conn.read_only = True
            return conn.execute(sql).fetchall()

    def wait_applied(self, events: int, dead: int, job: Job, timeout: float = 180) -> None:
        def done() -> bool:
            assert job.proc.poll() is None, f"job exited early:\n{job.output()[-3000:]}"
            fresh = self.query("SELECT coalesce(sum(events_applied), 0) FROM analytics.freshness")
            bad = self.query("SELECT count(*) FROM analytics.dead_letters")
            return bool(fresh[0][0] >= events and bad[0][0] >= dead)

        wait_for(
            done,
            what=f"{events} events and {dead} dead letters applied",
            timeout=timeout,
            interval=0.5,
        )


@pytest.fixture
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pipeline]:
    settings = get_settings()
    host, port = settings.kafka_bootstrap.rsplit(":", 1)
    assert port_open(host, int(port)), (
        f"no Kafka broker at {settings.kafka_bootstrap}: run `make up`"
    )
    p = Pipeline(tmp_path_factory.mktemp("aggregation"))
    yield p
    delete_topic(p.bootstrap, p.topic)
    drop_database(p.database)
