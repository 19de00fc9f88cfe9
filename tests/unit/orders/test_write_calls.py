"""The write functions' SQL calls (no database): named arguments that match the commands, the
contract's state machine, event types and schema version passed in, a NULL body kept as None,
pgbench in step with the API."""

import re
from uuid import UUID

import orjson
import pytest

from onceflow.contract import SCHEMA_VERSION, STATUS_AFTER, TRANSITIONS, Action, EventType
from onceflow.paths import ROOT
from services.orders.adapters.calls import PLACE, TRANSITION, place_args, transition_args
from services.orders.adapters.repository import outcome_of
from services.orders.domain.order import LineItem
from services.orders.domain.outcomes import Outcome
from services.orders.entrypoints.problems import STORED
from services.orders.service_layer.services import place_command, transition_command

ORDER_ID = UUID("01a20114-a2ad-7eaf-9c28-f79e39388b5a")
CLIENT = UUID("01a20114-a2ad-7eaf-9c28-00000000c11e")
TRACE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
ITEMS = (LineItem("SKU-1", 2, 1250), LineItem("SKU-2", 1, 99))


def named(sql: str) -> list[str]:
    """The names of the function arguments, in order: `p_x => ...` gives `x`."""
    return re.findall(r"\bp_(\w+) =>", sql)


def placeholders(sql: str) -> list[str]:
    return re.findall(r"%\((\w+)\)s", sql)


def test_place_passes_every_named_argument_from_the_command() -> None:
    command = place_command(
        client_id=CLIENT,
        key="k",
        customer_id="c-42",
        currency="EUR",
        items=ITEMS,
        traceparent=TRACE,
    )
    args = place_args(command, lock_timeout="50ms")
    assert named(PLACE) == placeholders(PLACE) == list(args)
    assert args["total_cents"] == 2 * 1250 + 99 == command.total_cents
    assert orjson.loads(args["items"]) == [vars(item) for item in ITEMS]


@pytest.mark.parametrize("action", list(Action))
def test_transition_passes_the_contracts_rule_for_the_action(action: Action) -> None:
    command = transition_command(
        client_id=CLIENT, key="k", order_id=ORDER_ID, action=action, traceparent=TRACE
    )
    args = transition_args(command, lock_timeout="50ms", problems=STORED)
    assert named(TRANSITION) == placeholders(TRANSITION) == list(args)
    rule = TRANSITIONS[action]
    assert (set(args["from"]), args["to"], args["event_type"], args["schema_version"]) == (
        set(rule.sources),
        rule.target,
        rule.event_type,
        SCHEMA_VERSION,
    )


def test_a_null_body_stays_none() -> None:
    assert outcome_of(("mismatch", 422, None)) == Outcome("mismatch", 422, None)
    assert outcome_of(("created", 201, '{"id": 1}')).body == b'{"id": 1}'


def test_pgbench_runs_the_call_the_api_issues() -> None:
    bench = (ROOT / "bench" / "place_order.sql").read_text()
    call = " ".join(PLACE.split()).split("(p_")[0]  # SELECT ... FROM orders.place_order
    assert call in " ".join(bench.split())
    assert named(bench) == named(PLACE)


def test_place_and_pgbench_pass_the_contracts_event() -> None:
    command = place_command(
        client_id=CLIENT, key="k", customer_id="c", currency="EUR", items=ITEMS, traceparent=TRACE
    )
    args = place_args(command, lock_timeout="50ms")
    contract = {
        "status": STATUS_AFTER[EventType.PLACED],
        "event_type": EventType.PLACED,
        "schema_version": SCHEMA_VERSION,
    }
    assert {name: args[name] for name in contract} == contract
    bench = (ROOT / "bench" / "place_order.sql").read_text()
    literals = dict(re.findall(r"\bp_(\w+) => '?(\w+)'?[,)]", bench))
    assert {name: literals[name] for name in contract} == {k: str(v) for k, v in contract.items()}
