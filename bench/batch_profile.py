"""Where one micro-batch's time goes (issue 28), from what Spark and Postgres already record,
with no change to the job:

    .venv/bin/python -m bench.batch_profile backfill KEEP_DIR --events 1000000
    .venv/bin/python -m bench.batch_profile streaming KEEP_DIR --rate 500 --seconds 60
    .venv/bin/python -m bench.batch_profile report KEEP_DIR [--skip N]

Runs `python -m spark_jobs.aggregation` (as bench.aggregation_bench does: fresh topic and
database) with Spark's event log on (PYSPARK_SUBMIT_ARGS, read by PySpark when it launches the
JVM) and, for the job's driver role in that database only, Postgres' statement durations in
the server's log (ALTER ROLE ... IN DATABASE ... SET log_min_duration_statement = 0; the
executors' role is not logged: its 5,000-row INSERTs would flood the log). Then, per batch:

- Spark's own phases (the QueryProgressEvent's durationMs: latestOffset, queryPlanning,
  getBatch, addBatch, walCommit, commitOffsets, triggerExecution);
- inside addBatch, the job's own split (its log line: "spark" = staging, "postgres" = fold);
- the Spark jobs that ran in the batch: from an SQL execution's start to its first job (the
  driver's planning and code generation), the jobs' wall time, their tasks' run, CPU and GC
  time (a task reads Kafka, parses, renders and writes its partition over JDBC, fused);
- the fold's statements, each named by its .sql file (or what it does), and the COMMIT.
"""

import json
import os
import random
import re
import shutil
import statistics
import subprocess
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import typer
from confluent_kafka import Producer

from bench.backfill_topic import backfill_topic
from onceflow.paths import ROOT
from onceflow.settings import get_settings
from onceflow.settings.kafka_auth import client_config
from spark_jobs.aggregation.statements import FOLDER
from stack import postgres
from tests.integration.aggregation.conftest import Job, Pipeline
from tests.integration.aggregation.history import order_events

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
POSTGRES_LOG = ROOT / ".stack" / "logs" / "postgres.log"
PROGRESS = "org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent"
SQL_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
SPARK_PHASES = (
    "latestOffset",
    "queryPlanning",
    "getBatch",
    "addBatch",
    "walCommit",
    "commitOffsets",
    "triggerExecution",
)
# A statement's (or, extended protocol, its parse, bind or execute step's) duration; with
# log_duration and no text: one of the executors' staging INSERTs.
_DURATION = re.compile(
    r"^(\S+ \S+) UTC \[(\d+)\] LOG:  duration: ([\d.]+) ms"
    r"(?:  (?:statement|(?:parse|bind|execute) [^:]*): (.*))?$"
)
_PREFIX = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
_BATCH_LINE = re.compile(r"batch (\d+): (\d+) records.*\(spark ([\d.]+)s, postgres ([\d.]+)s\)")
# Inline statements of the fold (not in sql/), by how they begin.
_INLINE = (
    ("SELECT aggregation.lock_writers", "lock_writers"),
    ("SELECT 1 FROM aggregation.applied_batches", "ledger_has"),
    ("CREATE TEMP TABLE", "prepare (temp tables)"),
    ("INSERT INTO t_events", "unstage t_events"),
    ("INSERT INTO t_dead", "unstage t_dead"),
    ("DELETE FROM aggregation.staged_records", "release (delete staged)"),
    ("ANALYZE", "analyze"),
    ("SELECT count(*) FROM t_events", "count events"),
    ("COMMIT", "COMMIT"),
    ("BEGIN", "BEGIN"),
)


def _squeeze(text: str) -> str:
    """A statement without comments, its whitespace one space."""
    lines = (line.split("--", 1)[0] for line in text.splitlines())
    return " ".join(" ".join(lines).split())


def statement_names(folder: Path = FOLDER) -> dict[str, str]:
    """The start (80 characters, squeezed) of each .sql statement of the job -> its name."""
    return {_squeeze(p.read_text())[:80]: p.stem for p in sorted(folder.glob("*.sql"))}


def statement_name(text: str, known: dict[str, str]) -> str:
    """What a logged statement is: its .sql file's name, an inline statement's role, or its
    first words."""
    squeezed = _squeeze(text)
    for start, name in known.items():
        if squeezed.startswith(start):
            return name
    for start, name in _INLINE:
        if squeezed.startswith(start):
            return name
    return " ".join(squeezed.split()[:4])


