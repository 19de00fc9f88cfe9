"""Network faults on the single topology (the library: tests/faults). The API cut off from
Postgres for 20 s under client load: it answers 503 problem+json within a bounded time during
the cut, serves again soon after the heal, and no retried Idempotency-Key made a second order or
a second event (exactly once in the orders tables and on the outbox topic).

The API here is the test's own (same code and entrypoint, port 18000) reaching Postgres through
a Toxiproxy link on 127.0.26.10, so that the cut is between two addresses and the stack's API
and its settings stay as they are."""

import threading
import time
from collections import Counter
from collections.abc import Iterator

import psycopg
import pytest

from onceflow.problems import TYPE_PREFIX
from onceflow.settings import Settings
from stack.waiting import wait_for
from tests import faults
from tests.e2e.api_instance import api_instance
from tests.e2e.kafka_reader import read_events
from tests.e2e.retrying import Attempt, RetryingClient
from tests.faults.fixtures import network_faults
from tests.integration.clients import bearer, new_client

__all__ = ["network_faults"]

NODES = {"api": "127.0.0.1", "postgres": "127.0.26.10"}  # the API's source; its Postgres link
API_PORT = 18000
CUT_S = 20.0
CLIENTS = 4
ANSWER_BOUND_S = 10.0  # the longest any request may wait for its answer during the cut
RECOVERY_BOUND_S = 30.0


@pytest.fixture
def nodes() -> Iterator[None]:
    with faults.named(NODES):
        yield


def _in(attempts: list[Attempt], start: float, end: float) -> list[Attempt]:
    return [a for a in attempts if start <= a.started < end]


@pytest.mark.usefixtures("network_faults", "nodes")
def test_the_api_cut_off_from_postgres_answers_503_then_recovers_exactly_once(
    settings: Settings,
) -> None:
    issued = new_client(settings, name="faults")
    upstream = f"{settings.pg_host}:{settings.pg_port}"
    with (
        faults.link("api", "postgres", port=settings.pg_port, upstream=upstream) as via,
        api_instance(API_PORT, pg_host=via.rpartition(":")[0]) as url,
    ):
        stopping = threading.Event()
        clients = [RetryingClient(url, bearer(issued), stopping) for _ in range(CLIENTS)]
        for client in clients:
            client.start()
        try:
            wait_for(lambda: all(len(c.paid) >= 2 for c in clients), what="load", timeout=60)
            with faults.partition("api", "postgres"):
                cut = time.monotonic()
                time.sleep(CUT_S)  # the fault's length, not a wait for a state
            healed = time.monotonic()

            def served_since_heal() -> bool:
                return all(
                    any(a.status in (200, 201) for a in _in(c.attempts, healed, 1e12))
                    for c in clients
                )

            wait_for(served_since_heal, what="every client served again", timeout=90)
        finally:
            stopping.set()
            for client in clients:
                client.join(2 * 30 + 10)
    assert all(not c.is_alive() for c in clients), "a client did not stop"
    failures = [c.failure for c in clients if c.failure is not None]
    assert not failures, failures

    attempts = sorted((a for c in clients for a in c.attempts), key=lambda a: a.started)
    during = [a for a in _in(attempts, cut, healed) if a.ended <= healed]  # answered in the cut
    after = _in(attempts, healed, 1e12)
    first_served = min(a.ended for a in after if a.status in (200, 201)) - healed
    all_served = (
        max(
            min(a.ended for a in _in(c.attempts, healed, 1e12) if a.status in (200, 201))
            for c in clients
        )
        - healed
    )
    longest = max(a.ended - a.started for a in during)
    served = sum(a.status in (200, 201) for a in during)
    retried = sum(len(c.retried_keys) for c in clients)
    replayed = sum(len(c.replayed_keys) for c in clients)
    print(
        f"cut {CUT_S:.0f}s: {len(during)} attempts, {served} served"
        f" ({served / len(during):.1%}), answers {Counter(a.status for a in during)},"
        f" longest {longest:.2f}s; after the heal first served at {first_served:.2f}s,"
        f" every client at {all_served:.2f}s; retried keys {retried}"
        f" ({replayed} answered as a replay: made before their first answer was lost)"
    )
    assert during, "no request was made during the cut"
    assert all(a.status is not None for a in attempts), "a request got no answer"
    assert longest <= ANSWER_BOUND_S, f"a request waited {longest:.1f}s for its answer"
    refused = [a for a in during if a.status not in (200, 201)]
    assert refused, "the cut refused nothing"
    answers = {(a.status, a.problem.removeprefix(TYPE_PREFIX)) for a in refused}
    assert answers <= {(503, "unavailable"), (409, "request-in-flight")}, answers
    assert all_served <= RECOVERY_BOUND_S, f"served again only {all_served:.1f}s after the heal"
    assert retried, "no key was retried"
    _assert_each_change_once(settings, clients, str(issued.client_id))


def _assert_each_change_once(
    settings: Settings, clients: list[RetryingClient], client_id: str
) -> None:
    """Each acknowledged order and payment is in the orders table once (no retried key made a
    second order) and on the outbox topic once."""
    placed = [o for c in clients for o in c.placed.values()]
    paid = {o["id"] for c in clients for o in c.paid.values()}
    with psycopg.connect(settings.dsn("owner"), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT id::text, status FROM orders.orders WHERE client_id = %s", (client_id,)
        ).fetchall()
    assert sorted(str(i) for i, _ in rows) == sorted(o["id"] for o in placed)
    assert {str(i): s for i, s in rows} == {
        o["id"]: "PAID" if o["id"] in paid else "PLACED" for o in placed
    }
    expected = Counter((o["id"], "OrderPlaced") for o in placed)
    expected.update((order_id, "OrderPaid") for order_id in paid)
    events = read_events(
        settings.kafka_bootstrap,
        settings.topic,
        keys=[o["id"] for o in placed],
        expected=sum(expected.values()),
        timeout=120,
    )
    assert Counter((e.key, e.value["event_type"]) for e in events) == expected
