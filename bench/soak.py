"""Soak benchmark: steady load for a long time; proves every piece of state stays bounded.

    bench/soak.sh                       # restarts the stack with short windows, runs, restores
    .venv/bin/python -m bench.soak --minutes 30 --rate 200

Drives the running stack's API for the set duration (creates and transitions,
bench/soak_load.py), samples every `--every` seconds (bench/soak_sample.py), writes
docs/soak/soak.csv and docs/soak/soak.png and prints a Markdown summary for docs/benchmarks.md
with the rate achieved (a recorded run needs >= 200 orders/s). Success: after the first window
every bounded curve is flat, freshness is steady and no request failed.
"""

import asyncio
import contextlib
import csv
import os
import platform
import statistics
import time
import uuid

import typer

from bench import soak_plot
from bench.rawhttp import bench_key
from bench.soak_load import drive, failures
from bench.soak_sample import sample
from onceflow import paths
from onceflow.settings import get_retention_settings, get_settings

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
OUT = paths.ROOT / "docs" / "soak"
BOUNDED = (
    "rows aggregation.applied_events",
    "rows aggregation.applied_batches",
    "rows orders.idempotency_keys",
    "wal retained bytes",
    "topic bytes on disk",
    "pss api",
    "pss aggregation",
    "fds aggregation",
)


async def _sampling(samples: list[dict[str, float]], every: float, done: asyncio.Event) -> None:
    started = time.monotonic()
    while not done.is_set():
        values = await asyncio.to_thread(sample, get_settings())
        samples.append({"t": time.monotonic() - started, **values})
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), every)


async def _soak(
    rate: int, seconds: float, every: float
) -> tuple[dict[str, int], list[dict[str, float]]]:
    samples: list[dict[str, float]] = []
    done = asyncio.Event()
    sampler = asyncio.create_task(_sampling(samples, every, done))
    settings = get_settings()
    outcomes = await drive(
        port=settings.api_port,
        api_key=bench_key(settings, "soak"),
        run=uuid.uuid4().hex[:8],
        rate=rate,
        seconds=seconds,
    )
    done.set()
    await sampler
    return dict(outcomes), samples


def growth(values: list[float]) -> float:
    """Relative change from the first to the last quarter of `values` (0 = flat)."""
    quarter = max(1, len(values) // 4)
    first, last = statistics.fmean(values[:quarter]), statistics.fmean(values[-quarter:])
    return (last - first) / max(abs(first), 1.0)


@app.command()
def main(minutes: float = 30, rate: int = 200, every: float = 30) -> None:
    """Run the soak and report."""
    retention = get_retention_settings()
    window = max(retention.dedup_window, retention.idempotency_retention)
    outcomes, samples = asyncio.run(_soak(rate, minutes * 60, every))
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / "soak.csv").open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(samples[0]))
        writer.writeheader()
        writer.writerows(samples)
    soak_plot.plot(samples, window.total_seconds(), OUT / "soak.png")
    after = [s for s in samples if s["t"] >= window.total_seconds()]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores")
    placed = sum(n for outcome, n in outcomes.items() if outcome.startswith("place "))
    print(f"| soak | {minutes:g} min at {rate} orders/s offered, window {window} |")
    print(f"orders placed: {placed:,}, {placed / (minutes * 60):,.1f} orders/s achieved")
    print(f"requests: {sum(outcomes.values())}, failed: {failures(outcomes)}, {outcomes}")
    if len(after) < 4:
        print("too few samples after the first window to judge flatness")
        return
    print("| series | after the first window: min | max | growth first→last quarter |")
    print("|---|---|---|---|")
    for name in (*BOUNDED, "freshness s"):
        values = [s[name] for s in after]
        print(f"| {name} | {min(values):,.0f} | {max(values):,.0f} | {growth(values):+.1%} |")


if __name__ == "__main__":
    app()
