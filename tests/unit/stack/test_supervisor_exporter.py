"""The supervisor event listener: its protocol with supervisord and the starts it counts."""

import io

from prometheus_client import generate_latest

from stack.supervisor_exporter import ProcessMetrics, listen


def _starts(metrics: ProcessMetrics, program: str, trigger: str) -> float | None:
    return metrics.registry.get_sample_value(
        "onceflow_supervisor_process_starts_total", {"program": program, "trigger": trigger}
    )


def _start_time(metrics: ProcessMetrics, program: str) -> float | None:
    return metrics.registry.get_sample_value(
        "onceflow_supervisor_process_start_time_seconds", {"program": program}
    )


def _event(metrics: ProcessMetrics, state: str, now: float = 0.0, **payload: str) -> None:
    metrics.observe(event=f"PROCESS_STATE_{state}", payload=payload, now=now)


def test_every_program_starts_at_zero() -> None:
    metrics = ProcessMetrics(programs=["api", "aggregation"])
    for program in ("api", "aggregation"):
        assert _starts(metrics, program, "automatic") == 0
        assert _starts(metrics, program, "requested") == 0
        assert _start_time(metrics, program) is None


def test_a_requested_start_then_a_crash_loop() -> None:
    metrics = ProcessMetrics(programs=["aggregation"])
    _event(metrics, "STARTING", 100.0, processname="aggregation", from_state="STOPPED")
    _event(metrics, "RUNNING", 103.0, processname="aggregation", pid="7")
    assert _start_time(metrics, "aggregation") == 100.0
    for n in range(3):
        _event(metrics, "EXITED", 120.0 + n, processname="aggregation", expected="0", pid="7")
        assert _start_time(metrics, "aggregation") is None
        _event(metrics, "STARTING", 121.0 + n, processname="aggregation", from_state="EXITED")
    _event(metrics, "BACKOFF", 130.0, processname="aggregation", from_state="STARTING")
    _event(metrics, "STARTING", 131.0, processname="aggregation", from_state="BACKOFF")
    assert _starts(metrics, "aggregation", "requested") == 1
    assert _starts(metrics, "aggregation", "automatic") == 4
    assert _start_time(metrics, "aggregation") == 131.0


def test_a_restart_by_an_operator_is_requested() -> None:
    metrics = ProcessMetrics(programs=["api"])
    _event(metrics, "STOPPING", processname="api", from_state="RUNNING")
    _event(metrics, "STOPPED", processname="api", from_state="STOPPING")
    _event(metrics, "STARTING", processname="api", from_state="STOPPED")
    assert _starts(metrics, "api", "requested") == 1
    assert _starts(metrics, "api", "automatic") == 0


def test_the_listener_answers_each_event_and_stops_at_eof() -> None:
    metrics = ProcessMetrics(programs=["api"])
    payload = "processname:api groupname:api from_state:EXITED tries:0"
    header = (
        "ver:3.0 server:supervisor serial:1 pool:x poolserial:1"
        f" eventname:PROCESS_STATE_STARTING len:{len(payload)}\n"
    )
    other = "ver:3.0 server:supervisor serial:2 pool:x poolserial:2 eventname:TICK_5 len:5\n"
    stdin, stdout = io.StringIO(header + payload + other + "when:"), io.StringIO()
    listen(metrics=metrics, stdin=stdin, stdout=stdout)
    assert stdout.getvalue() == "READY\nRESULT 2\nOKREADY\nRESULT 2\nOKREADY\n"
    assert _starts(metrics, "api", "automatic") == 1
    assert b"onceflow_supervisor_process_starts_total" in generate_latest(metrics.registry)