@dataclass(frozen=True)
class Statement:
    """One statement's duration in the Postgres log."""

    at: datetime
    pid: int
    ms: float
    text: str


def logged_statements(lines: Iterable[str]) -> Iterator[Statement]:
    """The `duration:` entries of a Postgres log (a statement's continuation lines joined)."""
    current: list[str] | None = None
    head: re.Match[str] | None = None

    def done() -> Statement | None:
        if head is None or current is None:
            return None
        at = datetime.fromisoformat(head[1]).replace(tzinfo=UTC)
        return Statement(at, int(head[2]), float(head[3]), "\n".join(current))

    for line in lines:
        if _PREFIX.match(line):
            entry = done()
            if entry is not None:
                yield entry
            head = _DURATION.match(line.rstrip("\n"))
            current = [head[4] or ""] if head else None
        elif current is not None:
            current.append(line.rstrip("\n"))
    entry = done()
    if entry is not None:
        yield entry


def fold_transactions(
    statements: Iterable[Statement], known: dict[str, str]
) -> list[dict[str, float]]:
    """The driver's fold transactions, in order: each statement kind's milliseconds (summed), from
    lock_writers to its COMMIT."""
    folds: list[dict[str, float]] = []
    open_fold: dict[str, float] | None = None
    for s in statements:
        if not s.text:  # another connection's (the executors')
            continue
        name = statement_name(s.text, known)
        if name == "lock_writers":
            open_fold = defaultdict(float)
        if open_fold is None:
            continue
        open_fold[name] += s.ms
        if name == "COMMIT":
            folds.append(dict(open_fold))
            open_fold = None
    return folds


@dataclass
class SparkBatch:
    """What Spark's event log says of one micro-batch."""

    batch_id: int
    started: float  # epoch ms
    phases: dict[str, float]  # durationMs
    sql_executions: int = 0
    planning_ms: float = 0.0  # SQL execution start -> its first job
    jobs_ms: float = 0.0
    tasks: int = 0
    task_run_ms: float = 0.0
    task_cpu_ms: float = 0.0
    task_gc_ms: float = 0.0
    task_deserialize_ms: float = 0.0
    records_read: int = 0
    job_ids: list[int] = field(default_factory=list)


