"""A transition whose transaction started before a change it then sees (READ COMMITTED): the
case where a timestamp taken at the transaction's start (now()) would go backwards."""

import uuid
from datetime import datetime
from typing import Any

import orjson
import psycopg

from onceflow.contract import Action
from services.orders.adapters.calls import TRANSITION, transition_args
from services.orders.entrypoints.problems import STORED
from services.orders.service_layer.services import transition_command

Conn = psycopg.Connection[tuple[Any, ...]]
TRACE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def begin(conn: Conn) -> datetime:
    """Start a transaction on `conn` (not autocommit) and return its now(): its start time."""
    assert not conn.autocommit
    row = conn.execute("SELECT now()").fetchone()
    assert row is not None
    started: datetime = row[0]
    return started


def transition(
    conn: Conn, client_id: uuid.UUID, order_id: uuid.UUID, action: Action
) -> tuple[str, int, dict[str, Any]]:
    """orders.transition_order as the API calls it, in `conn`'s current transaction (not
    committed here): (outcome, status, body)."""
    command = transition_command(
        client_id=client_id,
        key=f"test-{uuid.uuid4()}",
        order_id=order_id,
        action=action,
        traceparent=TRACE,
    )
    args = transition_args(command, lock_timeout="1s", problems=STORED)
    row = conn.execute(TRANSITION, args).fetchone()
    assert row is not None
    outcome, status, body = row
    return str(outcome), int(status), orjson.loads(body)
