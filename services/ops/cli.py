"""`onceflow-ops`: what ops use to inspect, pause, resume and restart the pipeline. Every command
takes `--json` (services/ops/output.py)."""

from collections.abc import Callable
from importlib.metadata import version
from typing import Any

import typer

from onceflow.settings import get_observability_settings, get_retention_settings, get_settings
from services.maintenance.runner import run_once
from services.maintenance.tasks import Windows
from services.ops import (
    alerts,
    analytics_cli,
    clients_cli,
    connect_api,
    dead_letters_cli,
    lag,
)
from services.ops.output import JsonFlag, Listing, console, emit_json, fail, readable_errors, stamp
from services.ops.overview_cli import overview
from services.ops.reconcile_cli import reconcile
from services.ops.trace_cli import trace

app = typer.Typer(
    help="Operate Onceflow: the connector, lag, alerts, maintenance, API clients, dead letters.",
    no_args_is_help=True,
)
app.add_typer(clients_cli.app, name="clients")
app.add_typer(dead_letters_cli.app, name="dead-letters")
app.add_typer(analytics_cli.app, name="analytics")
app.command()(trace)
app.command()(overview)
app.command()(reconcile)
WAIT_HELP = "Wait until the connector and every task are RUNNING (at most --timeout seconds)."


def _version(show: bool) -> None:
    if show:
        typer.echo(f"onceflow-ops {version('onceflow')}")
        raise typer.Exit


