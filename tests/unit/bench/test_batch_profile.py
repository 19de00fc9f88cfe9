"""bench/batch_profile.py's pure parts: reading Postgres' statement durations and Spark's event
log into per-batch figures."""

from datetime import UTC, datetime
from typing import Any

from bench import batch_profile as bp
from spark_jobs.aggregation.statements import sql

AT = "2026-11-26 06:40:00.{ms:03d} UTC [77] LOG:  "
LOG = "".join(
    [
        AT.format(ms=100) + "duration: 0.050 ms  statement: BEGIN\n",
        AT.format(ms=101) + "duration: 0.200 ms  statement: SELECT aggregation.lock_writers()\n",
        AT.format(ms=200)
        + "duration: 120.500 ms  execute <unnamed>: INSERT INTO t_events (a, b)\n",
        "\tSELECT DISTINCT ON (kafka_partition, kafka_offset) a, b FROM staged\n",
        AT.format(ms=300) + "checkpoint starting: time\n",
        AT.format(ms=350) + "duration: 40.000 ms\n",
        AT.format(ms=360)
        + "duration: 2.000 ms  parse <unnamed>: INSERT INTO t_dead (topic) VALUES (1)\n",
        AT.format(ms=400) + "duration: 700.000 ms  statement: {upsert}\n",
        AT.format(ms=500) + "duration: 30.000 ms  statement: COMMIT\n",
        AT.format(ms=600) + "duration: 1.000 ms  statement: SELECT 1\n",
    ]
)


def _log() -> list[str]:
    return LOG.replace("{upsert}", sql("upsert_order_state")).splitlines(keepends=True)


def test_a_statement_is_named_by_its_sql_file_or_what_it_does() -> None:
    known = bp.statement_names()
    assert bp.statement_name(sql("upsert_daily_sales"), known) == "upsert_daily_sales"
    assert bp.statement_name("  COMMIT", known) == "COMMIT"
    assert bp.statement_name("INSERT INTO t_dead (topic) SELECT 1", known) == "unstage t_dead"
    assert bp.statement_name("VACUUM   aggregation.x  -- why\n", known) == "VACUUM aggregation.x"


def test_logged_statements_join_continuation_lines_and_skip_other_entries() -> None:
    found = list(bp.logged_statements(_log()))
    assert [s.ms for s in found] == [0.05, 0.2, 120.5, 40.0, 2.0, 700.0, 30.0, 1.0]
    assert found[3].text == ""
    assert {s.pid for s in found} == {77}
    assert found[2].text.startswith("INSERT INTO t_events (a, b)\n\tSELECT DISTINCT ON")
    assert found[5].text.rstrip() == sql("upsert_order_state").rstrip()


def test_a_fold_runs_from_lock_writers_to_its_commit() -> None:
    folds = bp.fold_transactions(bp.logged_statements(_log()), bp.statement_names())
    assert folds == [
        {
            "lock_writers": 0.2,
            "unstage t_events": 120.5,
            "unstage t_dead": 2.0,
            "upsert_order_state": 700.0,
            "COMMIT": 30.0,
        }
    ]


def test_untexted_durations_are_the_executors_summed_in_a_window() -> None:
    found = list(bp.logged_statements(_log()))
    at = datetime(2026, 11, 26, 6, 40, tzinfo=UTC).timestamp() * 1000
    assert bp.untexted_ms(found, at + 300, at + 400) == 40.0
    assert bp.untexted_ms(found, at + 351, at + 999) == 0.0


def _progress(batch: int, at: str, trigger: int) -> dict[str, Any]:
    return {
        "Event": bp.PROGRESS,
        "progress": {
            "batchId": batch,
            "timestamp": at,
            "durationMs": {"triggerExecution": trigger, "addBatch": trigger - 100},
        },
    }


def test_jobs_and_tasks_are_counted_in_the_batch_whose_trigger_they_ran_in() -> None:
    at = "2026-11-18T07:06:40.000Z"
    t0 = datetime(2026, 11, 18, 7, 6, 40, tzinfo=UTC).timestamp() * 1000
    task = {
        "Executor Run Time": 900,
        "Executor CPU Time": 700_000_000,
        "JVM GC Time": 20,
        "Executor Deserialize Time": 5,
        "Input Metrics": {"Records Read": 1000},
    }
    events: list[dict[str, Any]] = [
        _progress(0, at, 5000),
        {"Event": bp.SQL_START, "executionId": 3, "time": t0 + 1000},
        {
            "Event": "SparkListenerJobStart",
            "Job ID": 9,
            "Submission Time": t0 + 1400,
            "Stage IDs": [12],
            "Properties": {"spark.sql.execution.id": "3"},
        },
        {"Event": "SparkListenerTaskEnd", "Stage ID": 12, "Task Metrics": task},
        {"Event": "SparkListenerTaskEnd", "Stage ID": 12, "Task Metrics": task},
        {"Event": "SparkListenerJobEnd", "Job ID": 9, "Completion Time": t0 + 3400},
        # After the trigger: another batch's (or none's).
        {"Event": "SparkListenerJobStart", "Job ID": 10, "Submission Time": t0 + 9000},
    ]
    [b] = bp.spark_batches(events)
    assert (b.batch_id, b.phases) == (0, {"triggerExecution": 5000.0, "addBatch": 4900.0})
    assert (b.sql_executions, b.planning_ms, b.jobs_ms, b.job_ids) == (1, 400.0, 2000.0, [9])
    assert (b.tasks, b.task_run_ms, b.task_cpu_ms, b.task_gc_ms) == (2, 1800, 1400.0, 40)
    assert (b.task_deserialize_ms, b.records_read) == (10, 2000)
