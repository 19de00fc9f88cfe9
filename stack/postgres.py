"""The stack's own PostgreSQL cluster: created once, run by supervisor as the `postgres` user."""

import getpass
import os
import shutil
import stat
import subprocess
from pathlib import Path

import psycopg
from psycopg import sql

from onceflow import paths
from onceflow.schema.roles import GROUPS
from onceflow.settings import Settings
from onceflow.settings.connections import ROLES

# Built-in roles a login role joins besides its project group: the exporter's role reads
# statistics and settings through pg_monitor, and no table's rows (no grant in grants.sql).
BUILTIN_GROUPS = {"monitor": "pg_monitor"}


def os_user() -> str:
    """The OS user that owns and runs the cluster (PostgreSQL refuses to run as root)."""
    return "postgres" if os.geteuid() == 0 else getpass.getuser()


def _as_pg_user(args: list[str]) -> list[str]:
    return ["runuser", "-u", os_user(), "--", *args] if os.geteuid() == 0 else args


def server_command(settings: Settings) -> str:
    """The postgres command line supervisor runs; settings live here, not in the data dir."""
    options = {
        "listen_addresses": settings.pg_host,
        "port": str(settings.pg_port),
        "unix_socket_directories": str(paths.PG_SOCKET_DIR),
        "wal_level": "logical",
        "max_slot_wal_keep_size": settings.pg_max_slot_wal_keep_size,
        "max_wal_senders": "10",
        "max_replication_slots": "10",
        "max_connections": "200",
        "shared_buffers": "512MB",
        "password_encryption": "scram-sha-256",
    }
    flags = " ".join(f"-c {key}={value}" for key, value in options.items())
    return f"{paths.PG_BIN / 'postgres'} -D {settings.data.postgres} {flags}"


def can_traverse(user: str, folder: Path) -> bool:
    """True when `user` may pass through `folder` (permissions, groups and ACLs as the kernel
    sees them)."""
    return subprocess.run(["runuser", "-u", user, "--", "test", "-x", str(folder)]).returncode == 0


def grant_traverse(user: str, folder: Path) -> list[Path]:
    """Let `user` reach `folder`: add search permission for others (o+x: pass through, not
    list) to each ancestor it cannot pass; return those. A checkout in a private directory
    (e.g. `mktemp -d`, mode 0700) would otherwise hide the cluster from the postgres user."""
    granted = []
    for ancestor in [*reversed(folder.parents), folder]:
        if not can_traverse(user, ancestor):
            ancestor.chmod(ancestor.stat().st_mode | stat.S_IXOTH)
            granted.append(ancestor)
    return granted


def init_cluster(settings: Settings) -> bool:
    """Run initdb once in the topology's data folder; return True when a new cluster was
    created."""
    pg_data = settings.data.postgres
    if (pg_data / "PG_VERSION").exists():
        return False
    user = os_user()
    for folder in (pg_data, paths.PG_SOCKET_DIR):
        folder.mkdir(parents=True, exist_ok=True)
        shutil.chown(folder, user=user)
        if os.geteuid() == 0:
            for granted in grant_traverse(user, folder.parent):
                print(f"make up: let {user} pass through {granted} (o+x) to reach its cluster")
    pg_data.chmod(0o700)
    subprocess.run(
        _as_pg_user(
            [
                str(paths.PG_BIN / "initdb"),
                "-D",
                str(pg_data),
                "--auth-local=peer",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                f"--username={user}",
            ]
        ),
        check=True,
        capture_output=True,
    )
    _allow_local_superuser(user, pg_data)
    return True


def _allow_local_superuser(user: str, pg_data: Path) -> None:
    """Socket: peer auth, mapping the OS user who runs the stack to the superuser.
    TCP (loopback only): password (SCRAM) for every role, replication included."""
    (pg_data / "pg_hba.conf").write_text(
        "local all         all                peer map=stack\n"
        "host  all         all  127.0.0.1/32  scram-sha-256\n"
        "host  replication all  127.0.0.1/32  scram-sha-256\n"
    )
    runner = getpass.getuser()
    (pg_data / "pg_ident.conf").write_text(f"stack {runner} {user}\nstack {user} {user}\n")


def superuser_conninfo(settings: Settings, dbname: str = "postgres") -> str:
    """ONCEFLOW_SUPERUSER_DSN if set, else peer authentication on the local cluster's socket."""
    if settings.superuser_dsn is not None:
        return psycopg.conninfo.make_conninfo(
            settings.superuser_dsn.get_secret_value(), dbname=dbname
        )
    return f"host={paths.PG_SOCKET_DIR} port={settings.pg_port} dbname={dbname} user={os_user()}"


def _superuser(
    settings: Settings, dbname: str = "postgres"
) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(superuser_conninfo(settings, dbname), autocommit=True)


def ensure_roles_and_database(settings: Settings) -> None:
    """Create the group roles, the login roles (each in its group) and the database (idempotent);
    passwords follow the settings."""
    with _superuser(settings) as conn:
        for group in GROUPS.values():
            if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (group,)).fetchone():
                conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(group)))
        for role in ROLES:
            name, password = settings.credentials(role)
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
            verb = "ALTER" if exists else "CREATE"
            conn.execute(
                sql.SQL("{} ROLE {} LOGIN PASSWORD {}").format(
                    sql.SQL(verb), sql.Identifier(name), sql.Literal(password)
                )
            )
            group = GROUPS.get(role, BUILTIN_GROUPS.get(role, ""))
            if group:
                conn.execute(
                    sql.SQL("GRANT {} TO {}").format(sql.Identifier(group), sql.Identifier(name))
                )
        conn.execute(
            sql.SQL("ALTER ROLE {} REPLICATION").format(sql.Identifier(settings.cdc_db_user))
        )
        if not conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (settings.pg_database,)
        ).fetchone():
            conn.execute(
                sql.SQL("CREATE DATABASE {} OWNER {}").format(
                    sql.Identifier(settings.pg_database), sql.Identifier(settings.owner_db_user)
                )
            )
        conn.execute(
            sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(
                sql.Identifier(settings.pg_database)
            )
        )
        # Analysts query the reporting tables unqualified (SELECT * FROM daily_sales). A role
        # setting is not inherited from a group, and the schema owner may not alter roles, so it
        # is set here, on the login role, in this database (docs/analytics.md).
        conn.execute(
            sql.SQL("ALTER ROLE {} IN DATABASE {} SET search_path = analytics").format(
                sql.Identifier(settings.analyst_db_user), sql.Identifier(settings.pg_database)
            )
        )
        users = [sql.Identifier(getattr(settings, f"{role}_db_user")) for role in ROLES]
        conn.execute(
            sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                sql.Identifier(settings.pg_database), sql.SQL(", ").join(users)
            )
        )


def ensure_replication_slot(settings: Settings) -> bool:
    """Create the outbox's logical slot before any write can happen; True when newly created."""
    with _superuser(settings, settings.pg_database) as conn:
        if conn.execute(
            "SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", (settings.replication_slot,)
        ).fetchone():
            return False
        conn.execute(
            "SELECT pg_create_logical_replication_slot(%s, 'pgoutput')",
            (settings.replication_slot,),
        )
        return True


def accepts_connections(settings: Settings) -> bool:
    """True when the server answers a superuser query on its socket."""
    with _superuser(settings) as conn:
        return conn.execute("SELECT 1").fetchone() is not None
