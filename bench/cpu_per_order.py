"""What one order costs the whole running pipeline in CPU, and so how many orders/s this
machine's cores can carry at most (issue 28's 1,000 orders/s goal):

    .venv/bin/python -m bench.cpu_per_order --rates 250,500 --seconds 45

Counted by the kernel per supervised program (its process tree: the Spark JVM under its Python
driver, every Postgres backend; an exited process's CPU is in its parent's cutime/cstime), over
a run of `bench.pipeline_bench.measure` per rate (post `rate` orders/s, wait until the last
is counted): CPU seconds per second of the run, and per order (the job's per-batch cost and
the idle work, scrapes and empty triggers, included: what the whole pipeline spends per order at
that rate). The bench's own client CPU is shown apart: a real client runs elsewhere.
"""

import os
import resource
import time
from pathlib import Path

import typer

from bench.pipeline_bench import measure
from bench.soak_sample import process_tree
from stack import supervisor

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(root: int) -> float:
    """CPU seconds of root's tree so far, the reaped children's included."""
    total = 0
    for pid in process_tree(root):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return total / TICK


def programs() -> dict[str, int]:
    """Every running supervised program's pid."""
    infos = supervisor.proxy().supervisor.getAllProcessInfo()
    return {i["name"]: int(i["pid"]) for i in infos if i["statename"] == "RUNNING"}


def snapshot(pids: dict[str, int]) -> dict[str, float]:
    return {name: tree_cpu(pid) for name, pid in pids.items()}


def client_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def loaded(pids: dict[str, int], rate: int, seconds: int) -> tuple[int, float, dict[str, float]]:
    """(orders, their wall time, each program's CPU-s) of one pipeline_bench run."""
    start, cpu0 = time.monotonic(), snapshot(pids)
    run = measure(rate=rate, seconds=seconds)
    wall = time.monotonic() - start
    used = {k: v - cpu0[k] for k, v in snapshot(pids).items()}
    assert programs() == pids, "a program restarted during the run: its CPU is not comparable"
    return run.orders, wall, used


@app.command()
def main(rates: str = "250,500", seconds: int = 45) -> None:
    """Per rate: each program's CPU per second of the run and per order, and the cores used."""
    pids = programs()
    cores = os.cpu_count() or 1
    for rate in (int(r) for r in rates.split(",")):
        client0 = client_cpu()
        orders, wall, used = loaded(pids, rate, seconds)
        print(
            f"\n{rate}/s offered: {orders} orders through in {wall:.1f} s ({orders / wall:.0f}/s)"
        )
        print(f"{'program':<20} {'CPU-s/s':>8} {'CPU-ms/order':>13}")
        for name in sorted(used, key=used.__getitem__, reverse=True):
            print(f"{name:<20} {used[name] / wall:>8.3f} {used[name] * 1000 / orders:>13.3f}")
        total = sum(used.values())
        print(f"{'pipeline':<20} {total / wall:>8.3f} {total * 1000 / orders:>13.3f}")
        client = client_cpu() - client0
        print(f"{'bench client':<20} {client / wall:>8.3f} {client * 1000 / orders:>13.3f}")
        print(f"cores busy: {(total + client) / wall:.2f} of {cores}")


if __name__ == "__main__":
    app()