def _epoch_ms(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000


def spark_batches(events_: Iterable[dict[str, Any]]) -> list[SparkBatch]:
    """Per micro-batch: its progress (phases) and the SQL executions, jobs and tasks that ran
    within its trigger (by time)."""
    batches: list[SparkBatch] = []
    sql_starts: list[tuple[int, float]] = []
    job_start: dict[int, tuple[float, int | None]] = {}
    job_end: dict[int, float] = {}
    stage_job: dict[int, int] = {}
    tasks: list[tuple[int, dict[str, Any]]] = []
    for e in events_:
        kind = e.get("Event")
        if kind == PROGRESS:
            p = e["progress"]
            batches.append(
                SparkBatch(
                    int(p["batchId"]),
                    _epoch_ms(p["timestamp"]),
                    {k: float(v) for k, v in (p.get("durationMs") or {}).items()},
                )
            )
        elif kind == SQL_START:
            sql_starts.append((int(e["executionId"]), float(e["time"])))
        elif kind == "SparkListenerJobStart":
            props = e.get("Properties") or {}
            execution = props.get("spark.sql.execution.id")
            job_start[e["Job ID"]] = (
                float(e["Submission Time"]),
                int(execution) if execution is not None else None,
            )
            for stage in e.get("Stage IDs", []):
                stage_job[stage] = e["Job ID"]
        elif kind == "SparkListenerJobEnd":
            job_end[e["Job ID"]] = float(e["Completion Time"])
        elif kind == "SparkListenerTaskEnd":
            tasks.append((e["Stage ID"], e))
    executions = dict(sql_starts)

    def batch_at(ms: float) -> SparkBatch | None:
        for b in batches:
            if b.started <= ms <= b.started + b.phases.get("triggerExecution", 0):
                return b
        return None

    first_job: dict[int, float] = {}
    for job, (submitted, execution) in sorted(job_start.items()):
        b = batch_at(submitted)
        if b is None:
            continue
        b.job_ids.append(job)
        b.jobs_ms += job_end.get(job, submitted) - submitted
        if execution is not None and execution not in first_job:
            first_job[execution] = submitted
            b.sql_executions += 1
            b.planning_ms += submitted - executions.get(execution, submitted)
    by_job = {job: b for b in batches for job in b.job_ids}
    for stage, e in tasks:
        found = by_job.get(stage_job.get(stage, -1))
        if found is None:
            continue
        m = e.get("Task Metrics") or {}
        found.tasks += 1
        found.task_run_ms += m.get("Executor Run Time", 0)
        found.task_cpu_ms += m.get("Executor CPU Time", 0) / 1e6
        found.task_gc_ms += m.get("JVM GC Time", 0)
        found.task_deserialize_ms += m.get("Executor Deserialize Time", 0)
        found.records_read += (m.get("Input Metrics") or {}).get("Records Read", 0)
    return batches


def read_event_log(folder: Path) -> list[dict[str, Any]]:
    """Every event of the Spark event logs in `folder` (Spark 4 writes each as a directory of
    events_N_* files, zstd-compressed unless spark.eventLog.compress is off)."""
    found: list[dict[str, Any]] = []
    for path in sorted(folder.rglob("events_*")):
        if path.suffix == ".zstd":
            text = subprocess.run(
                ["zstd", "-dc", str(path)], capture_output=True, text=True, check=True
            ).stdout
        else:
            text = path.read_text()
        found.extend(json.loads(line) for line in text.splitlines() if line.strip())
    return found


def _log_fold_statements(p: Pipeline, on: bool) -> None:
    """In this database only: the job's driver role's statements with their durations in the
    server log, and the executors' role's durations alone (log_duration: no text)."""
    s = get_settings()
    settings = {
        s.credentials("spark")[0]: "log_min_duration_statement",
        s.credentials("spark_stage")[0]: "log_duration",
    }
    with psycopg.connect(postgres.superuser_conninfo(s), autocommit=True) as conn:
        for role, setting in settings.items():
            verb = f"SET {setting} = {'0' if setting.endswith('statement') else 'on'}"
            conn.execute(
                f'ALTER ROLE "{role}" IN DATABASE "{p.database}" '
                + (verb if on else f"RESET {setting}")
            )


def untexted_ms(statements: Iterable[Statement], start_ms: float, end_ms: float) -> float:
    """The milliseconds of the durations logged without a statement (the executors' staging
    INSERTs, summed over their connections) between two instants (epoch ms)."""
    return sum(
        s.ms for s in statements if not s.text and start_ms <= s.at.timestamp() * 1000 <= end_ms
    )


def _profiled_job(p: Pipeline, spark_log: Path, *args: str, **extra: str) -> Job:
    spark_log.mkdir(parents=True, exist_ok=True)
    os.environ["PYSPARK_SUBMIT_ARGS"] = (
        f"--conf spark.eventLog.enabled=true --conf spark.eventLog.dir=file://{spark_log}"
        " --conf spark.eventLog.compress=false pyspark-shell"
    )
    try:
        # The job reads the scratch topic as the test suites' Kafka principal (ACLs).
        return p.start(*args, kafka_principal="tests", **extra)
    finally:
        del os.environ["PYSPARK_SUBMIT_ARGS"]


def _keep(job: Job, spark_log: Path, log_from: int, keep: Path) -> None:
    """The run's evidence in `keep`: Spark's event log, the job's log, the Postgres log's lines
    written during the run."""
    keep.mkdir(parents=True, exist_ok=True)
    shutil.copytree(spark_log, keep / "spark-events", dirs_exist_ok=True)
    (keep / "job.log").write_text(job.output())
    with POSTGRES_LOG.open("rb") as f:
        f.seek(log_from)
        (keep / "postgres.log").write_bytes(f.read())


@app.command()
def report(kept: Path, skip: int = 1) -> None:
    """The per-batch table of a kept run (the first `skip` batches left out of the medians)."""
    known = statement_names()
    with (kept / "postgres.log").open(errors="replace") as f:
        statements = list(logged_statements(f))
    folds = fold_transactions(statements, known)
    events = read_event_log(kept / "spark-events")
    batches = [b for b in spark_batches(events) if "addBatch" in b.phases]
    text = (kept / "job.log").read_text(errors="replace")
    own = {int(m[1]): (int(m[2]), float(m[3]), float(m[4])) for m in _BATCH_LINE.finditer(text)}
    applied = [b for b in batches if b.batch_id in own]
    print(f"{len(applied)} batches with records; {len(folds)} fold transactions logged")
    rows: dict[str, list[float]] = defaultdict(list)
    for i, b in enumerate(applied):
        records, spark_s, postgres_s = own[b.batch_id]
        fold = folds[i] if i < len(folds) else {}
        row = {
            "records": float(records),
            **{f"spark {k}": b.phases.get(k, 0.0) for k in SPARK_PHASES},
            "job: staging (spark s)": spark_s * 1000,
            "job: fold (postgres s)": postgres_s * 1000,
            "sql executions": float(b.sql_executions),
            "planning (execution start -> first job)": b.planning_ms,
            "spark jobs wall": b.jobs_ms,
            "tasks": float(b.tasks),
            "tasks run (sum)": b.task_run_ms,
            "tasks CPU (sum)": b.task_cpu_ms,
            "tasks GC (sum)": b.task_gc_ms,
            "tasks deserialize (sum)": b.task_deserialize_ms,
            "staging INSERTs, server (sum)": untexted_ms(
                statements, b.started, b.started + b.phases.get("triggerExecution", 0)
            ),
            **{f"fold: {k}": v for k, v in sorted(fold.items(), key=lambda kv: -kv[1])},
        }
        print(f"batch {b.batch_id}: " + json.dumps({k: round(v, 1) for k, v in row.items()}))
        if i >= skip:
            for k, v in row.items():
                rows[k].append(v)
    if rows:
        print(f"\nmedians over batches {skip}..{len(applied) - 1} (ms unless a count):")
        for k, values in rows.items():
            print(f"| {k} | {statistics.median(values):,.1f} |")


@app.command()
def backfill(keep: Path, events: int = 1_000_000) -> None:
    """Profile a backfill's batches (the first one, cold, shown apart)."""
    with backfill_topic(events) as (p, _):
        _log_fold_statements(p, on=True)
        log_from = POSTGRES_LOG.stat().st_size
        job = _profiled_job(p, p.tmp / "spark-events", "--backfill")
        code = job.wait(timeout=3600)
        assert code == 0, job.output()[-3000:]
        _log_fold_statements(p, on=False)
        _keep(job, p.tmp / "spark-events", log_from, keep)
    report(keep, skip=1)


@app.command()
def streaming(keep: Path, rate: int = 500, seconds: int = 60, warm: int = 30) -> None:
    """Profile streaming batches at a steady rate (the first `warm` seconds left out)."""
    with backfill_topic(200) as (p, warmup):
        _log_fold_statements(p, on=True)
        log_from = POSTGRES_LOG.stat().st_size
        job = _profiled_job(p, p.tmp / "spark-events", agg_trigger_interval="1 second")
        try:
            p.wait_applied(warmup, 0, job, timeout=240)
            producer = Producer(
                {
                    **client_config(p.bootstrap, "tests"),
                    "linger.ms": 1,
                    "transactional.id": f"bench-{uuid.uuid4()}",
                }
            )
            producer.init_transactions(30)
            rng = random.Random(3)
            customers = [f"bench-{i}" for i in range(1000)]
            skus = [f"SKU-B-{i}" for i in range(100)]
            per_tick, start, sent = max(1, rate // 10), time.monotonic(), 0
            while time.monotonic() - start < seconds:
                producer.begin_transaction()
                for _ in range(per_tick):
                    r = order_events(rng, datetime.now(UTC), customers, skus)[0].record()
                    producer.produce(p.topic, key=r.key, value=r.value, headers=r.headers)
                producer.commit_transaction(30)
                sent += per_tick
                time.sleep(max(0.0, start + sent / rate - time.monotonic()))
            p.wait_applied(warmup + sent, 0, job, timeout=300)
        finally:
            job.stop()
            _log_fold_statements(p, on=False)
        _keep(job, p.tmp / "spark-events", log_from, keep)
    # ~1 batch a second: the first `warm` batches are left out of the medians.
    report(keep, skip=warm)


if __name__ == "__main__":
    app()
