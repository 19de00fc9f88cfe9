"""A program's connections to another program's ports, sent through Toxiproxy without either
knowing: the cluster's nodes all talk on 127.0.0.1 with addresses from their configs, so a delay
cannot be a link they are pointed at. An nftables nat rule redirects each new connection that
the client's group opens to one of the server's ports to a proxy of its own (Toxiproxy's own
connections, as root, pass untouched), and the client's connections opened before are reset
(a TCP reset, as a changed path gives), so that its clients reconnect through the proxy."""

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from tests.faults import nft, toxiproxy
from tests.faults.nodes import LOOPBACK, Program

HOST = "127.0.0.1"


@dataclass(frozen=True)
class Proxy:
    """The proxy standing for one of the server's ports."""

    name: str
    port: int  # where it listens, on HOST


def _proxy_name(client: Program, port: int) -> str:
    return f"{toxiproxy.PREFIX}{client.owner}{client.id}_to_{port}"


@contextmanager
def detour(client: Program, server: Program) -> Iterator[dict[int, Proxy]]:
    """While the block runs, the client reaches each of the server's ports through a proxy;
    yields the proxies by the server's port. Ending it removes the rules and proxies
    (the proxied connections close; the client reconnects directly)."""
    if not server.ports:
        raise ValueError(f"{server} listens on no port: name the server by its ports")
    if client.id == 0:  # Toxiproxy's own connections: the detour would loop
        raise ValueError(f"a detour is for a program's group or user, not {client.owner} 0")
    toxiproxy.ensure_server()
    with ExitStack() as stack:
        proxies: dict[int, Proxy] = {}
        for port in server.ports:
            name = _proxy_name(client, port)
            listen = toxiproxy.create_proxy(name, f"{HOST}:0", f"{HOST}:{port}")
            stack.callback(toxiproxy.delete_proxy, name)
            proxies[port] = Proxy(name, int(listen.rpartition(":")[2]))
        redirects = [
            f"{client.sends} tcp dport {port} redirect to :{proxy.port}"
            for port, proxy in proxies.items()
        ]
        chain = nft.add_chain("detour", redirects, hook="nat")
        stack.callback(nft.delete_chain, chain)
        # Past the nat hook a redirected packet's port is the proxy's: only connections opened
        # before the detour still go to the server's ports, and are reset.
        ports = ", ".join(map(str, server.ports))
        reset = f"{client.sends} ip daddr {LOOPBACK} tcp dport {{ {ports} }} reject with tcp reset"
        chain = nft.add_chain("detour_reset", [reset])
        stack.callback(nft.delete_chain, chain)
        yield proxies
