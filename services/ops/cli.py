"""`onceflow-ops`: what ops use to inspect, pause, resume and restart the pipeline."""

import psycopg
import typer
from rich.console import Console
from rich.table import Table

from onceflow.settings import get_retention_settings, get_settings
from services.maintenance.runner import run_once
from services.maintenance.tasks import Windows
from services.ops import clients_cli, connect_api, lag
from services.ops.trace_cli import trace

app = typer.Typer(
    help="Operate Onceflow: the connector, lag, maintenance and API clients.", no_args_is_help=True
)
console = Console(width=120)
app.add_typer(clients_cli.app, name="clients")
app.command()(trace)


def _run_connect(action: str) -> None:
    try:
        getattr(connect_api, action)(settings=get_settings())
    except connect_api.ConnectError as exc:
        console.print(f"[red]{action} failed:[/] {exc}", highlight=False)
        raise typer.Exit(1) from exc
    console.print(f"{action}: done")


@app.command()
def status() -> None:
    """Show the connector's and its tasks' states."""
    try:
        result = connect_api.status(settings=get_settings())
    except connect_api.ConnectError as exc:
        console.print(f"[red]status failed:[/] {exc}", highlight=False)
        raise typer.Exit(1) from exc
    console.print(f"connector {result['name']}: {result['connector']['state']}")
    for task in result["tasks"]:
        console.print(f"  task {task['id']}: {task['state']} {task.get('trace', '')[:400]}")


@app.command()
def pause() -> None:
    """Pause the connector (writes keep being accepted; events wait in the slot)."""
    _run_connect("pause")


@app.command()
def resume() -> None:
    """Resume the connector."""
    _run_connect("resume")


@app.command()
def restart() -> None:
    """Restart the connector and its tasks."""
    _run_connect("restart")


@app.command(name="lag")
def show_lag() -> None:
    """Show how far Connect (WAL bytes) and the Spark job (offsets) are behind."""
    settings = get_settings()
    slot = lag.slot_lag(settings=settings)
    if slot is None:
        console.print(f"[red]replication slot {settings.replication_slot} is missing[/]")
    elif slot.lost:
        console.print(
            f"[red]replication slot {settings.replication_slot} is LOST: Postgres removed WAL it "
            "still needed (max_slot_wal_keep_size), so order events in it never reached Kafka. "
            "Recover as docs/operations.md#a-lost-replication-slot says.[/]"
        )
    else:
        state = "active" if slot.active else "INACTIVE (connector down or paused)"
        safe = "unlimited" if slot.safe_wal_size is None else f"{slot.safe_wal_size} bytes"
        console.print(
            f"slot {settings.replication_slot}: {state}, wal_status {slot.wal_status}, "
            f"{slot.retained_bytes} WAL bytes retained, {slot.bytes_behind} not yet confirmed, "
            f"safe_wal_size {safe}"
        )
    table = Table(title=f"{settings.topic}: aggregation job")
    for column in ("partition", "end offset", "applied through", "behind"):
        table.add_column(column, justify="right")
    for part in lag.topic_lag(settings=settings):
        table.add_row(
            str(part.partition), str(part.end_offset), str(part.applied_through), str(part.behind)
        )
    console.print(table)


@app.command()
def maintenance(
    dry_run: bool = typer.Option(False, "--dry-run", help="Only show what would be removed."),
) -> None:
    """Run the maintenance tasks once now (what the stack's maintenance process does on its
    schedule): expired Idempotency-Keys, ledger rows and remembered ids past their window."""
    retention = get_retention_settings()
    windows = Windows.of(retention)
    try:
        removed = run_once(
            settings=get_settings(),
            windows=windows,
            batch=retention.maintenance_batch_rows,
            dry_run=dry_run,
        )
    except psycopg.OperationalError as exc:
        console.print(f"[red]maintenance failed: the database is unreachable ({exc})[/]")
        raise typer.Exit(1) from exc
    if removed is None:
        console.print("another maintenance run holds the lock: nothing done, try again later")
        raise typer.Exit(1)
    table = Table(title="would be removed (dry run)" if dry_run else "removed")
    table.add_column("task")
    table.add_column("rows", justify="right")
    for item in removed:
        table.add_row(item.task, str(item.rows))
    console.print(table)


if __name__ == "__main__":
    app()
