"""Health means working (issue 25), on real processes of the test's own: a supervisord with the
stack's event listener runs a small HTTP server (a component that answers) and a program that
keeps exiting until it is fixed. A SIGSTOPped server and the crash-looping program each show
unhealthy within 10 s, through the same functions `make status` and the overview use, and
healthy again after recovery (SIGCONT; the fix, once it has run for health.SETTLE)."""

import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xmlrpc.client
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from supervisor.xmlrpc import SupervisorTransport

from onceflow.paths import VENV_BIN
from onceflow.settings import get_settings
from stack import health
from stack.waiting import free_port, wait_for

UNHEALTHY_WITHIN = 10.0


@dataclass(frozen=True)
class Scratch:
    """The test's supervisord: its folder, XML-RPC proxy, exporter and programs' ports."""

    folder: Path
    proxy: Any
    exporter: str
    ports: dict[str, int]

    def problem(self, program: str) -> str | None:
        """Why `program` does not work now, as `make status` decides it."""
        (process,) = health.processes(self.proxy, self.exporter, [program]).values()
        url = f"http://127.0.0.1:{self.ports[program]}/"
        return health.verdict(process, functools.partial(health.answers, url))


def _config(folder: Path, ports: dict[str, int], exporter_port: int) -> str:
    serve = f"{sys.executable} -m http.server --bind 127.0.0.1 --directory {folder}"
    fixed = folder / "fixed"
    return (
        f"[unix_http_server]\nfile={folder / 'sock'}\n\n"
        "[rpcinterface:supervisor]\n"
        "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface\n\n"
        f"[supervisord]\nlogfile={folder / 'supervisord.log'}\npidfile={folder / 'pid'}\n"
        "nodaemon=true\n\n"
        f"[program:server]\ncommand={serve} {ports['server']}\nstartsecs=1\n"
        f"stdout_logfile={folder / 'server.log'}\nredirect_stderr=true\n\n"
        # Serves (its probe answers) but exits 4 s after each start (past startsecs:
        # supervisor restarts it for ever) until the file `fixed` exists; then it serves on.
        f"[program:flaky]\ncommand=/bin/sh -c 'test -f {fixed} && exec {serve} "
        f"{ports['flaky']}; timeout 4 {serve} {ports['flaky']}; exit 3'\n"
        "autorestart=true\nstartsecs=3\n"
        f"stdout_logfile={folder / 'flaky.log'}\nredirect_stderr=true\n\n"
        "[eventlistener:supervisor-exporter]\n"
        f"command={sys.executable} -m stack.supervisor_exporter {exporter_port} server,flaky\n"
        "events=PROCESS_STATE\npriority=1\nautorestart=true\n"
        f"stderr_logfile={folder / 'exporter.log'}\n"
    )


@pytest.fixture
def scratch() -> Iterator[Scratch]:
    # A short folder: a unix socket's path must fit in 108 bytes.
    folder = Path(tempfile.mkdtemp(prefix="onceflow-health-"))
    ports, exporter_port = {"server": free_port(), "flaky": free_port()}, free_port()
    conf = folder / "supervisord.conf"
    conf.write_text(_config(folder, ports, exporter_port))
    supervisord = subprocess.Popen(
        [str(VENV_BIN / "supervisord"), "-c", str(conf)], stdout=subprocess.DEVNULL
    )
    transport = SupervisorTransport(None, None, f"unix://{folder / 'sock'}")
    proxy = xmlrpc.client.ServerProxy("http://127.0.0.1", transport=transport)
    try:
        wait_for(lambda: (folder / "sock").exists(), what="the scratch supervisord", timeout=30)
        yield Scratch(folder, proxy, f"http://127.0.0.1:{exporter_port}/metrics", ports)
    finally:
        supervisord.terminate()
        supervisord.wait(60)
        shutil.rmtree(folder, ignore_errors=True)


def _within(check: Any, *, what: str, timeout: float) -> float:
    """Seconds until `check` holds (at most `timeout`)."""
    began = time.monotonic()
    wait_for(check, what=what, timeout=timeout)
    return time.monotonic() - began


def test_a_frozen_component_is_unhealthy_within_10_s_and_healthy_after_sigcont(
    scratch: Scratch,
) -> None:
    wait_for(lambda: scratch.problem("server") is None, what="the server healthy", timeout=30)
    pid = int(scratch.proxy.supervisor.getProcessInfo("server")["pid"])
    os.kill(pid, signal.SIGSTOP)
    try:
        took = _within(
            lambda: scratch.problem("server") is not None,
            what="the frozen server unhealthy",
            timeout=UNHEALTHY_WITHIN,
        )
        assert took < UNHEALTHY_WITHIN
        problem = scratch.problem("server")
        assert problem is not None
        assert "did not answer within" in problem
        (process,) = health.processes(scratch.proxy, scratch.exporter, ["server"]).values()
        assert process.state == "RUNNING"  # supervisor alone would call it fine
    finally:
        os.kill(pid, signal.SIGCONT)
    wait_for(
        lambda: scratch.problem("server") is None,
        what="the thawed server healthy",
        timeout=UNHEALTHY_WITHIN,
    )


def test_a_crash_looping_component_is_unhealthy_within_10_s_and_healthy_once_fixed(
    scratch: Scratch,
) -> None:
    took = _within(
        lambda: scratch.problem("flaky") is not None,
        what="the crash-looping program unhealthy",
        timeout=UNHEALTHY_WITHIN,
    )
    assert took < UNHEALTHY_WITHIN

    # Once supervisor restarted it, it stays unhealthy through its restarts, also while
    # supervisor says RUNNING and its probe answers (its first life, before it died, was fine).
    def restarts() -> int:
        (process,) = health.processes(scratch.proxy, scratch.exporter, ["flaky"]).values()
        return process.restarts or 0

    wait_for(lambda: restarts() >= 1, what="an automatic restart", timeout=30, interval=0.3)
    seen: list[tuple[int, str | None]] = []

    def restarted_twice() -> bool:
        seen.append((restarts(), scratch.problem("flaky")))
        return seen[-1][0] >= 3

    wait_for(restarted_twice, what="two more automatic restarts", timeout=45, interval=0.3)
    assert [look for look in seen if look[1] is None] == []
    (scratch.folder / "fixed").touch()
    wait_for(
        lambda: scratch.problem("flaky") is None,
        what="the fixed program healthy",
        timeout=10 + health.SETTLE + UNHEALTHY_WITHIN,
    )
    (process,) = health.processes(scratch.proxy, scratch.exporter, ["flaky"]).values()
    assert process.restarts is not None
    assert process.restarts >= 3
    assert process.uptime is not None
    assert process.uptime >= health.SETTLE


def test_the_live_slot_is_kept() -> None:
    settings = get_settings()
    # slot_kept says nothing of a missing slot either: the slot must be there for this to count.
    with psycopg.connect(settings.dsn("analyst")) as conn:
        row = conn.execute(
            "SELECT wal_status FROM pg_replication_slots WHERE slot_name = %s",
            (settings.replication_slot,),
        ).fetchone()
    assert row is not None, f"no replication slot {settings.replication_slot}"
    assert health.slot_kept(settings.dsn("analyst"), settings.replication_slot) is None
