"""Readiness waits with deadlines: every wait in the stack ends in success or a clear failure."""

import socket
import time
from collections.abc import Callable

import httpx
import psycopg
from confluent_kafka import KafkaException


class NotReadyError(RuntimeError):
    """A component did not become ready before its deadline."""


class NotYetError(Exception):
    """Raised by a probe to say "not yet", with the reason shown if the deadline passes."""


# What a probe may raise while a component is still starting or restarting: it cannot be
# reached yet. Anything else, an AssertionError above all, is a real answer and ends the wait.
UNREACHABLE: tuple[type[Exception], ...] = (
    NotYetError,
    OSError,  # connection refused or reset, and the socket's timeouts
    httpx.TransportError,
    psycopg.OperationalError,
    KafkaException,
)


def wait_for(
    check: Callable[[], bool], *, what: str, timeout: float, interval: float = 0.5
) -> None:
    """Poll `check` until it returns True, or raise NotReadyError after `timeout` seconds.

    False and the UNREACHABLE exceptions mean "not yet"; any other exception from `check`
    propagates at once, with its message (a failed assertion, a bug in the probe).
    """
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except UNREACHABLE as exc:
            last_error = exc
        time.sleep(interval)
    detail = f" (last error: {last_error})" if last_error else ""
    raise NotReadyError(f"{what} was not ready after {timeout:.0f}s{detail}")


def port_open(host: str, port: int) -> bool:
    """Return True when something accepts TCP connections on host:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def free_port() -> int:
    """A loopback port nothing listens on now (the kernel's pick, just released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
