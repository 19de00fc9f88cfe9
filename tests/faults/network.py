"""Network faults between nodes of this machine, as context managers: each fault holds while its
block runs and is removed when the block ends, however it ends.

- partition(a, b): no packet passes between a and b, either way (nftables drop);
- isolate(node): no packet passes between the node and any other address;
- loss(a, b, percent): each packet between a and b, either way, is dropped with that chance
  (nftables `numgen random`);
- delay(a, b, ms, jitter): every answer from b to a comes ms (± jitter) later, so each request
  and answer round trip takes at least ms longer. This kernel has no tc netem, so a Toxiproxy
  proxy carries the traffic: between addresses, open it with link(a, b, ...) and point a at the
  address it yields; between programs, a's connections to b's ports are redirected to it
  (detour.py; a partition or loss between the two opened inside the delay hits them there);
- heal(): every fault removed at once (the nftables table and every toxic on the library's
  proxies); clean_up() also removes the library's proxies. Both run when the process exits.
"""

import atexit
import itertools
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from ipaddress import IPv4Address

from tests.faults import nft, toxiproxy
from tests.faults.detour import Detour, detour
from tests.faults.nodes import Node, Program, endpoint, pair, resolve, resolved_pair

_links: dict[tuple[IPv4Address, IPv4Address], str] = {}
# Each open detour by its (client, server): faults between the two hit its proxies too.
_detours: dict[tuple[Program, Program], Detour] = {}
# The pairs a partition or loss holds now (a delay opened after one would escape it).
_cut: Counter[frozenset[Node]] = Counter()
_ids = itertools.count(1)
_made_any = False  # the exit clean-up is for processes that made a fault, not for any importer


@contextmanager
def _rules(kind: str, rules: list[str]) -> Iterator[None]:
    _made()
    chain = nft.add_chain(kind, rules)
    try:
        yield
    finally:
        nft.delete_chain(chain)


def _sends(node: Node) -> str:
    return node.sends if isinstance(node, Program) else f"ip saddr {node}"


def _receives(node: Node) -> str | None:
    return node.receives if isinstance(node, Program) else f"ip daddr {node}"


def _between(a: str, b: str, verdict: str) -> list[str]:
    """The rules hitting what a sends to b and b to a. A program that listens on no port gets
    nothing but answers on connections it opened: cutting what it sends cuts those too."""
    x, y = resolved_pair(a, b)
    rules = [
        f"{_sends(sender)} {to} {verdict}"
        for sender, receiver in ((x, y), (y, x))
        if (to := _receives(receiver)) is not None
    ]
    for (client, server), open_detour in _detours.items():
        if {client, server} == {x, y}:
            rules += open_detour.rules(verdict)
    if not rules:
        raise ValueError(f"neither {a} nor {b} listens on a port: name one by its ports")
    return rules


@contextmanager
def _held(a: str, b: str) -> Iterator[None]:
    """The pair counted as cut (or lossy) while the block runs."""
    key = frozenset(resolved_pair(a, b))
    _cut[key] += 1
    try:
        yield
    finally:
        _cut[key] -= 1
        if not _cut[key]:
            del _cut[key]


@contextmanager
def partition(a: str, b: str) -> Iterator[None]:
    """No packet between a and b, either way; everything else passes."""
    with _held(a, b), _rules("partition", _between(a, b, "drop")):
        yield


def _isolating(node: Node) -> list[str]:
    if not isinstance(node, Program):
        return [
            f"ip saddr {node} ip daddr != {node} drop",
            f"ip daddr {node} ip saddr != {node} drop",
        ]
    if not node.ports:
        return [f"{node.sends} drop"]
    own = f"{{ {', '.join(map(str, node.ports))} }}"
    # Its traffic to its own ports and its answers from them pass (`accept` ends this chain
    # only); the last rule stops what others send to it.
    return [
        f"{node.sends} tcp dport {own} accept",
        f"{node.sends} tcp sport {own} accept",
        f"{node.sends} drop",
        f"{node.receives} meta {node.owner} != {node.id} drop",
    ]


@contextmanager
def isolate(node: str) -> Iterator[None]:
    """No packet between the node and any other address or program (its own traffic to itself
    passes)."""
    with _rules("isolate", _isolating(resolve(node))):
        yield


