"""Migration 0014: a transition's updated_at is later than the change before it, even when its
transaction started first; the downgrade restores 0013's transition_order (updated_at = the
transaction's now(), which goes backwards then), and upgrading again restores the new one."""

import uuid
from datetime import datetime

import psycopg
import pytest

from onceflow.client_keys import Issued
from onceflow.contract import Action
from onceflow.settings import Settings
from services.orders.adapters.calls import PLACE, place_args
from services.orders.domain.order import LineItem
from services.orders.service_layer.services import place_command
from tests.integration.databases import alembic
from tests.integration.orders.late_start import TRACE, begin, transition

pytestmark = pytest.mark.integration
PREVIOUS = "0013_event_from_contract"


def place(settings: Settings, caller: Issued) -> uuid.UUID:
    command = place_command(
        client_id=caller.client_id,
        key=f"k-{uuid.uuid4()}",
        customer_id="c-0014",
        currency="EUR",
        items=(LineItem("SKU-1", 2, 1250),),
        traceparent=TRACE,
    )
    with psycopg.connect(settings.dsn("app")) as conn:
        row = conn.execute(PLACE, place_args(command, lock_timeout="1s")).fetchone()
    assert row is not None
    assert row[:2] == ("created", 201)
    return command.order_id


def late_cancel(settings: Settings, caller: Issued) -> tuple[datetime, datetime, datetime]:
    """A cancel whose transaction starts before a pay that commits before the cancel runs:
    (the cancel's transaction start, the pay's updated_at, the cancel's updated_at)."""
    order_id = place(settings, caller)
    with psycopg.connect(settings.dsn("app")) as late:
        started = begin(late)
        with psycopg.connect(settings.dsn("app")) as other:
            paid = transition(other, caller.client_id, order_id, Action.PAY)
        cancelled = transition(late, caller.client_id, order_id, Action.CANCEL)
        late.commit()
    assert paid[:2] == cancelled[:2] == ("changed", 200)
    paid_at, cancelled_at = (
        datetime.fromisoformat(b["updated_at"]) for _, _, b in (paid, cancelled)
    )
    assert started < paid_at
    return started, paid_at, cancelled_at


def test_downgrade_restores_now_and_upgrade_the_monotonic_updated_at(
    fresh: Settings, caller: Issued
) -> None:
    _, paid_at, cancelled_at = late_cancel(fresh, caller)
    assert paid_at < cancelled_at

    down = alembic(fresh.pg_database, "downgrade", PREVIOUS)
    assert down.returncode == 0, down.stderr
    started, paid_at, cancelled_at = late_cancel(fresh, caller)
    assert cancelled_at == started < paid_at  # 0013's body: the transaction's now()

    up = alembic(fresh.pg_database, "upgrade", "head")
    assert up.returncode == 0, up.stderr
    _, paid_at, cancelled_at = late_cancel(fresh, caller)
    assert paid_at < cancelled_at
    check = alembic(fresh.pg_database, "check")
    assert check.returncode == 0, check.stdout + check.stderr
