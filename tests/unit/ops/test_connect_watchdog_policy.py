"""The connect watchdog's decisions (pure): a FAILED task restarted at once, then with a capped
exponential backoff while it keeps failing, its count forgotten once it ran long enough; a
connector stuck UNASSIGNED/FAILED while its task runs restarted alone, and not one that is just
moving; a task failed while the group settled restarted without counting."""

import itertools
from typing import Any

import pytest

from onceflow.connect_settling import SETTLING
from services.ops.connect_watchdog import report
from services.ops.connect_watchdog_policy import (
    CONNECTOR,
    Hold,
    Memory,
    Policy,
    Restart,
    agreed,
    decide,
    restarted,
    task_target,
    trace_head,
)

POLICY = Policy(
    poll_s=5, stuck_after_s=30, backoff_first_s=10, backoff_cap_s=80, healthy_after_s=120
)
EXPIRED = (
    "org.apache.kafka.connect.errors.ConnectException: Unrecoverable exception from producer"
    " send callback\n\tat org.apache.kafka.connect.runtime.WorkerSourceTask.maybeThrow(...)\n"
    "Caused by: org.apache.kafka.common.errors.InvalidProducerEpochException: Producer attempted"
    " to produce with an old epoch.\n\tat ..."
)


def status(connector: str = "RUNNING", *tasks: tuple[str, str]) -> dict[str, Any]:
    """Connect's status document: the connector's state, and (state, trace) per task."""
    return {
        "name": "orders-outbox",
        "connector": {"state": connector, "worker_id": "127.0.0.1:8083"},
        "tasks": [
            {"id": n, "state": state, "worker_id": "127.0.0.1:8084", "trace": trace}
            for n, (state, trace) in enumerate(tasks)
        ],
        "type": "source",
    }


FAILED = status("RUNNING", ("FAILED", EXPIRED))
RUNS = status("RUNNING", ("RUNNING", ""))


def run(
    readings: list[tuple[float, dict[str, Any]]], policy: Policy = POLICY
) -> list[tuple[float, Restart | Hold]]:
    """Feed timed readings to decide(), carrying out every restart; what was decided when."""
    memory: Memory = {}
    seen: list[tuple[float, Restart | Hold]] = []
    for now, reading in readings:
        decisions, memory = decide(reading, memory, now, policy)
        for decision in decisions:
            seen.append((now, decision))
            if isinstance(decision, Restart):
                memory = restarted(memory, decision, now)
    return seen


def restarts(seen: list[tuple[float, Restart | Hold]]) -> list[tuple[float, str, int]]:
    return [(t, d.target, d.restarts) for t, d in seen if isinstance(d, Restart)]


ONE, TWO = "127.0.0.1:8083", "127.0.0.1:8084"


def on(worker: str, reading: dict[str, Any]) -> dict[str, Any]:
    """The reading with its tasks on `worker`."""
    return {**reading, "tasks": [{**task, "worker_id": worker} for task in reading["tasks"]]}


def test_a_zombies_own_failed_task_running_on_the_live_worker_is_left_alone() -> None:
    """A worker cut off from the brokers still says its task FAILED; the live worker runs it."""
    zombie, live = (TWO, on(TWO, FAILED)), (ONE, on(ONE, RUNS))
    assert agreed([zombie, live])["tasks"][0]["state"] == "RUNNING"
    assert agreed([live, zombie])["tasks"][0]["state"] == "RUNNING"
    assert decide(agreed([zombie, live]), {}, 0.0, POLICY)[0] == []


def test_a_failure_only_its_worker_knows_yet_is_acted_on() -> None:
    """make test-network run 4: the task FAILED on connect-2, whose status write had not reached
    connect-1, which still said it RUNNING on connect-2."""
    failing, behind = (TWO, on(TWO, FAILED)), (ONE, on(TWO, RUNS))
    assert agreed([behind, failing])["tasks"][0]["state"] == "FAILED"
    assert [type(d) for d in decide(agreed([behind, failing]), {}, 0.0, POLICY)[0]] == [Restart]


