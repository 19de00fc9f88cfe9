"""`make up` / `make down` / `make status`: start, stop and inspect the local pipeline."""

import subprocess
import sys

import typer
from rich.console import Console
from rich.table import Table

from onceflow import paths
from onceflow.settings import (
    get_notification_settings,
    get_observability_settings,
    get_retention_settings,
    get_settings,
)
from stack import api_key, connector, jvm, postgres, preflight, prometheus, supervisor, topics
from stack.components import Component, components
from stack.waiting import NotReadyError, wait_for

app = typer.Typer(
    help="Run Onceflow's local stack (state and logs in .stack/).", no_args_is_help=True
)
console = Console(width=140)


def _start(component: Component) -> None:
    console.print(f"[bold]{component.name}[/]: starting", highlight=False)
    supervisor.start(component.name)
    try:
        wait_for(component.ready, what=component.name, timeout=component.start_timeout)
    except NotReadyError as exc:
        raise NotReadyError(
            f"{exc}; supervisor says {supervisor.state(component.name)}. "
            f"Its log: {paths.LOGS / component.name}.log"
        ) from exc


def _provision() -> None:
    settings = get_settings()
    postgres.ensure_roles_and_database(settings)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "alembic",
            "-c",
            str(paths.ROOT / "migrations" / "alembic.ini"),
            "upgrade",
            "head",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    if postgres.ensure_replication_slot(settings):
        console.print(f"  created replication slot {settings.replication_slot}")


def _after(component: Component) -> None:
    settings = get_settings()
    if component.name == "postgres":
        _provision()
        # Only the local stack: provisioning another environment creates no key.
        if api_key.ensure_local_key(settings):
            where = paths.API_KEY.relative_to(paths.ROOT)
            console.print(f"  API key of client {api_key.LOCAL_CLIENT} written to {where}")
    elif component.name == "kafka":
        _topics()
    elif component.name == "connect":
        connector.register(settings)
    elif component.name == "prometheus":
        # Already running: pick up the config rendered by this `make up` and the current rules.
        supervisor.signal("prometheus", "HUP")


@app.command()
def up() -> None:
    """Start every component in order, waiting until each is healthy (idempotent)."""
    settings = get_settings()
    parts = components(settings)
    try:
        preflight.check(parts)
        paths.ensure_dirs()
        postgres.init_cluster()
        jvm.format_kafka_storage()
        prometheus.write_local(
            settings,
            get_observability_settings(),
            get_notification_settings(),
            get_retention_settings(),
        )
        supervisor.start_or_update(supervisor.render_config(parts, settings))
        for component in parts:
            _start(component)
            _after(component)
    except preflight.PreflightError as exc:
        console.print(f"[red]make up stopped:[/] {exc}", highlight=False)
        raise typer.Exit(2) from exc
    except (NotReadyError, RuntimeError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", None) or ""
        console.print(f"[red]make up failed:[/] {exc} {detail}".rstrip(), highlight=False)
        console.print("The components started so far are still running; `make down` stops them.")
        raise typer.Exit(1) from exc
    _print_table(parts, title="Onceflow is up")


@app.command()
def provision() -> None:
    """Create roles and database, migrate, and create the replication slot (idempotent).

    The slot exists before any order is accepted, so no write can be missed by the connector.
    """
    _provision()
    console.print("provisioned: roles, database, migrations, replication slot")


def _topics() -> None:
    settings = get_settings()
    wanted = topics.pipeline_topics(settings, get_notification_settings(), get_retention_settings())
    topics.ensure_topics(settings.kafka_bootstrap, wanted)


@app.command("topics")
def create_topics() -> None:
    """Create the pipeline's topics with their partitions and retention (idempotent)."""
    _topics()
    console.print("topics: outbox, notifications, dead letters, notified-ids changelog")


@app.command()
def down() -> None:
    """Stop every component; data in .stack/data is kept."""
    supervisor.shutdown()
    console.print("Onceflow is down (data kept in .stack/data; `make clean` deletes it).")


@app.command()
def status() -> None:
    """Show each component's process state, health and address."""
    parts = components(get_settings())
    _print_table(parts, title="Onceflow status")
    if not supervisor.is_running() or any(not _healthy(c) for c in parts):
        raise typer.Exit(1)


def _healthy(component: Component) -> bool:
    try:
        return component.ready()
    except Exception:
        return False


def _print_table(parts: list[Component], *, title: str) -> None:
    table = Table(title=title)
    for column in ("component", "process", "healthy", "address", "log"):
        table.add_column(column)
    running = supervisor.is_running()
    for component in parts:
        process = supervisor.state(component.name) if running else "STOPPED"
        healthy = "yes" if _healthy(component) else "no"
        table.add_row(
            component.name,
            process,
            healthy,
            component.where,
            str((paths.LOGS / component.name).with_suffix(".log").relative_to(paths.ROOT)),
        )
    console.print(table)


if __name__ == "__main__":
    sys.exit(app())
