"""A working client behind an address a neighbour guesses keys from (a NAT, a proxy) is not
refused each time its verified key ages out of the worker's cache (Authenticator, auth.py)."""

import asyncio
import uuid
from typing import Any

from onceflow.api_keys import key_hash, new_key
from services.orders.domain.api_keys import Client
from services.orders.domain.rate_limit import PeerBudget
from services.orders.entrypoints.auth import CLIENT, Authenticator
from services.orders.service_layer.authentication import KeyCache

OWNER = Client(id=uuid.UUID(int=1), scopes=frozenset({"orders:read"}), rate_per_s=None)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def scope(key: str) -> dict[str, Any]:
    return {
        "path": "/orders",
        "headers": [(b"authorization", f"Bearer {key}".encode())],
        "client": ("10.0.0.1", 40000),
    }


def test_a_verified_key_is_not_charged_to_its_peer_when_it_ages_out() -> None:
    clock = Clock()
    live = new_key()

    async def lookup(digest: bytes) -> tuple[Client, float | None] | None:
        return (OWNER, None) if digest == key_hash(live) else None

    auth = Authenticator(
        keys=KeyCache(ttl_s=1.0, unknown_ttl_s=5.0, unknown_size=100, clock=clock),
        failures=PeerBudget(rate=1.0, burst=20, clock=clock),
        pool=None,  # type: ignore[arg-type]
    )
    auth.lookup = lookup

    async def run() -> None:
        s = scope(live)
        assert await auth(s) is None
        assert s[CLIENT] == OWNER
        for _ in range(40):  # the neighbour's guesses use up the address's budget
            refusal = await auth(scope(new_key()))
            assert refusal is not None
        assert (await auth(scope(new_key()))).status == 429  # type: ignore[union-attr]
        for _ in range(5):  # the client keeps working while its entry ages out, again and again
            clock.now += 1.5
            while (await auth(scope(new_key()))).status != 429:  # type: ignore[union-attr]
                pass  # the neighbour guesses on until the address is over its budget
            s = scope(live)
            assert await auth(s) is None
            assert s[CLIENT] == OWNER
            # A new, unverified key from that address still waits for the budget.
            assert (await auth(scope(new_key()))).status == 429  # type: ignore[union-attr]

    asyncio.run(run())
