"""The cost of observing, in one run on the running stack (not a test):

    .venv/bin/python -m bench.observe_bench --rounds 2

Each round runs the end-to-end benchmark (bench/pipeline_bench.py) twice, once with the
observability stack scraping as shipped ("on") and once with Prometheus and postgres-exporter
stopped ("off": nothing scrapes, so the JMX agents and the services' metrics endpoints sit idle),
in alternating order so the machine's drift hits both. Each run is a throughput phase (orders
offered faster than the machine can take them) and a freshness phase (a steady rate). Memory
each exporter adds: the PSS of Prometheus and of postgres-exporter, and the heap held by each
JVM's JMX agent (the bytes of its io.prometheus objects, from `jcmd GC.class_histogram`).
"""

import statistics
import subprocess

import typer

from bench.pipeline_bench import measure
from bench.soak_sample import process_tree, process_usage
from stack import supervisor
from stack.waiting import wait_for

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
EXPORTERS = ("postgres-exporter", "prometheus")


def _observing(on: bool) -> None:
    for name in EXPORTERS:
        if on:
            supervisor.start(name)
        elif supervisor.state(name) in ("RUNNING", "STARTING"):
            supervisor.proxy().supervisor.stopProcess(name, True)
    want = "RUNNING" if on else "STOPPED"
    wait_for(
        lambda: all(supervisor.state(n) == want for n in EXPORTERS),
        what=f"exporters {want}",
        timeout=60,
    )


def _pid(name: str) -> int:
    return int(supervisor.proxy().supervisor.getProcessInfo(name)["pid"])


def _pss_mib(name: str) -> float:
    return sum(process_usage(pid)[0] for pid in process_tree(_pid(name))) / 2**20


def _agent_heap_kib(name: str) -> float:
    """Bytes of live io.prometheus objects in the JVM of `name` (a full GC runs first)."""
    out = subprocess.run(
        ["jcmd", str(_pid(name)), "GC.class_histogram"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    total = 0
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[3].startswith("io.prometheus"):
            total += int(parts[2])
    return total / 1024


@app.command()
def main(rounds: int = 2, flood: int = 1000, rate: int = 200, seconds: int = 30) -> None:
    """Throughput and p99 freshness with and without scraping; memory of each exporter."""
    results: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    memory: dict[str, float] = {}
    for r in range(rounds):
        for on in (True, False) if r % 2 == 0 else (False, True):
            _observing(on)
            throughput = measure(rate=flood, seconds=seconds).achieved
            fresh = measure(rate=rate, seconds=seconds).p99
            results[on].append((throughput, fresh))
            print(
                f"round {r + 1} {'on ' if on else 'off'}: {throughput:.0f} orders/s, "
                f"p99 freshness {fresh:.2f} s at {rate}/s"
            )
            if on:
                memory = {f"{n} PSS MiB": _pss_mib(n) for n in EXPORTERS}
                memory |= {
                    f"{n} JMX agent heap KiB": _agent_heap_kib(n) for n in ("kafka", "connect")
                }
    _observing(True)
    tput = {on: statistics.median(t for t, _ in v) for on, v in results.items()}
    p99 = {on: statistics.median(f for _, f in v) for on, v in results.items()}
    print("| | exporters on | off | on/off |")
    print("|---|---|---|---|")
    print(
        f"| throughput, orders/s (median) | {tput[True]:.0f} | {tput[False]:.0f} | "
        f"{tput[True] / tput[False]:.3f} |"
    )
    print(
        f"| p99 freshness at {rate}/s, s (median) | {p99[True]:.2f} | {p99[False]:.2f} | "
        f"{p99[True] / p99[False]:.3f} |"
    )
    for what, value in memory.items():
        print(f"| {what} | {value:,.1f} | | |")


if __name__ == "__main__":
    app()