def test_what_every_worker_sees_is_acted_on() -> None:
    assert agreed([(ONE, FAILED), (TWO, FAILED)]) == FAILED
    assert agreed([(ONE, FAILED)]) == FAILED
    assert agreed([(ONE, RUNS), (TWO, on(ONE, FAILED))])["tasks"][0]["state"] == "RUNNING"
    stuck = status("UNASSIGNED", ("RUNNING", ""))
    assert agreed([(ONE, stuck), (TWO, stuck)])["connector"]["state"] == "UNASSIGNED"
    assert agreed([(ONE, stuck), (TWO, RUNS)])["connector"]["state"] == "RUNNING"


def test_a_failed_task_is_restarted_at_once_with_its_trace() -> None:
    decisions, _ = decide(FAILED, {}, 100.0, POLICY)
    assert decisions == [
        Restart(
            task_target(0),
            0,
            "FAILED",
            "org.apache.kafka.connect.errors.ConnectException: Unrecoverable exception from"
            " producer send callback (root cause: org.apache.kafka.common.errors."
            "InvalidProducerEpochException: Producer attempted to produce with an old epoch.)",
            1,
        )
    ]


def test_nothing_is_done_while_everything_runs_or_moves() -> None:
    readings = [
        (0.0, RUNS),
        (5.0, status("UNASSIGNED", ("UNASSIGNED", ""))),  # a rebalance
        (10.0, status("RUNNING", ("RESTARTING", ""))),
        (15.0, status("PAUSED", ("PAUSED", ""))),
        (20.0, status("RUNNING")),  # no task yet
    ]
    assert run(readings) == []


def test_a_task_that_keeps_failing_backs_off_to_the_cap_and_holds_are_reported_once() -> None:
    # Failing at every reading, every 5 s, for 10 minutes: restarts at 0, then 10, 20, 40,
    # 80 s apart, then every 80 s (the cap), not every 5 s.
    seen = run([(float(t), FAILED) for t in range(0, 600, 5)])
    times = [t for t, _, _ in restarts(seen)]
    assert times[:5] == [0.0, 10.0, 30.0, 70.0, 150.0]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(gaps) > 4
    assert set(gaps[4:]) == {80.0}
    assert [n for _, _, n in restarts(seen)] == list(range(1, len(times) + 1))
    holds = [(t, d) for t, d in seen if isinstance(d, Hold)]
    first = [(t, d.restarts, d.wait_s) for t, d in holds if d.first]
    # One new hold after each restart (its first sighting still FAILED), with the time left.
    assert first[:3] == [(5.0, 1, 5.0), (15.0, 2, 15.0), (35.0, 3, 35.0)]
    assert len(first) == len(times)


def test_a_task_that_runs_long_enough_starts_its_count_again() -> None:
    readings = [(0.0, FAILED), (5.0, RUNS), (10.0, FAILED), (20.0, FAILED), (25.0, RUNS)]
    # Ran past healthy_after_s (120 s) since its last restart (at 20 s): forgotten.
    readings += [(145.0, RUNS), (150.0, FAILED)]
    assert restarts(run(readings)) == [
        (0.0, task_target(0), 1),
        (10.0, task_target(0), 2),  # failed again soon: the backoff's first step, 10 s
        (150.0, task_target(0), 1),  # at once, as a first failure
    ]


def test_a_connector_stuck_unassigned_while_its_task_runs_is_restarted_alone() -> None:
    stale = status("UNASSIGNED", ("RUNNING", ""))
    seen = run([(float(t), stale) for t in range(0, 40, 5)])
    # Not while Connect may still be moving it (30 s), then once.
    assert restarts(seen) == [(30.0, CONNECTOR, 1)]
    (restart,) = [d for _, d in seen if isinstance(d, Restart)]
    assert restart.task_id is None
    assert restart.state == "UNASSIGNED"


