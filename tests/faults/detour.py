"""A program's connections to another program's ports, sent through Toxiproxy without either
knowing: the cluster's nodes all talk on 127.0.0.1 with addresses from their configs, so a delay
cannot be a link they are pointed at. An nftables nat rule redirects each new connection that
the client's group opens to one of the server's loopback ports to a proxy of its own
(Toxiproxy's own connections, as root, pass untouched), and the client's connections opened
before are reset, so that its clients reconnect through the proxy. The reset reaches the client
only: the server's end of such a connection closes at its own idle or keepalive timeout."""

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from tests.faults import nft, toxiproxy
from tests.faults.nodes import LOOPBACK, Program

HOST = "127.0.0.1"


@dataclass(frozen=True)
class Detour:
    """The proxies standing for the server's ports (by port): their names, where they listen."""

    client: Program
    names: dict[int, str]
    listening: dict[int, int]

    def rules(self, verdict: str) -> list[str]:
        """Rules giving `verdict` to the detoured traffic, both ways: what the client sends to
        the proxies, and what they answer it (Toxiproxy, from the proxies' own ports)."""
        ports = f"{{ {', '.join(map(str, self.listening.values()))} }}"
        return [
            f"{self.client.sends} ip daddr {HOST} tcp dport {ports} {verdict}",
            f"ip saddr {HOST} tcp sport {ports} {verdict}",
        ]


def _proxy_name(client: Program, port: int) -> str:
    return f"{toxiproxy.PREFIX}{client.owner}{client.id}_to_{port}"


@contextmanager
def detour(client: Program, server: Program) -> Iterator[Detour]:
    """While the block runs, the client reaches each of the server's ports through a proxy.
    Ending it removes the rules and proxies (the proxied connections close; the client
    reconnects directly)."""
    if not server.ports:
        raise ValueError(f"{server} listens on no port: name the server by its ports")
    if client.id == 0:  # Toxiproxy's own connections: the detour would loop
        raise ValueError(f"a detour is for a program's group or user, not {client.owner} 0")
    toxiproxy.ensure_server()
    with ExitStack() as stack:
        names, listening = {}, {}
        for port in server.ports:
            names[port] = _proxy_name(client, port)
            listen = toxiproxy.create_proxy(names[port], f"{HOST}:0", f"{HOST}:{port}")
            stack.callback(toxiproxy.delete_proxy, names[port])
            listening[port] = int(listen.rpartition(":")[2])
        to_server = f"{client.sends} ip daddr {LOOPBACK} tcp dport"
        redirects = [f"{to_server} {port} redirect to :{q}" for port, q in listening.items()]
        chain = nft.add_chain("detour", redirects, hook="nat")
        stack.callback(nft.delete_chain, chain)
        # Past the nat hook a redirected packet's port is the proxy's: only connections opened
        # before the detour still go to the server's ports, and are reset.
        ports = ", ".join(map(str, server.ports))
        chain = nft.add_chain("detour_reset", [f"{to_server} {{ {ports} }} reject with tcp reset"])
        stack.callback(nft.delete_chain, chain)
        yield Detour(client, names, listening)
