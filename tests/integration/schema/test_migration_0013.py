"""Migration 0013: the write functions take the event type and schema version from the API; the
downgrade restores 0012's functions, which run as the previous API called them, and upgrading
again restores the new ones."""

import re
import uuid
from typing import Any

import psycopg
import pytest

from onceflow.client_keys import Issued
from onceflow.contract import Action
from onceflow.settings import Settings
from services.orders.adapters.calls import PLACE, TRANSITION, place_args, transition_args
from services.orders.domain.order import LineItem
from services.orders.entrypoints.problems import STORED
from services.orders.service_layer.services import place_command, transition_command
from tests.integration.databases import alembic

pytestmark = pytest.mark.integration
Conn = psycopg.Connection[tuple[Any, ...]]
TRACE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
PREVIOUS = "0012_content_fingerprints"
# The arguments 0013 added to each call: the previous API did not pass them.
ADDED = {PLACE: ("status", "event_type", "schema_version"), TRANSITION: ("schema_version",)}


def run(settings: Settings, call: str, args: dict[str, Any], *, previous: bool) -> tuple[Any, ...]:
    """The call's (outcome, status, body) as the API role, as this or the previous API calls."""
    if previous:
        for name in ADDED[call]:
            call = call.replace(f", p_{name} => %({name})s", "")
            args = {k: v for k, v in args.items() if k != name}
    with psycopg.connect(settings.dsn("app")) as conn:
        row = conn.execute(call, args).fetchone()
    assert row is not None
    return tuple(row)


def place(settings: Settings, caller: Issued, *, previous: bool = False) -> uuid.UUID:
    command = place_command(
        client_id=caller.client_id,
        key=f"k-{uuid.uuid4()}",
        customer_id="c-0013",
        currency="EUR",
        items=(LineItem("SKU-1", 2, 1250),),
        traceparent=TRACE,
    )
    outcome = run(settings, PLACE, place_args(command, lock_timeout="1s"), previous=previous)
    assert outcome[:2] == ("created", 201)
    return command.order_id


def pay(settings: Settings, caller: Issued, order_id: uuid.UUID, *, previous: bool) -> None:
    command = transition_command(
        client_id=caller.client_id,
        key=f"k-{uuid.uuid4()}",
        order_id=order_id,
        action=Action.PAY,
        traceparent=TRACE,
    )
    args = transition_args(command, lock_timeout="1s", problems=STORED)
    assert run(settings, TRANSITION, args, previous=previous)[:2] == ("changed", 200)


def arguments(settings: Settings, function: str) -> str:
    with psycopg.connect(settings.dsn("owner")) as conn:
        row = conn.execute("SELECT pg_get_function_arguments(%s::regproc)", (function,)).fetchone()
    assert row is not None
    return str(row[0])


def test_downgrade_restores_the_previous_calls_and_upgrade_the_new(
    fresh: Settings, caller: Issued
) -> None:
    pay(fresh, caller, place(fresh, caller), previous=False)

    down = alembic(fresh.pg_database, "downgrade", PREVIOUS)
    assert down.returncode == 0, down.stderr
    assert not re.search(r"p_schema_version|p_event_type", arguments(fresh, "orders.place_order"))
    pay(fresh, caller, place(fresh, caller, previous=True), previous=True)

    up = alembic(fresh.pg_database, "upgrade", "head")
    assert up.returncode == 0, up.stderr
    assert "p_schema_version integer" in arguments(fresh, "orders.emit_event")
    pay(fresh, caller, place(fresh, caller), previous=False)
    check = alembic(fresh.pg_database, "check")
    assert check.returncode == 0, check.stdout + check.stderr