def test_a_connector_unassigned_for_a_while_then_running_is_left_alone() -> None:
    stale = status("UNASSIGNED", ("RUNNING", ""))
    readings = [(0.0, stale), (20.0, stale), (25.0, RUNS), (30.0, stale), (55.0, stale)]
    assert restarts(run(readings)) == []
    assert restarts(run([*readings, (60.0, stale)])) == [(60.0, CONNECTOR, 1)]


def test_a_failed_connector_with_a_failed_task_restarts_the_task_first() -> None:
    both = status("FAILED", ("FAILED", EXPIRED))
    assert [d.target for d in decide(both, {}, 0.0, POLICY)[0]] == [task_target(0)]


def test_a_task_failed_while_the_group_settled_restarts_without_counting() -> None:
    settling = status("RUNNING", ("FAILED", f"ConnectRestException: {SETTLING[0]}."))
    seen = run([(0.0, settling), (5.0, RUNS)])
    assert restarts(seen) == [(0.0, task_target(0), 0)]
    assert all(d.settling for _, d in seen if isinstance(d, Restart))


def test_a_settling_failure_that_comes_back_backs_off_like_any_other() -> None:
    """A worker that never gets the group's session key fails its task so at every restart:
    only the first restart is free, then the backoff doubles to the cap, never every 10 s."""
    settling = status("RUNNING", ("FAILED", f"ConnectRestException: {SETTLING[0]}."))
    seen = run([(float(t), settling) for t in range(0, 400, 5)])
    found = restarts(seen)
    assert [(t, n) for t, _, n in found][:5] == [
        (0.0, 0),
        (10.0, 2),
        (30.0, 3),
        (70.0, 4),
        (150.0, 5),
    ]
    assert [d.settling for _, d in seen if isinstance(d, Restart)][:2] == [True, False]
    holds = [d for _, d in seen if isinstance(d, Hold) and d.first]
    assert holds[0].restarts == 1  # "after 1 restart(s)", not 0


def test_each_task_is_its_own_target() -> None:
    two = status("RUNNING", ("RUNNING", ""), ("FAILED", EXPIRED))
    decisions, memory = decide(two, {}, 0.0, POLICY)
    assert decisions == [Restart(task_target(1), 1, "FAILED", trace_head(EXPIRED), 1)]
    assert memory[task_target(0)].restarts == 0


def test_a_restart_not_carried_out_is_not_remembered() -> None:
    _, memory = decide(FAILED, {}, 0.0, POLICY)
    again, _ = decide(FAILED, memory, 5.0, POLICY)
    assert [type(d) for d in again] == [Restart]  # the first was refused: try again


def test_trace_head_is_one_line() -> None:
    assert trace_head("") == "no trace"
    assert trace_head("java.lang.IllegalStateException: boom\n\tat x.y(Z.java:1)") == (
        "java.lang.IllegalStateException: boom"
    )


@pytest.mark.parametrize(
    "bad",
    [
        {"poll_s": 0},
        {"backoff_first_s": -1},
        {"backoff_first_s": 60, "backoff_cap_s": 30},
        {"stuck_after_s": -1},
    ],
)
def test_a_policy_that_would_loop_hot_is_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=r"watchdog|backoff"):
        Policy(**bad)


def test_a_hold_is_logged_once_saying_it_is_not_the_network(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hold = Hold(
        task_target(0), "FAILED", "PSQLException: password authentication failed", 3, 40, True
    )
    with caplog.at_level("INFO", logger="onceflow.connect_watchdog"):
        report(hold, POLICY)
        report(Hold(**{**hold.__dict__, "first": False}), POLICY)
    (record,) = caplog.records
    assert record.levelname == "ERROR"
    assert "holding the next restart 40 s" in record.message
    assert "not a network fault" in record.message
    assert "password authentication failed" in record.message


def test_a_hold_after_a_single_restart_does_not_blame_every_restart(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hold = Hold(task_target(0), "FAILED", "InvalidProducerEpochException", 1, 5, True)
    with caplog.at_level("INFO", logger="onceflow.connect_watchdog"):
        report(hold, POLICY)
    (record,) = caplog.records
    assert record.levelname == "WARNING"
    assert "every restart" not in record.message
    assert "holding the next restart 5 s" in record.message
