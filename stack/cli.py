"""`make up` / `make down` / `make status`: start, stop and inspect the local pipeline."""

import contextlib
import itertools
import subprocess
import sys

import psycopg
import typer
from confluent_kafka import KafkaException
from rich.console import Console
from rich.table import Table

from onceflow import paths
from onceflow.settings import (
    get_notification_settings,
    get_observability_settings,
    get_retention_settings,
    get_settings,
)
from onceflow.settings.connections import ROLES
from onceflow.settings.kafka_auth import get_kafka_auth_settings
from onceflow.settings.ops import get_ops_settings
from onceflow.settings.spark_auth import get_spark_auth_settings
from stack import (
    api_key,
    checks,
    connector,
    db_secrets,
    health,
    jvm,
    kafka_migration,
    kafka_security,
    node_configs,
    ops_secret,
    postgres,
    preflight,
    private_data,
    prometheus,
    running,
    spark_secret,
    supervisor,
    topics,
)
from stack.components import Component, components
from stack.waiting import NotReadyError, wait_for

app = typer.Typer(
    help="Run Onceflow's local stack (state and logs in .stack/).", no_args_is_help=True
)
console = Console(width=140)
# How long `make up` waits, after the last wave, for every component's health check to pass.
SETTLE_SECONDS = 60.0


def _start(wave: list[Component]) -> None:
    """Start the components of one wave together, then wait until each is ready."""
    for component in wave:
        console.print(f"[bold]{component.name}[/]: starting", highlight=False)
        supervisor.start(component.name)
    for component in wave:
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


def _after(kind: str) -> None:
    """What follows a wave: provisioning, topics, the connector, Prometheus's reload."""
    settings = get_settings()
    if kind == "postgres":
        _provision()
        # Only the local stack: provisioning another environment creates no key.
        if api_key.ensure_local_key(settings):
            where = paths.API_KEY.relative_to(paths.ROOT)
            console.print(f"  API key of client {api_key.LOCAL_CLIENT} written to {where}")
    elif kind == "kafka":
        _kafka_principals()
        _topics()
    elif kind == "connect":
        connector.register(settings)
    elif kind == "prometheus":
        # Already running: pick up the config rendered by this `make up` and the current rules.
        supervisor.signal("prometheus", "HUP")