@contextmanager
def loss(a: str, b: str, percent: float) -> Iterator[None]:
    """Each packet between a and b (either way) dropped with a `percent` chance (0.01 steps)."""
    if not 0 < percent <= 100:
        raise ValueError(f"loss percent must be in (0, 100], not {percent}")
    share = round(percent * 100)
    with _held(a, b), _rules("loss", _between(a, b, f"numgen random mod 10000 < {share} drop")):
        yield


@contextmanager
def link(a: str, b: str, *, port: int, upstream: str) -> Iterator[str]:
    """A Toxiproxy proxy by which a reaches b: it listens on b's address at `port` and forwards
    to `upstream` (host:port on this machine). Yields the `host:port` a must connect to."""
    x, y = pair(a, b)
    up_host, up_port = endpoint(upstream)
    if (x, y) in _links or (y, x) in _links:
        raise ValueError(f"a link between {a} and {b} is already open")
    _made()
    toxiproxy.ensure_server()
    name = f"{toxiproxy.PREFIX}{x}_{y}_{port}".replace(".", "-")
    listen = f"{y}:{port}"
    toxiproxy.create_proxy(name, listen, f"{up_host}:{up_port}")
    _links[(x, y)] = name
    try:
        yield listen
    finally:
        _links.pop((x, y), None)
        toxiproxy.delete_proxy(name)


@contextmanager
def delay(a: str, b: str, ms: int, jitter: int = 0) -> Iterator[None]:
    """Every answer from b to a comes `ms` ± `jitter` milliseconds later: on their link between
    addresses, or, from a program to a program, through a detour of a's connections to b."""
    if ms < 0 or not 0 <= jitter <= ms:
        raise ValueError(f"delay needs ms >= 0 and 0 <= jitter <= ms, not {ms} ± {jitter}")
    x, y = resolved_pair(a, b)
    _made()
    if isinstance(x, Program) and isinstance(y, Program):
        if frozenset((x, y)) in _cut:
            raise ValueError(
                f"a partition or loss between {a} and {b} is in force: open the delay first and"
                " the others inside it, so that they hit the connections it detours"
            )
        with detour(x, y) as opened:
            _detours[(x, y)] = opened
            try:
                with _toxics(list(opened.names.values()), ms, jitter):
                    yield
            finally:
                _detours.pop((x, y), None)
        return
    first, second = pair(a, b)
    proxy = _links.get((first, second)) or _links.get((second, first))
    if proxy is None:
        raise ValueError(
            f"no link between {a} and {b}: delay goes through Toxiproxy, open one with"
            " link(a, b, port=..., upstream=...) and connect a to the address it yields"
        )
    with _toxics([proxy], ms, jitter):
        yield


@contextmanager
def _toxics(proxies: list[str], ms: int, jitter: int) -> Iterator[None]:
    toxic = f"delay_{next(_ids)}"
    try:
        for proxy in proxies:
            toxiproxy.add_toxic(proxy, toxic, "latency", {"latency": ms, "jitter": jitter})
        yield
    finally:
        for proxy in proxies:
            toxiproxy.remove_toxic(proxy, toxic)


def heal() -> None:
    """Remove every fault: the library's nftables table and every toxic on its proxies."""
    nft.delete_table()
    for proxy, toxics in toxiproxy.ours().items():
        for toxic in toxics:
            toxiproxy.remove_toxic(proxy, toxic)


def clean_up() -> None:
    """heal(), and remove the library's proxies too (what a test or a process leaves behind)."""
    heal()
    for proxy in toxiproxy.ours():
        toxiproxy.delete_proxy(proxy)
    _links.clear()
    _detours.clear()
    _cut.clear()


@contextmanager
def cleaned_up() -> Iterator[None]:
    """Clean up before (a killed run's leftovers) and after the block, however it ends."""
    clean_up()
    try:
        yield
    finally:
        clean_up()


def _made() -> None:
    global _made_any
    _made_any = True


def _clean_up_at_exit() -> None:
    if _made_any:
        clean_up()


atexit.register(_clean_up_at_exit)
