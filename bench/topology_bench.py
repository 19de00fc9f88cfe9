"""Single-node vs cluster topology, in one run on this machine (not a test):

    .venv/bin/python -m bench.topology_bench --events 300000

For each topology in turn: `onceflow-stack down`, `ONCEFLOW_TOPOLOGY=<t> onceflow-stack up`,
then (1) backfill: the streaming job is stopped and `bench.aggregation_bench backfill` runs a
separate job over N generated events from the earliest offset into a fresh database (on the
cluster: a Spark application on the standalone workers, the executors staging in parallel);
(2) end-to-end freshness: the streaming job started again, `bench.pipeline_bench` posts orders
at a steady rate through the API (API commit -> analytics row, p50/p99), twice in a row: right
after the job's restart, then warm. The single topology is brought back up at the end.
Startup time of each topology is reported too.
"""

import os
import re
import subprocess
import sys
import time

import typer

from onceflow import paths
from stack import supervisor

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
STACK = str(paths.VENV_BIN / "onceflow-stack")


def _run(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(args, env=env, cwd=paths.ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done.stdout


def _measure(topology: str, events: int, rate: int, seconds: int) -> dict[str, str]:
    env = {**os.environ, "ONCEFLOW_TOPOLOGY": topology}
    _run([STACK, "down"], env)
    started = time.monotonic()
    _run([STACK, "up"], env)
    result = {"startup": f"{time.monotonic() - started:.0f} s"}
    supervisor.proxy().supervisor.stopProcess("aggregation", True)
    out = _run(
        [sys.executable, "-m", "bench.aggregation_bench", "backfill", "--events", str(events)], env
    )
    print(out, flush=True)
    backfill = re.search(r"wall ([\d.]+)s \(JVM start included\) = ([\d,]+) events/s", out)
    own = re.search(r"job's own rate at the end: ([\d,?]+) records/s", out)
    result["backfill"] = (
        f"{backfill.group(2)} events/s ({backfill.group(1)} s)" if backfill else "?"
    )
    result["job's own rate"] = f"{own.group(1)} records/s" if own else "?"
    supervisor.proxy().supervisor.startProcess("aggregation", True)
    _run([STACK, "up"], env)  # waits until the job is ready again
    # Twice in a row: right after the job's restart (cold JVM, first connections), then warm.
    for label in ("after a restart", "warm"):
        bench = [sys.executable, "-m", "bench.pipeline_bench"]
        out = _run([*bench, "--rate", str(rate), "--seconds", str(seconds)], env)
        print(out, flush=True)
        fresh = re.search(r"p50 ([\d.]+)s p99 ([\d.]+)s", out)
        result[f"freshness {label}, p50 / p99"] = (
            f"{fresh.group(1)} / {fresh.group(2)} s" if fresh else "?"
        )
    return result


@app.command()
def main(events: int = 300_000, rate: int = 100, seconds: int = 30) -> None:
    """Backfill events/s and end-to-end freshness, single vs cluster, in one run."""
    results = {t: _measure(t, events, rate, seconds) for t in ("single", "cluster")}
    _run([STACK, "down"], {**os.environ, "ONCEFLOW_TOPOLOGY": "cluster"})
    _run([STACK, "up"], {**os.environ, "ONCEFLOW_TOPOLOGY": "single"})
    print("| | single | cluster |\n|---|---|---|")
    for what in results["single"]:
        print(f"| {what} | {results['single'][what]} | {results['cluster'][what]} |")


if __name__ == "__main__":
    app()