@app.command()
def up() -> None:
    """Start every component in order, waiting until each is healthy (idempotent).

    ONCEFLOW_TOPOLOGY=cluster starts the cluster topology (docs/operations.md)."""
    try:
        topology = running.act_on(starting=True)
    except running.TopologyError as exc:
        console.print(f"[red]make up stopped:[/] {exc}", highlight=False)
        raise typer.Exit(2) from exc
    settings = get_settings()
    parts = components(settings)
    try:
        preflight.check(parts)
        paths.ensure_dirs(settings.data)
        postgres.init_cluster(settings)
        kafka_auth = get_kafka_auth_settings()
        for principal in (
            kafka_security.ensure_passwords(kafka_auth) if kafka_auth.kafka_sasl else []
        ):
            where = kafka_auth.kafka_password_dir / principal
            console.print(f"  password of Kafka principal {principal} written to {where}")
        node_configs.write_all(settings.layout, kafka_auth)
        if ops_secret.ensure(get_ops_settings()):
            where = paths.OPS_PASSWORD.relative_to(paths.ROOT)
            console.print(f"  ops password (Kafka Connect, the dashboard) written to {where}")
        if spark_secret.ensure(get_spark_auth_settings()):
            where = paths.SPARK_AUTH_SECRET.relative_to(paths.ROOT)
            console.print(f"  Spark auth secret (the cluster's Spark) written to {where}")
        for role in db_secrets.ensure(settings):
            where = settings.db_password_dir / role
            console.print(f"  password of database role {role} written to {where}")
        for node in jvm.format_kafka_storage(settings.layout):
            console.print(f"  formatted the storage of {node}")
        prometheus.write_local(
            settings,
            get_observability_settings(),
            get_notification_settings(),
            get_retention_settings(),
        )
        private_data.make_private((*paths.STATE.glob("data*"), paths.LOGS))
        supervisor.start_or_update(supervisor.render_config(parts, settings))
        _switch_kafka(parts)
        for kind, wave in itertools.groupby(parts, key=lambda c: c.kind):
            _start(list(wave))
            _after(kind)
    except preflight.PreflightError as exc:
        console.print(f"[red]make up stopped:[/] {exc}", highlight=False)
        raise typer.Exit(2) from exc
    except (NotReadyError, RuntimeError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", None) or ""
        console.print(f"[red]make up failed:[/] {exc} {detail}".rstrip(), highlight=False)
        console.print("The components started so far are still running; `make down` stops them.")
        raise typer.Exit(1) from exc
    _settle(parts)
    if not _print_table(parts, title=f"Onceflow is up ({topology} topology)"):
        console.print("Some components do not work yet: `make status` shows them again.")
        raise typer.Exit(1)


def _settle(parts: list[Component]) -> None:
    """Wait until every component passes its health check (a program started last may still be
    in supervisor's STARTING); the table printed after says which do not, if any."""
    with contextlib.suppress(NotReadyError):
        wait_for(
            lambda: all(c.healthy for c in checks.check(parts).values()),
            what="every component",
            timeout=SETTLE_SECONDS,
        )


@app.command()
def provision() -> None:
    """Create roles and database, migrate, and create the replication slot (idempotent).

    The slot exists before any order is accepted, so no write can be missed by the connector.
    """
    _acting_on()
    _provision()
    console.print("provisioned: roles, database, migrations, replication slot")


@app.command("rotate-db-password")
def rotate_db_password(
    role: str = typer.Argument(help=f"the role: one of {', '.join(ROLES)}"),
) -> None:
    """Give a database role of the local stack a new generated password (its file in
    .stack/secrets/postgres/ and the database), then restart the programs that use it, one at
    a time (docs/security.md)."""
    _acting_on()
    settings = get_settings()
    file = settings.db_password_dir / role
    before = file.read_text() if file.is_file() else None
    try:
        db_secrets.rotate(settings, role)
    except ValueError as exc:
        console.print(f"[red]not rotated:[/] {exc}", highlight=False)
        raise typer.Exit(2) from exc
    try:
        postgres.ensure_roles_and_database(settings)
    except psycopg.Error as exc:
        # The database still has the old password: so must the file, or every program that
        # (re)starts would be refused.
        if before is not None:
            private_data.write_private(file, before)
        console.print(
            f"[red]not rotated:[/] the database did not take the new password ({exc}); "
            f"{file} keeps the old one",
            highlight=False,
        )
        raise typer.Exit(1) from exc
    parts = components(settings)
    supervisor.write_config(supervisor.render_config(parts, settings))
    _restart_one_at_a_time([c for c in parts if role in c.db_roles])
    console.print(f"rotated: {role} (in {settings.db_password_dir / role})", highlight=False)


def _restart_one_at_a_time(parts: list[Component]) -> None:
    """Restart each program after a rotation, waiting until it is ready before the next."""
    for component in parts:
        console.print(f"[bold]{component.name}[/]: restarting", highlight=False)
        try:
            supervisor.restart(component.name)
            wait_for(component.ready, what=component.name, timeout=component.start_timeout)
        except (NotReadyError, subprocess.CalledProcessError, OSError) as exc:
            console.print(
                f"[red]rotated, but {component.name} did not restart:[/] {exc} "
                "(`make status`; its log is in .stack/logs)",
                highlight=False,
            )
            raise typer.Exit(1) from exc


@app.command("rotate-kafka-password")
def rotate_kafka_password(
    principal: str = typer.Argument(
        help=f"the principal: one of {', '.join(kafka_security.ROTATABLE)}"
    ),
) -> None:
    """Give a Kafka principal of the local stack a new generated password (its file in
    .stack/secrets/kafka/ and its SCRAM credential), re-render the files that hold it, then
    restart the programs that connect as it, one at a time (docs/security.md)."""
    _acting_on()
    settings = get_settings()
    auth = get_kafka_auth_settings().model_copy(update={"kafka_principal": None})
    try:
        kafka_security.rotate(kafka_security.admin(settings.kafka_bootstrap, auth), auth, principal)
    except ValueError as exc:
        console.print(f"[red]not rotated:[/] {exc}", highlight=False)
        raise typer.Exit(2) from exc
    except KafkaException as exc:
        console.print(
            f"[red]not rotated:[/] Kafka did not take the new password ({exc}); "
            f"{auth.kafka_password_dir / principal} keeps the old one",
            highlight=False,
        )
        raise typer.Exit(1) from exc
    node_configs.write_all(settings.layout, auth)
    _restart_one_at_a_time([c for c in components(settings) if c.kafka_principal == principal])
    console.print(
        f"rotated: Kafka principal {principal} (in {auth.kafka_password_dir / principal})",
        highlight=False,
    )


def _say(text: str) -> None:
    console.print(f"  {text}", highlight=False)


def _switch_kafka(parts: list[Component]) -> None:
    """Nodes formatted before SASL switch to it (stack/kafka_migration.py); the passwords and
    the rendered properties are `make up`'s, already written."""
    settings, auth = get_settings(), get_kafka_auth_settings()
    kafka_migration.switch(settings, get_notification_settings(), auth, parts, _say)


@app.command("kafka-sasl")
def kafka_sasl() -> None:
    """Switch the running stack's Kafka, formatted before SASL, to SASL/SCRAM and ACLs: every
    node, then every program that uses Kafka, restarts (idempotent; `make up` does the same).
    docs/security.md."""
    _acting_on()
    settings, auth = get_settings(), get_kafka_auth_settings()
    if not auth.kafka_sasl:
        console.print("[red]not switched:[/] ONCEFLOW_KAFKA_SASL is false", highlight=False)
        raise typer.Exit(2)
    if not supervisor.is_running():
        console.print("[red]not switched:[/] the stack is not running (`make up`)")
        raise typer.Exit(2)
    for principal in kafka_security.ensure_passwords(auth):
        where = auth.kafka_password_dir / principal
        console.print(f"  password of Kafka principal {principal} written to {where}")
    node_configs.write_all(settings.layout, auth)
    try:
        switched = kafka_migration.switch(
            settings,
            get_notification_settings(),
            auth,
            components(settings),
            _say,
        )
    except (NotReadyError, RuntimeError, OSError) as exc:
        console.print(f"[red]not switched:[/] {exc}", highlight=False)
        raise typer.Exit(1) from exc
    # The credentials and ACL table as this checkout has them (a row added since is added).
    _kafka_principals()
    if not switched:
        console.print("Kafka already asked for SASL: principals and ACLs checked")
        return
    console.print("Kafka asks for SASL on every listener; every program authenticates")


def _kafka_principals() -> None:
    """With SASL on: every client principal's SCRAM credential and the ACL table (idempotent;
    the broker's own credential was written at format time)."""
    settings, auth = get_settings(), get_kafka_auth_settings()
    if not auth.kafka_sasl:
        return
    admin = kafka_security.admin(settings.kafka_bootstrap, auth)
    for principal in kafka_security.ensure_users(admin, auth):
        console.print(f"  created Kafka principal {principal}")
    kafka_security.ensure_acls(admin, kafka_security.grants(settings, get_notification_settings()))


def _topics() -> None:
    settings = get_settings()
    wanted = topics.pipeline_topics(settings, get_notification_settings(), get_retention_settings())
    topics.ensure_topics(settings.kafka_bootstrap, wanted)


@app.command("topics")
def create_topics() -> None:
    """Create Kafka's principals and ACL table, and the pipeline's topics with their partitions
    and retention (idempotent; compose's `topics` service)."""
    _acting_on()
    _kafka_principals()
    _topics()
    console.print("topics: outbox, notifications, dead letters, notified-ids changelog")


@app.command()
def down() -> None:
    """Stop every component of the running topology; its data in .stack/ is kept."""
    topology = _acting_on()
    supervisor.shutdown()
    where = get_settings().data.root.relative_to(paths.ROOT)
    console.print(
        f"Onceflow is down ({topology} topology; data kept in {where}; `make clean` deletes it)."
    )


@app.command()
def status() -> None:
    """Show each component's process state, uptime, restarts, whether it works, and address."""
    topology = _acting_on()
    parts = components(get_settings())
    if not _print_table(parts, title=f"Onceflow status ({topology} topology)"):
        raise typer.Exit(1)


def _acting_on() -> str:
    try:
        return running.act_on(starting=False).value
    except running.TopologyError as exc:
        console.print(f"[red]{exc}[/]", highlight=False)
        raise typer.Exit(2) from exc


def _print_table(parts: list[Component], *, title: str) -> bool:
    """Print the components' table; True when every one works."""
    table = Table(title=title)
    for column in ("component", "process", "uptime", "restarts", "healthy", "address", "log"):
        table.add_column(column)
    checked = checks.check(parts)
    for component in parts:
        process, problem = checked[component.name].process, checked[component.name].problem
        restarts = "?" if process.restarts is None else str(process.restarts)
        table.add_row(
            component.name,
            process.state,
            health.duration(process.uptime),
            restarts,
            "yes" if problem is None else "[red]no[/]",
            component.where,
            str((paths.LOGS / component.name).with_suffix(".log").relative_to(paths.ROOT)),
        )
    console.print(table)
    for name, checked_one in checked.items():
        if checked_one.problem is not None:
            console.print(
                f"{name} does not work: {checked_one.problem}", highlight=False, soft_wrap=True
            )
    return all(c.healthy for c in checked.values())


if __name__ == "__main__":
    sys.exit(app())
