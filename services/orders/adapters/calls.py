"""The SQL calls of the write functions (migrations/sql/orders/): one statement each, compiled
once at import, with NAMED arguments (`p_<name> => %(<name>)s`) taken from a command and the
contract (the status, event type and schema version the SQL writes)."""

from typing import Any

import orjson
from sqlalchemy import ColumnElement, Text, literal_column, select, text
from sqlalchemy import cast as sql_cast

from onceflow.contract import SCHEMA_VERSION, STATUS_AFTER, TRANSITIONS, EventType
from services.orders.adapters.compiled import to_sql
from services.orders.domain.commands import KeyClaim, PlaceOrder, TransitionOrder

RESULT: tuple[ColumnElement[Any], ...] = (
    literal_column("outcome"),
    literal_column("status"),
    sql_cast(literal_column("body"), Text),  # JSON text: the response body as stored
)


def call(function: str, *args: str) -> str:
    """`SELECT outcome, status, body::text FROM <function>(p_<arg> => %(<arg>)s, ...)`; an arg
    written `name:type` is cast to that type."""
    named: list[str] = []
    for arg in args:
        name, _, pg_type = arg.partition(":")
        value = f"CAST(:{name} AS {pg_type})" if pg_type else f":{name}"
        named.append(f"p_{name} => {value}")
    return to_sql(select(*RESULT).select_from(text(f"{function}({', '.join(named)})")))


CLAIM = ("scope", "key", "fingerprint", "lock_timeout")
PLACE = call(
    "orders.place_order",
    *CLAIM,
    *("order_id", "event_id", "customer_id", "currency", "items:jsonb", "total_cents"),
    "traceparent",
    "client_id",
    *("status", "event_type", "schema_version"),
)
TRANSITION = call(
    "orders.transition_order",
    *CLAIM,
    *("order_id", "action", "from", "to", "event_type", "event_id", "traceparent"),
    "problems:jsonb",
    "client_id",
    "schema_version",
)


def claim_args(claim: KeyClaim, lock_timeout: str) -> dict[str, Any]:
    """The arguments every write function takes to claim its Idempotency-Key."""
    return {
        "scope": claim.scope,
        "key": claim.key,
        "fingerprint": claim.fingerprint,
        "lock_timeout": lock_timeout,
    }


def place_args(command: PlaceOrder, *, lock_timeout: str) -> dict[str, Any]:
    """PLACE's arguments for `command` (the total is the domain's, never the client's), and
    the contract's status, event type and schema version of a placed order."""
    return {
        **claim_args(command.claim, lock_timeout),
        "order_id": command.order_id,
        "event_id": command.event_id,
        "customer_id": command.customer_id,
        "currency": command.currency,
        "items": orjson.dumps([vars(item) for item in command.items]).decode(),
        "total_cents": command.total_cents,
        "traceparent": command.traceparent,
        "client_id": command.client_id,
        "status": STATUS_AFTER[EventType.PLACED].value,
        "event_type": EventType.PLACED.value,
        "schema_version": SCHEMA_VERSION,
    }


def transition_args(
    command: TransitionOrder, *, lock_timeout: str, problems: str
) -> dict[str, Any]:
    """TRANSITION's arguments: the action's rule from the contract's state machine, and the
    problem documents (entrypoints/problems.py) the function may store as the answer."""
    rule = TRANSITIONS[command.action]
    return {
        **claim_args(command.claim, lock_timeout),
        "order_id": command.order_id,
        "action": command.action.value,
        "from": [status.value for status in rule.sources],
        "to": rule.target.value,
        "event_type": rule.event_type.value,
        "event_id": command.event_id,
        "traceparent": command.traceparent,
        "problems": problems,
        "client_id": command.client_id,
        "schema_version": SCHEMA_VERSION,
    }
