"""Secrets per process on the running stack (contract section 2b): each supervised program's
processes hold in their environment no secret but their own (read from /proc/PID/environ of the
program and of every process it started), every file that holds a secret is its owner's only,
and a Kafka node's or Connect worker's rendered properties hold only its own principal's
password."""

import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from onceflow import paths
from onceflow.settings import get_settings
from onceflow.settings.connections import ROLES
from onceflow.settings.kafka_auth import PRINCIPALS
from stack import kafka_security, node_configs, spark_secret, supervisor
from stack.components import components
from stack.waiting import wait_for
from tests.integration.stack.stack_secrets import KAFKA, SPARK_SECRET, secrets

pytestmark = pytest.mark.integration


def children() -> dict[int, list[int]]:
    """Each process's children, from /proc."""
    tree: dict[int, list[int]] = {}
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            # pid (comm) state ppid ...: comm may hold spaces and parentheses.
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        tree.setdefault(int(fields[1]), []).append(int(stat_file.parent.name))
    return tree


def process_tree(pid: int, tree: dict[int, list[int]]) -> Iterator[int]:
    yield pid
    for child in tree.get(pid, []):
        yield from process_tree(child, tree)


def environment(pid: int) -> list[str]:
    """The values of a process's environment (empty when it is gone)."""
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return []
    return [entry.partition(b"=")[2].decode(errors="replace") for entry in raw.split(b"\0")]


def running_programs() -> list[dict[str, Any]]:
    """supervisord's programs (and event listener) that have a process now."""
    infos: list[dict[str, Any]] = supervisor.proxy().supervisor.getAllProcessInfo()
    return [info for info in infos if info["pid"]]


def test_each_program_holds_only_its_own_secrets() -> None:
    known = secrets()
    parts = {c.name: c for c in components(get_settings())}
    tree = children()
    wanted = {*parts, supervisor.EXPORTER}
    # Every program running (one restarted by an earlier test may still be starting).
    wait_for(
        lambda: wanted <= {i["name"] for i in running_programs()},
        what="every program running",
        timeout=120,
    )
    running = running_programs()
    held: dict[str, set[str]] = {}
    for info in running:
        values = [v for pid in process_tree(info["pid"], tree) for v in environment(pid)]
        held[info["name"]] = {
            name for name, secret in known.items() if any(secret in value for value in values)
        }
    allowed = {
        name: ({f"db:{role}" for role in c.db_roles} if c.passwords_in_env else set())
        | ({SPARK_SECRET} if c.spark_secret else set())
        for name, c in parts.items()
    }
    not_its_own = {
        name: sorted(secrets_held - allowed.get(name, set()))
        for name, secrets_held in held.items()
        if secrets_held - allowed.get(name, set())
    }
    assert not_its_own == {}
    # Not vacuous: each program that takes its password from its environment is seen holding it.
    from_env = [name for name, c in parts.items() if c.passwords_in_env]
    assert from_env
    assert all(held[name] == allowed[name] for name in from_env)


def command_line(pid: int) -> str:
    """A process's command line (empty when it is gone)."""
    try:
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return ""


def test_no_programs_command_line_holds_a_secret() -> None:
    """Unlike its environment, a process's command line is readable by every user of the host
    (`ps`): no program, nor any process it started, is given a secret in its arguments."""
    known = secrets()
    tree = children()
    running = running_programs()
    assert running
    held = {
        info["name"]: sorted(
            name
            for pid in process_tree(info["pid"], tree)
            for name, secret in known.items()
            if secret in command_line(pid)
        )
        for info in running
    }
    assert {name: found for name, found in held.items() if found} == {}


def test_no_program_but_the_job_gets_the_jobs_password() -> None:
    """The dashboard (and onceflow-ops) read the job's ledger as `observer`, the reconciler as
    `reconcile` (migration 0020), maintenance prunes the job's bookkeeping as `maintenance`
    (0021): only the job is given the job's password (read from its file; no program's
    environment holds it: the test above)."""
    parts = {c.name: c for c in components(get_settings())}
    assert "observer" in parts["dashboard"].db_roles
    assert {"reconcile", "maintenance"} <= set(parts["maintenance"].db_roles)
    assert {name for name, c in parts.items() if "spark" in c.db_roles} == {"aggregation"}


def test_secret_files_are_their_owners_only() -> None:
    files = [p for p in paths.SECRETS.rglob("*") if p.is_file()]
    assert {paths.API_KEY, paths.OPS_PASSWORD, paths.SPARK_AUTH_SECRET} <= set(files)
    assert spark_secret.DAEMON_PROPERTIES in files
    assert {get_settings().db_password_dir / role for role in ROLES} <= set(files)
    kafka = {KAFKA.kafka_password_dir / principal for principal in PRINCIPALS}
    assert kafka | {kafka_security.OPS_CLIENT_PROPERTIES} <= set(files)
    for file in files:
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file
    for folder in [paths.SECRETS, *(p for p in paths.SECRETS.rglob("*") if p.is_dir())]:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    # supervisord's config holds the passwords of the programs that take them from their
    # environment; the folder also holds the node configs.
    assert stat.S_IMODE(paths.CONF.stat().st_mode) == 0o700
    assert stat.S_IMODE(paths.SUPERVISOR_CONF.stat().st_mode) == 0o600


def test_each_kafka_config_holds_only_its_own_principals_password() -> None:
    layout = get_settings().layout
    own = {node.program: "broker" for node in layout.kafka}
    own |= {worker.program: "connect" for worker in layout.connect}
    known = {principal: KAFKA.password(principal) for principal in PRINCIPALS}
    configs = {node_configs.config_path(program): principal for program, principal in own.items()}
    # The Kafka tools' --command-config: ops's (even when a test process rendered it).
    configs[kafka_security.OPS_CLIENT_PROPERTIES] = "ops"
    for config, principal in configs.items():
        assert stat.S_IMODE(config.stat().st_mode) == 0o600, config
        text = config.read_text()
        held = {name for name, password in known.items() if password in text}
        assert held == {principal}, (config, sorted(held))


def _open_to_others(path: Path, root: Path) -> bool:
    """Whether another user can read `path`: it lets them, and so does every folder from `root`
    down to it (Spark makes the jars it fetches world-readable, inside its 0700 app folder)."""
    if not path.stat().st_mode & 0o044:
        return False
    return all(
        folder.stat().st_mode & 0o011 for folder in path.parents if folder.is_relative_to(root)
    )


def test_stored_data_and_program_logs_are_their_owners_only() -> None:
    settings = get_settings()
    root = settings.data.root
    logs = [paths.LOGS / f"{c.name}.log" for c in components(settings)]
    files = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
    # Not vacuous: Kafka's segments and every running program's log are among them.
    assert any(p.suffix == ".log" and "outbox.event.order" in str(p.parent) for p in files)
    open_to_others = [str(p) for p in files if _open_to_others(p, root)]
    open_to_others += [str(log) for log in logs if log.exists() and log.stat().st_mode & 0o077]
    assert sorted(open_to_others) == []
