"""The cost of observing, in one run on the running stack (not a test):

    .venv/bin/python -m bench.observe_bench --rounds 5

Each round runs the end-to-end benchmark (bench/pipeline_bench.py) with the exporters on, as
shipped, and off: the broker and Connect restarted without the JMX exporter agent
(ONCEFLOW_JMX_EXPORTER_ENABLED=false), Prometheus and postgres-exporter stopped. The order
alternates between rounds so the machine's drift hits both. What stays on is the pipeline's
own: the services' prometheus-client counters and the job's listener, which nothing scrapes
when Prometheus is off. Each run is a throughput phase (orders offered faster than the machine
takes them; throughput = orders / first post -> last counted in analytics) and a freshness
phase (a steady rate below saturation, so p99 measures latency rather than a growing queue:
100/s by default, where this 2-core machine takes ~250 orders/s; p99 of API commit ->
analytics row). Memory: the PSS of Prometheus and
of postgres-exporter, and of each JVM with and without its agent.
"""

import os
import statistics
import subprocess
from collections import defaultdict

import typer

from bench.pipeline_bench import measure
from bench.soak_sample import process_tree, process_usage
from onceflow import paths
from stack import supervisor
from stack.waiting import wait_for

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
EXPORTERS = ("postgres-exporter", "prometheus")
JVMS = ("kafka", "connect")


def _observing(on: bool) -> None:
    """Restart the broker and Connect with (on) or without (off) the agents; stop the scrapers
    when off. Both modes restart both JVMs, so neither starts with the other's warm JIT."""
    env = {**os.environ, "ONCEFLOW_JMX_EXPORTER_ENABLED": str(on).lower()}
    for name in reversed(JVMS):
        if supervisor.state(name) == "RUNNING":
            supervisor.proxy().supervisor.stopProcess(name, True)
    subprocess.run(
        [str(paths.VENV_BIN / "onceflow-stack"), "up"], env=env, check=True, capture_output=True
    )
    if not on:
        for name in EXPORTERS:
            supervisor.proxy().supervisor.stopProcess(name, True)
    want = "RUNNING" if on else "STOPPED"
    wait_for(
        lambda: all(supervisor.state(n) == want for n in EXPORTERS),
        what=f"exporters {want}",
        timeout=60,
    )


def _pss_mib(name: str) -> float:
    pid = int(supervisor.proxy().supervisor.getProcessInfo(name)["pid"])
    return sum(process_usage(p)[0] for p in process_tree(pid)) / 2**20


@app.command()
def main(rounds: int = 5, flood: int = 1000, rate: int = 100, seconds: int = 30) -> None:
    """Throughput and p99 freshness with and without the exporters; memory of each."""
    results: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    memory: dict[str, list[float]] = defaultdict(list)
    for r in range(rounds):
        for on in (True, False) if r % 2 == 0 else (False, True):
            mode = "on" if on else "off"
            _observing(on)
            measure(rate=50, seconds=5)  # warm-up: the connector's task after its restart
            throughput = measure(rate=flood, seconds=seconds).through
            for jvm in JVMS:
                memory[f"{jvm} JVM PSS MiB, agent {mode}"].append(_pss_mib(jvm))
            if on:
                for name in EXPORTERS:
                    memory[f"{name} PSS MiB"].append(_pss_mib(name))
            fresh = measure(rate=rate, seconds=seconds).p99
            results[on].append((throughput, fresh))
            print(
                f"round {r + 1} {mode}: {throughput:.0f} orders/s end to end, "
                f"p99 freshness {fresh:.2f} s at {rate}/s",
                flush=True,
            )
    _observing(True)
    tput = {on: statistics.median(t for t, _ in v) for on, v in results.items()}
    p99 = {on: statistics.median(f for _, f in v) for on, v in results.items()}
    print("| | exporters on | off | on / off |")
    print("|---|---|---|---|")
    print(
        f"| end-to-end throughput, orders/s (median) | {tput[True]:.0f} | {tput[False]:.0f} | "
        f"{tput[True] / tput[False]:.3f} |"
    )
    print(
        f"| p99 freshness at {rate}/s, s (median) | {p99[True]:.2f} | {p99[False]:.2f} | "
        f"{p99[True] / p99[False]:.3f} |"
    )
    for what, values in memory.items():
        print(f"| {what} (median) | {statistics.median(values):,.0f} | | |")


if __name__ == "__main__":
    app()
