"""What observing costs in CPU, counted by the kernel rather than read off a throughput
difference (which this shared 2-core machine makes several times noisier than 5 %):

    .venv/bin/python -m bench.observe_cpu --seconds 120

On the running stack as shipped (Prometheus scraping every target every scrape_interval):
- Prometheus, postgres-exporter and the Postgres backends of the monitor role: CPU seconds
  (utime + stime of each process tree) over the window (backends are those open when it starts:
  one that comes and goes within the window is missed, so this part is a lower bound);
- the JMX agents, which spend their CPU inside the broker's and Connect's JVMs: per scrape,
  by amplification: the JVM's CPU while its /metrics is fetched back to back N times, minus
  the same JVM's CPU in an equally long window without extra scrapes, divided by N; times the
  scrapes per second Prometheus makes.
The sum over (cores x seconds) is the share of the machine observing takes away from the
pipeline: on a CPU-bound pipeline, the most it can lower throughput.
"""

import os
import time

import httpx
import psycopg
import typer

from bench.soak_sample import cpu_seconds, process_tree
from onceflow.settings import get_observability_settings, get_settings
from stack import postgres, prometheus, supervisor

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


def _tree(name: str) -> list[int]:
    return process_tree(int(supervisor.proxy().supervisor.getProcessInfo(name)["pid"]))


def _monitor_backends() -> list[int]:
    settings = get_settings()
    conninfo = postgres.superuser_conninfo(settings, settings.pg_database)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE usename = %s", (settings.monitor_db_user,)
        ).fetchall()
    return [int(r[0]) for r in rows]


def _scrape_interval() -> float:
    return float(str(prometheus.source()["global"]["scrape_interval"]).rstrip("s"))


def _per_scrape(jvm: str, port: int, n: int) -> float:
    """CPU seconds one scrape of this JVM's agent costs (amplified: n back-to-back scrapes)."""
    pids = _tree(jvm)
    url = f"http://127.0.0.1:{port}/metrics"
    with httpx.Client(timeout=30) as client:
        start, cpu0 = time.monotonic(), cpu_seconds(pids)
        for _ in range(n):
            client.get(url).raise_for_status()
        busy, scraped = time.monotonic() - start, cpu_seconds(pids) - cpu0
    cpu0 = cpu_seconds(pids)
    time.sleep(busy)  # the same JVM, the same length of time, no extra scrapes
    idle = cpu_seconds(pids) - cpu0
    return max(0.0, scraped - idle) / n


@app.command()
def main(seconds: int = 120, scrapes: int = 200) -> None:
    """CPU share of Prometheus, postgres-exporter, the monitor's queries and the JMX agents."""
    observe = get_observability_settings()
    interval = _scrape_interval()
    groups = {
        "prometheus": _tree("prometheus"),
        "postgres-exporter": _tree("postgres-exporter"),
        "postgres backends of the monitor role": _monitor_backends(),
    }
    before = {k: cpu_seconds(v) for k, v in groups.items()}
    time.sleep(seconds)
    cost = {k: (cpu_seconds(v) - before[k]) / seconds for k, v in groups.items()}
    for jvm, port in (("kafka", observe.kafka_jmx_port), ("connect", observe.connect_jmx_port)):
        cost[f"JMX agent in {jvm} ({interval:.0f} s scrapes)"] = (
            _per_scrape(jvm, port, scrapes) / interval
        )
    cores = os.cpu_count() or 1
    print(f"| over {seconds} s | CPU s/s | share of {cores} cores |\n|---|---|---|")
    for what, value in cost.items():
        print(f"| {what} | {value:.4f} | {100 * value / cores:.2f} % |")
    total = sum(cost.values())
    print(f"| all observing | {total:.4f} | {100 * total / cores:.2f} % |")


if __name__ == "__main__":
    app()
