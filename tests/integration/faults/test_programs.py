"""Faults between programs that share 127.0.0.1 (the cluster's nodes): each told by the group of
its sockets (nftables `meta skgid`) and the ports it listens on. A client under one group loses
a server under another in a partition, both ways, while a third group still reaches it; an
isolated program reaches nobody and nobody reaches it; a delay between two programs detours the
client's connections through Toxiproxy, resetting those it had open."""

import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from tests import faults
from tests.faults import Program, nft, toxiproxy
from tests.integration.faults.peers import echo_server, free_port

pytestmark = pytest.mark.usefixtures("network_faults")

SERVER, CLIENT, OTHER = 2691, 2692, 2693

_ECHO = """
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16); print("up", flush=True)
while True:
    c, _ = s.accept(); c.settimeout(5); c.sendall(c.recv(1)); c.close()
"""
_ASK = """
import socket, sys
try:
    with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=float(sys.argv[2])) as c:
        c.sendall(b"x"); print(c.recv(1) == b"x")
except OSError:
    print(False)
"""

# Holds one connection to the port given; on each line read: "new" reconnects, anything else
# prints the best of 3 one-byte round trips (s), or the error's name.
_CLIENT = """
import socket, sys, time
def connect(): return socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)
def round_trip(c):
    start = time.monotonic(); c.sendall(b"x"); assert c.recv(1) == b"x"
    return time.monotonic() - start
c = connect(); print("up", flush=True)
for line in sys.stdin:
    try:
        if line.strip() == "new":
            c.close(); c = connect(); print("new", flush=True)
        else:
            print(f"{min(round_trip(c) for _ in range(3)):.3f}", flush=True)
    except (OSError, AssertionError) as exc:
        print(type(exc).__name__, flush=True)
"""


def _as_group(group: int, code: str, *args: str) -> list[str]:
    return [
        "setpriv",
        f"--regid={group}",
        "--clear-groups",
        "--",
        sys.executable,
        "-c",
        code,
        *args,
    ]


@contextmanager
def _server(group: int) -> Iterator[int]:
    port = free_port("127.0.0.1")
    server = subprocess.Popen(_as_group(group, _ECHO, str(port)), stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        assert server.stdout.readline().strip() == "up"
        yield port
    finally:
        server.kill()
        server.wait(10)


def _reaches(group: int, port: int, timeout: float = 5) -> bool:
    done = subprocess.run(
        _as_group(group, _ASK, str(port), str(timeout)),
        capture_output=True,
        text=True,
        timeout=timeout + 10,
        check=True,
    )
    return done.stdout.strip() == "True"


def test_a_partition_between_programs_cuts_only_them() -> None:
    with _server(SERVER) as port:
        nodes = {"server": Program.of_group(SERVER, (port,)), "client": Program.of_group(CLIENT)}
        with faults.named(nodes):
            assert _reaches(CLIENT, port)
            with faults.partition("client", "server"):
                assert not _reaches(CLIENT, port, timeout=0.5), "the client passed the partition"
                assert _reaches(OTHER, port), "a third program lost the server too"
            assert not nft.exists()
            assert _reaches(CLIENT, port)


def test_an_isolated_program_is_reached_by_none_and_reaches_none() -> None:
    with _server(SERVER) as port, _server(OTHER) as other_port:
        server = Program.of_group(SERVER, (port,))
        with faults.named({"server": server}), faults.isolate("server"):
            assert not _reaches(CLIENT, port, timeout=0.5), "a client reached the isolated"
            assert not _reaches(SERVER, other_port, timeout=0.5), "the isolated reached out"
            assert _reaches(SERVER, port), "its traffic to itself was cut"
            assert _reaches(CLIENT, other_port), "the others lost each other"
        assert not nft.exists()
        assert _reaches(CLIENT, port)


def test_programs_without_ports_cannot_be_cut_from_each_other() -> None:
    nodes = {"a": Program.of_group(CLIENT), "b": Program.of_group(OTHER)}
    with (
        faults.named(nodes),
        pytest.raises(ValueError, match="listens on a port"),
        faults.partition("a", "b"),
    ):
        pass


@contextmanager
def _client(group: int, port: int) -> Iterator[Callable[[str], str]]:
    """A _CLIENT under `group` holding a connection to `port`; yields its `ask(line)`."""
    client = subprocess.Popen(
        _as_group(group, _CLIENT, str(port)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert client.stdin is not None
    assert client.stdout is not None
    stdin, stdout = client.stdin, client.stdout

    def ask(line: str) -> str:
        stdin.write(line + "\n")
        stdin.flush()
        return stdout.readline().strip()

    try:
        assert stdout.readline().strip() == "up"
        yield ask
    finally:
        client.kill()
        client.wait(10)


def test_a_delay_between_programs_detours_their_connections_through_toxiproxy() -> None:
    nodes = {"client": Program.of_group(CLIENT), "other": Program.of_group(OTHER)}
    with (
        echo_server("127.0.0.1") as port,
        _client(CLIENT, port) as ask,
        _client(OTHER, port) as other,
    ):
        nodes["server"] = Program.of_group(SERVER, (port,))
        assert float(ask("rtt")) < 0.1
        with faults.named(nodes), faults.delay("client", "server", 200, jitter=20):
            assert ask("rtt") == "ConnectionResetError", "the open connection was not reset"
            assert ask("new") == "new"
            assert float(ask("rtt")) >= 0.18, "the new connection was not delayed"
            assert other("new") == "new"
            assert float(other("rtt")) < 0.1, "another group was delayed too"
            with faults.partition("client", "server"):
                assert ask("rtt") == "TimeoutError", "the detoured connection passed a cut"
            assert ask("new") == "new"
        assert not nft.exists()
        assert toxiproxy.ours() == {}
        # The proxy's end closed the detoured connection (read as b"": AssertionError).
        assert ask("rtt") in ("ConnectionResetError", "AssertionError")
        assert ask("new") == "new"
        assert float(ask("rtt")) < 0.1, "still delayed after the block"


def test_a_delay_opened_inside_a_loss_between_the_same_programs_is_refused() -> None:
    nodes = {"client": Program.of_group(CLIENT), "server": Program.of_group(SERVER, (40000,))}
    with (
        faults.named(nodes),
        faults.loss("client", "server", 30),
        pytest.raises(ValueError, match="open the delay first"),
        faults.delay("client", "server", 100),
    ):
        pass
    assert not nft.exists()
