"""Peers on loopback addresses of their own, for the fault library's tests: a TCP echo server,
connections made from a chosen source address, and UDP datagrams counted at the receiver."""

import contextlib
import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(4096):
            self.request.sendall(data)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


@contextmanager
def echo_server(host: str) -> Iterator[int]:
    """A TCP echo server on host (any free port) while the block runs; yields its port."""
    server = _Server((host, 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def connect(source: str, host: str, port: int, timeout: float = 0.5) -> socket.socket:
    """A TCP connection from `source` to host:port (OSError when it cannot be made in time)."""
    sock = socket.socket()
    sock.settimeout(timeout)
    try:
        sock.bind((source, 0))
        sock.connect((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def reaches(source: str, host: str, port: int) -> bool:
    """True when a connection from `source` is made and echoes a byte back (within 5 s: a
    loaded machine is slow, but a working path answers long before)."""
    return _answers(source, host, port, timeout=5)


def blocked(source: str, host: str, port: int) -> bool:
    """True when no connection from `source` echoes within 0.3 s (a loopback peer that works
    answers within milliseconds; the test proved it can before the fault)."""
    return not _answers(source, host, port, timeout=0.3)


def _answers(source: str, host: str, port: int, timeout: float) -> bool:
    try:
        with connect(source, host, port, timeout) as sock:
            return echoes(sock)
    except OSError:
        return False


def echoes(sock: socket.socket) -> bool:
    """True when a byte sent on the connection comes back before its timeout."""
    try:
        sock.sendall(b"x")
        return sock.recv(1) == b"x"
    except OSError:
        return False


def round_trip_s(sock: socket.socket) -> float:
    """Seconds for one byte to go to the echo server and back."""
    start = time.perf_counter()
    sock.sendall(b"x")
    assert sock.recv(1) == b"x"
    return time.perf_counter() - start


def datagrams_through(source: str, host: str, count: int, batch: int = 500) -> int:
    """How many of `count` UDP datagrams from `source` reach a receiver on `host` (sent in
    batches the receiver's buffer holds whole, each drained before the next)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx:
        rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        rx.bind((host, 0))
        rx.settimeout(0.05)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
            tx.bind((source, 0))
            received = 0
            for start in range(0, count, batch):
                for n in range(start, min(start + batch, count)):
                    # A drop on the output hook refuses the send itself (EPERM): lost too.
                    with contextlib.suppress(PermissionError):
                        tx.sendto(n.to_bytes(4, "big"), rx.getsockname())
                received += _drain(rx)
            return received


def _drain(rx: socket.socket) -> int:
    got = 0
    while True:
        try:
            rx.recv(16)
        except TimeoutError:
            return got
        got += 1


def free_port(host: str) -> int:
    """A port nothing listens on at `host` now (the kernel's pick for a bind to port 0)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])