@app.callback()
def main(
    _: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Operate Onceflow: the connector, lag, alerts, maintenance, API clients, dead letters."""


def _run_connect(
    action: str, call: Callable[..., Any], as_json: bool, wait_s: float | None = None
) -> None:
    settings = get_settings()
    with readable_errors(action):
        call(settings=settings)
        states = None if wait_s is None else connect_api.wait_running(settings, timeout=wait_s)
    if as_json:
        doc = {"action": action, "connector": settings.connector_name, "done": True}
        emit_json(doc if states is None else {**doc, "states": states})
        return
    console.print(f"{action}: done" + ("" if states is None else f" ({states})"))


@app.command()
def status(as_json: JsonFlag = False) -> None:
    """Show the connector's and its tasks' states."""
    with readable_errors("status"):
        result = connect_api.status(settings=get_settings())
    if as_json:
        emit_json(result)
        return
    console.print(f"connector {result['name']}: {result['connector']['state']}")
    for task in result["tasks"]:
        console.print(f"  task {task['id']}: {task['state']} {task.get('trace', '')[:400]}")


@app.command()
def pause(as_json: JsonFlag = False) -> None:
    """Pause the connector (writes keep being accepted; events wait in the slot)."""
    _run_connect("pause", connect_api.pause, as_json)


@app.command()
def resume(as_json: JsonFlag = False) -> None:
    """Resume the connector."""
    _run_connect("resume", connect_api.resume, as_json)


@app.command()
def restart(
    wait: bool = typer.Option(False, "--wait", help=WAIT_HELP),
    timeout: float = typer.Option(60.0, "--timeout", min=1, help="Seconds --wait waits at most."),
    as_json: JsonFlag = False,
) -> None:
    """Restart the connector and its tasks; with --wait, until they are RUNNING again."""
    _run_connect("restart", connect_api.restart, as_json, timeout if wait else None)


@app.command(name="lag")
def show_lag(as_json: JsonFlag = False) -> None:
    """Show how far Connect (WAL bytes) and the Spark job (offsets) are behind."""
    settings = get_settings()
    with readable_errors("lag"):
        slot = lag.slot_lag(settings=settings)
        parts = lag.topic_lag(settings=settings)
    if as_json:
        emit_json(
            {
                "slot": None
                if slot is None
                else {"name": settings.replication_slot, **vars(slot), "lost": slot.lost},
                "topic": settings.topic,
                "partitions": [{**vars(p), "open_transaction": p.open_transaction} for p in parts],
            }
        )
        return
    _print_slot(settings.replication_slot, slot)
    columns = ("partition", "end offset", "stable offset", "applied through", "behind")
    table = Listing(columns, title=f"{settings.topic}: aggregation job (read_committed)")
    table.right = columns
    for part in parts:
        table.add_row(
            str(part.partition),
            str(part.end_offset),
            str(part.stable_offset),
            "none" if part.applied_through is None else str(part.applied_through),
            str(part.behind),
        )
    table.print()
    for part in parts:
        if part.open_transaction:
            console.print(
                f"partition {part.partition}: a transaction is open "
                f"({part.end_offset - part.stable_offset} offsets past the stable offset); "
                "read_committed readers wait at the stable offset until it ends"
            )


def _print_slot(name: str, slot: lag.SlotLag | None) -> None:
    if slot is None:
        console.print(f"[red]replication slot {name} is missing[/]")
    elif slot.lost:
        console.print(
            f"[red]replication slot {name} is LOST: Postgres removed WAL it "
            "still needed (max_slot_wal_keep_size), so order events in it never reached Kafka. "
            "Recover as docs/operations.md#a-lost-replication-slot says.[/]"
        )
    else:
        state = "active" if slot.active else "INACTIVE (connector down or paused)"
        safe = "unlimited" if slot.safe_wal_size is None else f"{slot.safe_wal_size} bytes"
        # One value per line: a narrow terminal wraps between values, never inside one.
        console.print(f"slot {name}: {state}, wal_status {slot.wal_status}", highlight=False)
        console.print(f"  WAL retained:        {slot.retained_bytes} bytes", highlight=False)
        console.print(f"  not yet confirmed:   {slot.bytes_behind} bytes", highlight=False)
        console.print(f"  safe_wal_size:       {safe}", highlight=False)


@app.command(name="alerts")
def show_alerts(
    pending: bool = typer.Option(
        False, "--pending", help="Also list alerts not yet firing for their rule's `for:`."
    ),
    as_json: JsonFlag = False,
) -> None:
    """List the alerts Prometheus is firing, most severe first, each with its runbook."""
    observability = get_observability_settings()
    with readable_errors("alerts"):
        found = alerts.current(
            url=observability.prometheus_url,
            timeout=observability.prometheus_timeout_s,
            include_pending=pending,
        )
    if as_json:
        emit_json(found)
        return
    if not found:
        console.print(f"no alert is firing (Prometheus at {observability.prometheus_url})")
        return
    table = Listing(
        ("alert", "severity", "state", "since", "summary", "runbook"),
        title=f"alerts (Prometheus at {observability.prometheus_url})",
    )
    for alert in found:
        table.add_row(
            alert.name,
            alert.severity,
            alert.state,
            stamp(alert.active_at),
            alert.summary,
            alert.runbook,
        )
    table.print()


@app.command()
def maintenance(
    dry_run: bool = typer.Option(False, "--dry-run", help="Only show what would be removed."),
    as_json: JsonFlag = False,
) -> None:
    """Run the maintenance tasks once now (what the stack's maintenance process does on its
    schedule): expired Idempotency-Keys, ledger rows and remembered ids past their window."""
    retention = get_retention_settings()
    windows = Windows.of(retention)
    with readable_errors("maintenance"):
        removed = run_once(
            settings=get_settings(),
            windows=windows,
            batch=retention.maintenance_batch_rows,
            dry_run=dry_run,
        )
    if removed is None:
        fail("maintenance", "another maintenance run holds the lock: nothing done, try again later")
    if as_json:
        emit_json({"dry_run": dry_run, "removed": removed})
        return
    title = "would be removed (dry run)" if dry_run else "removed"
    table = Listing(("task", "rows"), title=title, right=("rows",))
    for item in removed:
        table.add_row(item.task, item.rows)
    table.print()


if __name__ == "__main__":
    app()
