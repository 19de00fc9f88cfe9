"""`onceflow-ops analytics rebuild [--tables ...] [--dry-run]`: recompute reporting tables and
swap them in while the job runs (services/ops/analytics_rebuild.py; docs/operations.md,
"Rebuilding the analytics tables", is the runbook)."""

import json
from typing import Annotated

import typer

from onceflow import recompute
from onceflow.settings import get_settings
from services.ops import analytics_rebuild
from services.ops.output import JsonFlag, Listing, console, emit_json, fail, readable_errors

app = typer.Typer(help="The reporting tables: rebuild them.", no_args_is_help=True)
TABLES_HELP = (
    "Tables to rebuild (repeat, or separate with commas): "
    f"{', '.join(recompute.TABLES)}. Default: all of them."
)


@app.command()
def rebuild(
    tables: Annotated[list[str] | None, typer.Option("--tables", help=TABLES_HELP)] = None,
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Build and verify, print the differences, change nothing."
    ),
    as_json: JsonFlag = False,
) -> None:
    """Recompute the tables from the events the job counted, verify them and swap them in, in
    one transaction serialised with the job's folds (the job keeps running)."""
    action = "analytics rebuild"
    try:
        names = analytics_rebuild.parse_tables(tables)
        with readable_errors(action):
            report = analytics_rebuild.rebuild(get_settings().dsn("owner"), names, dry_run=dry_run)
    except analytics_rebuild.RebuildError as exc:
        fail(action, str(exc))
    if as_json:
        emit_json(report)
        return
    verb = "would change (dry run, nothing changed)" if dry_run else "changed"
    columns = ("table", "rows", "missing", "extra", "different", "folded meanwhile")
    listing = Listing(columns, title=f"recomputed from {report.events} counted events: rows {verb}")
    listing.right = columns[1:]
    for t in report.tables:
        listing.add_row(t.table, t.rows, t.missing, t.extra, t.different, t.folded_since_snapshot)
    listing.print()
    for t in report.tables:
        for d in t.samples:
            console.print(
                f"{t.table} {d.kind}: live {json.dumps(d.live)} -> rebuilt {json.dumps(d.rebuilt)}",
                highlight=False,
                soft_wrap=True,
            )
        if t.changes > len(t.samples):
            console.print(f"{t.table}: {t.changes - len(t.samples)} more differences not shown")
    console.print(f"recomputed in a snapshot in {report.snapshot_s:.2f} s, without the lock")
    if not dry_run:
        console.print(
            "swapped in one transaction holding the writers' lock: the job's next fold waited"
            f" {report.lock_held_s:.2f} s (the lock was free after {report.lock_wait_s:.2f} s);"
            " 'folded meanwhile': rows the job changed between the snapshot and the lock, kept"
        )
