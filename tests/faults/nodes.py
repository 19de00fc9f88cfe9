"""Nodes of a rehearsal: loopback addresses (127.0.0.0/8 is all this machine's), programs of
this machine (their packets' group or user, the loopback ports they listen on), or names given
to either. Anything else is refused: the fault library never touches another host."""

import ipaddress
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

LOOPBACK = ipaddress.ip_network("127.0.0.0/8")


@dataclass(frozen=True)
class Program:
    """A program of this machine that has no address of its own (the cluster's nodes all send
    from 127.0.0.1): what it sends is told by the group or user of its sockets (nftables
    `meta skgid` / `meta skuid`; the cluster starts each node under a group of its own,
    onceflow/topology.py), what it receives by the loopback ports it listens on."""

    owner: str  # "skgid" or "skuid"
    id: int
    ports: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.owner not in ("skgid", "skuid") or self.id < 0:
            raise ValueError(
                f"a program is told by skgid or skuid >= 0, not {self.owner} {self.id}"
            )
        if not all(0 < port < 65536 for port in self.ports):
            raise ValueError(f"ports must be in 1..65535, not {self.ports}")

    @classmethod
    def of_group(cls, group: int, ports: tuple[int, ...] = ()) -> "Program":
        return cls("skgid", group, ports)

    @classmethod
    def of_user(cls, user: int, ports: tuple[int, ...] = ()) -> "Program":
        return cls("skuid", user, ports)

    @property
    def sends(self) -> str:
        return f"meta {self.owner} {self.id}"

    @property
    def receives(self) -> str | None:
        if not self.ports:
            return None
        return f"ip daddr {LOOPBACK} tcp dport {{ {', '.join(map(str, self.ports))} }}"


Node = ipaddress.IPv4Address | Program

_names: dict[str, Node] = {}


class NotLocalError(ValueError):
    """A node that is not one of this machine's loopback addresses (nor a name for one)."""


def resolve(node: str) -> Node:
    """What `node` stands for: a loopback address, or a program given a name with `named`."""
    if node in _names:
        return _names[node]
    return address(node)


def address(node: str) -> ipaddress.IPv4Address:
    """The loopback address of `node` (an address, or a name given with `named`)."""
    if node in _names:
        named_node = _names[node]
        if isinstance(named_node, Program):
            raise ValueError(
                f"{node} is a program without an address of its own: name an address, or"
                " delay between two programs (a detour)"
            )
        return named_node
    try:
        parsed = ipaddress.ip_address(node)
    except ValueError:
        known = ", ".join(sorted(_names)) or "none"
        raise NotLocalError(
            f"{node!r} is neither a loopback address (127.0.0.0/8) nor a named node"
            f" (named now: {known})"
        ) from None
    if not isinstance(parsed, ipaddress.IPv4Address) or parsed not in LOOPBACK:
        raise NotLocalError(
            f"{node} is not a loopback address: network faults are rehearsed only between"
            f" this machine's own addresses, {LOOPBACK}"
        )
    return parsed


def endpoint(host_port: str) -> tuple[ipaddress.IPv4Address, int]:
    """A `host:port` on this machine (host: a loopback address or a named node)."""
    host, sep, port = host_port.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{host_port!r} is not host:port")
    return address(host), int(port)


def pair(a: str, b: str) -> tuple[ipaddress.IPv4Address, ipaddress.IPv4Address]:
    """Two distinct nodes' addresses (a fault between a node and itself means nothing)."""
    first, second = address(a), address(b)
    if first == second:
        raise ValueError(f"{a} and {b} are the same address, {first}: name two different nodes")
    return first, second


def resolved_pair(a: str, b: str) -> tuple[Node, Node]:
    """Two distinct nodes, addresses or programs."""
    first, second = resolve(a), resolve(b)
    if first == second:
        kind = "program" if isinstance(first, Program) else "address"
        raise ValueError(f"{a} and {b} are the same {kind}, {first}: name two different nodes")
    return first, second


@contextmanager
def named(nodes: Mapping[str, str | Program]) -> Iterator[None]:
    """Give names to loopback addresses or programs while the block runs
    (`{"postgres": "127.0.26.10"}`, `{"kafka-1": Program.of_group(2611, (9092, 9093))}`)."""
    resolved: dict[str, Node] = {
        name: node if isinstance(node, Program) else address(node) for name, node in nodes.items()
    }
    clash = sorted(set(resolved) & set(_names))
    if clash:
        raise ValueError(f"already named: {', '.join(clash)}")
    _names.update(resolved)
    try:
        yield
    finally:
        for name in resolved:
            _names.pop(name, None)
