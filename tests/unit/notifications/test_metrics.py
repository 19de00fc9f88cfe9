"""The counters the notifications alerts take increase() of are exported at 0 from the start, so
the first dead letter or commit after an instance starts counts (a series born at 1 does not)."""

import subprocess
import sys

from onceflow.paths import ROOT

AT_ZERO = [
    ("onceflow_notifications_records_total", "notified"),
    ("onceflow_notifications_records_total", "duplicate"),
    ("onceflow_notifications_records_total", "dead_letter"),
    ("onceflow_notifications_transactions_total", "committed"),
    ("onceflow_notifications_transactions_total", "aborted"),
]


def test_each_outcome_is_exported_at_zero_before_anything_is_counted() -> None:
    # A fresh interpreter: other tests of this process count records.
    code = (
        "from prometheus_client import generate_latest\n"
        "from services.notifications import metrics\n"
        "print(generate_latest().decode())"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    for name, outcome in AT_ZERO:
        assert f'{name}{{outcome="{outcome}"}} 0.0\n' in run.stdout, (name, outcome)
