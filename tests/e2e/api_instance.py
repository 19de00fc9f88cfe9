"""An order API of the test's own (same code and entrypoint as the stack's `api` program) on
its own port, with its own database address: the stack's API and its settings stay as they are."""

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from onceflow import paths
from stack.waiting import wait_for


def _ready(url: str) -> bool:
    return httpx.get(f"{url}/readyz", timeout=5).status_code == 200


@contextmanager
def api_instance(port: int, **settings: str) -> Iterator[str]:
    """`python -m services.orders` on 127.0.0.1:`port`, one worker, with `settings` as
    ONCEFLOW_* variables (e.g. pg_host); yields its base URL. Logs to .stack/logs/api-<port>.log."""
    env = {**os.environ, "ONCEFLOW_API_PORT": str(port), "ONCEFLOW_API_WORKERS": "1"}
    env |= {f"ONCEFLOW_{name.upper()}": value for name, value in settings.items()}
    url = f"http://127.0.0.1:{port}"
    log = paths.LOGS / f"api-{port}.log"
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "services.orders"],
            cwd=paths.ROOT,
            env=env,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
    try:
        wait_for(lambda: _ready(url), what=f"an API on {url} (log: {log})", timeout=60)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(15)
