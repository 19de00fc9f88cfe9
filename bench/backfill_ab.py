"""What a change costs the backfill: the jobs of several checkouts backfill the same topic, in
rotation, round after round, each into a fresh database (not a test).

  .venv/bin/python -m bench.backfill_ab --events 1000000 --rounds 3 A=/tmp/ab/A B=/tmp/ab/B

Each NAME=DIR is a checkout of this repository (a git worktree) with this checkout's `.stack/lib`,
`.stack/run` and `.stack/secrets` linked into it; its job runs with cwd DIR, so its own code.
When the checkouts' EventCheck sources differ, give each its own copy of `.stack/lib` rather than
a link: building one checkout's jar (stack/build_event_check.sh) removes the jar of the other.
The topic (bench.backfill_topic) is produced once; every run reads all of it from the earliest
offset. Figures, per run and as medians with their ratios to the first checkout's: job CPU (the
driver and Spark JVM, the kernel's count: steadier than wall time on a shared machine) and wall
time (JVM start included).
"""

import statistics
import time
from pathlib import Path

import typer

from bench.aggregation_bench import tree_cpu_until_exit
from bench.backfill_topic import backfill_topic
from tests.integration.databases import create_database, drop_database

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


def _checkouts(specs: list[str]) -> dict[str, Path]:
    named = dict(spec.split("=", 1) for spec in specs if "=" in spec)
    if len(named) != len(specs) or len(named) < 2:
        raise typer.BadParameter("give two or more checkouts as NAME=DIR")
    return {name: Path(folder).resolve() for name, folder in named.items()}


@app.command()
def main(checkouts: list[str], events: int = 1_000_000, rounds: int = 3) -> None:
    """Backfill the same topic with each checkout's job, `rounds` times in rotation."""
    folders = _checkouts(checkouts)
    cpu: dict[str, list[float]] = {name: [] for name in folders}
    wall: dict[str, list[float]] = {name: [] for name in folders}
    with backfill_topic(events) as (p, n):
        names = list(folders)
        for r in range(rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                database = f"{p.database}_{name.lower()}_{r}"
                create_database(database)
                try:
                    t0 = time.monotonic()
                    job = p.start_at(
                        folders[name],
                        "--backfill",
                        database=database,
                        kafka_principal="tests",
                        agg_backfill_checkpoint_root=str(p.tmp / f"backfill-{name}-{r}"),
                    )
                    used = tree_cpu_until_exit(job.proc.pid, job.proc.poll)
                    code = job.wait(timeout=3600)
                    seconds = time.monotonic() - t0
                    assert code == 0, job.output()[-3000:]
                    applied = p.query("SELECT events_applied FROM analytics.freshness", database)
                    assert applied[0][0] == n, (applied, n)
                finally:
                    drop_database(database)
                cpu[name].append(used)
                wall[name].append(seconds)
                print(
                    f"round {r + 1} {name}: job CPU {used:.1f} s, wall {seconds:.1f} s", flush=True
                )
    base = names[0]
    for name in names:
        c, w = statistics.median(cpu[name]), statistics.median(wall[name])
        print(
            f"{name}: {n} events, job CPU median {c:.1f} s ({c / statistics.median(cpu[base]):.3f}"
            f" of {base}), wall median {w:.1f} s ({w / statistics.median(wall[base]):.3f} of "
            f"{base}); runs CPU {cpu[name]}, wall {[round(x, 1) for x in wall[name]]}"
        )


if __name__ == "__main__":
    app()
