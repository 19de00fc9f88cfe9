"""The write functions below HTTP, through the unit of work: the Outcome of each answer."""

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar
from uuid import UUID

import orjson

from onceflow.client_keys import Issued
from onceflow.contract import Action
from onceflow.settings import Settings, get_api_settings
from services.orders.adapters.pool import Pool, make_pool
from services.orders.domain.order import LineItem
from services.orders.domain.outcomes import Outcome
from services.orders.entrypoints.problems import STORED
from services.orders.entrypoints.tracing import new_traceparent
from services.orders.service_layer import services
from services.orders.service_layer.unit_of_work import PsycopgUnitOfWork
from tests.integration.orders.conftest import customer, key

T = TypeVar("T")
MISSING = UUID("01a20114-a2ad-7eaf-9c28-000000000002")


def with_pool(settings: Settings, work: Callable[[Pool], Awaitable[T]]) -> T:
    """Run `work` on a fresh one-connection pool of the API role."""

    async def run() -> T:
        pool = make_pool(settings, get_api_settings().model_copy(update={"api_pool_size": 1}))
        await pool.open()
        try:
            return await work(pool)
        finally:
            await pool.close()

    return asyncio.run(run())


async def place(pool: Pool, idem: str, customer_id: str, client_id: UUID) -> Outcome:
    """One POST /orders command, in its own unit of work, committed."""
    command = services.place_command(
        client_id=client_id,
        key=idem,
        customer_id=customer_id,
        currency="EUR",
        items=(LineItem("SKU-1", 2, 1250),),
        traceparent=new_traceparent(),
    )
    async with PsycopgUnitOfWork(pool, wait_ms=50, problems=STORED) as uow:
        outcome = await uow.orders.place(command)
        await uow.commit()
    return outcome


def test_a_replay_returns_the_stored_body_and_a_reused_key_none(
    settings: Settings, caller: Issued
) -> None:
    idem, who = key(), customer()

    async def work(pool: Pool) -> list[Outcome]:
        return [
            await place(pool, idem, someone, caller.client_id) for someone in (who, who, customer())
        ]

    first, replay, reused = with_pool(settings, work)
    assert (first.kind, first.status) == ("created", 201)
    assert first.body is not None
    assert orjson.loads(first.body)["customer_id"] == who
    assert replay == Outcome(kind="replayed", status=201, body=first.body)
    # The function stores no body for a key reused with another request: None, not b"None".
    assert reused == Outcome(kind="mismatch", status=422, body=None)


def test_an_unknown_order_is_answered_with_the_apis_problem(
    settings: Settings, caller: Issued
) -> None:
    async def work(pool: Pool) -> Outcome:
        command = services.transition_command(
            client_id=caller.client_id,
            key=key(),
            order_id=MISSING,
            action=Action.PAY,
            traceparent=new_traceparent(),
        )
        uow = PsycopgUnitOfWork(pool, wait_ms=50, problems=STORED)
        return await services.transition_order(uow=uow, command=command)

    outcome = with_pool(settings, work)
    assert (outcome.kind, outcome.status) == ("not_found", 404)
    assert outcome.body is not None
    assert orjson.loads(outcome.body) == {
        **orjson.loads(STORED)["not_found"],
        "detail": f"order {MISSING} does not exist",
    }
