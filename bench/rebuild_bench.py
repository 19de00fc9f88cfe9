"""How long `onceflow-ops analytics rebuild` holds the job's writers' lock (the job's next fold
waits that long), against the size of the history it recomputes.

`python -m bench.rebuild_bench --orders 100000 --orders 500000` seeds, per size, a scratch
database on the stack's cluster with that many orders and their events as the job leaves them
(bench/rebuild_seed.sql), then rebuilds every table three times: first into empty tables (every
row written: the worst swap), then twice with nothing to change (the usual case). Prints one
JSON line per size: the seconds of the recompute in the snapshot (no lock) and the seconds the
lock was held, each time (wall time on a shared machine: quote medians and the load). The
database is dropped after.
"""

import json
import os
from pathlib import Path

import psycopg
import typer

from onceflow import recompute
from services.ops import analytics_rebuild
from tests.integration.databases import create_database, drop_database

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
SEED = (Path(__file__).parent / "rebuild_seed.sql").read_text()


@app.command()
def main(orders: list[int] = typer.Option([100_000], "--orders")) -> None:  # noqa: B008
    for size in orders:
        database = f"onceflow_rebuild_bench_{os.getpid()}"
        settings = create_database(database)
        try:
            with psycopg.connect(settings.dsn("owner")) as conn:
                conn.execute(SEED % {"orders": size})
            held, snapshot, changed = [], [], []
            for _ in range(3):
                report = analytics_rebuild.rebuild(
                    settings.dsn("owner"), list(recompute.TABLES), dry_run=False
                )
                held.append(round(report.lock_held_s, 3))
                snapshot.append(round(report.snapshot_s, 3))
                changed.append(sum(t.changes for t in report.tables))
            doc = {
                "orders": size,
                "events": report.events,
                "rows": {t.table: t.rows for t in report.tables},
                "snapshot_s": snapshot,
                "lock_held_s": held,
                "rows_changed": changed,
                "load1": os.getloadavg()[0],
            }
            print(json.dumps(doc))
        finally:
            drop_database(database)


if __name__ == "__main__":
    app()
