"""Nodes of a rehearsal: loopback addresses (127.0.0.0/8 is all this machine's), or names
given to them. Anything else is refused: the fault library never touches another host."""

import ipaddress
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

LOOPBACK = ipaddress.ip_network("127.0.0.0/8")

_names: dict[str, ipaddress.IPv4Address] = {}


class NotLocalError(ValueError):
    """A node that is not one of this machine's loopback addresses (nor a name for one)."""


def address(node: str) -> ipaddress.IPv4Address:
    """The loopback address of `node` (an address, or a name given with `named`)."""
    if node in _names:
        return _names[node]
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


@contextmanager
def named(nodes: Mapping[str, str]) -> Iterator[None]:
    """Give names to loopback addresses while the block runs (`{"postgres": "127.0.26.10"}`)."""
    resolved = {name: address(node) for name, node in nodes.items()}
    clash = sorted(set(resolved) & set(_names))
    if clash:
        raise ValueError(f"already named: {', '.join(clash)}")
    _names.update(resolved)
    try:
        yield
    finally:
        for name in resolved:
            _names.pop(name, None)
