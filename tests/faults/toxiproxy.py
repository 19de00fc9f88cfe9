"""A small client of Toxiproxy's HTTP API (127.0.0.1:8474), and its server when none runs.

The library's proxies are named with PREFIX so that a clean-up removes only them. The server
is `.stack/bin/toxiproxy-server` (`make up` builds it); started here when nothing answers on
the API's address, and stopped when this process ends.
"""

import atexit
import os
import subprocess
from typing import Any

import httpx

from onceflow import paths
from stack.waiting import wait_for

HOST, PORT = "127.0.0.1", 8474
URL = f"http://{HOST}:{PORT}"
PREFIX = "onceflow_faults_"
SERVER = paths.STATE / "bin" / "toxiproxy-server"
LOG = paths.LOGS / "toxiproxy.log"

_server: subprocess.Popen[bytes] | None = None
# One client for every call: a new one per call costs its TLS setup, even for plain HTTP.
_http = httpx.Client(base_url=URL, timeout=10)


class ToxiproxyError(RuntimeError):
    """Toxiproxy refused a request, or is not installed."""


def _call(method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    response = _http.request(method, path, json=body)
    if response.status_code >= 400:
        raise ToxiproxyError(f"{method} {path}: {response.status_code} {response.text.strip()}")
    return response.json() if response.content else None


def running() -> bool:
    try:
        return _http.get("/version", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def ensure_server() -> None:
    """Start Toxiproxy unless one already answers (a second caller reuses it)."""
    global _server
    if running():
        return
    if not SERVER.exists():
        raise ToxiproxyError(f"{SERVER} is missing: run `make up` once (it installs Toxiproxy)")
    LOG.parent.mkdir(parents=True, exist_ok=True)
    with LOG.open("ab") as log:
        _server = subprocess.Popen(
            [str(SERVER), "-host", HOST, "-port", str(PORT)],
            stdout=log,
            stderr=log,
            env={**os.environ, "LOG_LEVEL": "info"},  # its default, trace, logs every read
        )
    atexit.register(stop_server)
    wait_for(running, what=f"Toxiproxy on {URL} (log: {LOG})", timeout=15, interval=0.1)


def stop_server() -> None:
    """Stop the server this process started, if any."""
    global _server
    if _server is not None and _server.poll() is None:
        _server.terminate()
        _server.wait(10)
    _server = None


def create_proxy(name: str, listen: str, upstream: str) -> str:
    """A proxy from `listen` to `upstream`; returns the address it listens on (port 0 in
    `listen`: the one the kernel gave it)."""
    made = _call("POST", "/proxies", {"name": name, "listen": listen, "upstream": upstream})
    return str(made["listen"])


def delete_proxy(name: str) -> None:
    try:
        _call("DELETE", f"/proxies/{name}")
    except ToxiproxyError as exc:
        if ": 404 " not in str(exc):
            raise


def add_toxic(proxy: str, name: str, kind: str, attributes: dict[str, int]) -> None:
    """A toxic on the proxy's downstream (from the upstream server back to the client)."""
    body = {"name": name, "type": kind, "stream": "downstream", "attributes": attributes}
    _call("POST", f"/proxies/{proxy}/toxics", body)


def remove_toxic(proxy: str, name: str) -> None:
    try:
        _call("DELETE", f"/proxies/{proxy}/toxics/{name}")
    except ToxiproxyError as exc:
        if ": 404 " not in str(exc):
            raise


def ours() -> dict[str, list[str]]:
    """The library's proxies now, each with its toxics' names ({} when no server runs)."""
    if not running():
        return {}
    proxies: dict[str, dict[str, Any]] = _call("GET", "/proxies")
    return {
        name: [toxic["name"] for toxic in proxy.get("toxics", [])]
        for name, proxy in proxies.items()
        if name.startswith(PREFIX)
    }
