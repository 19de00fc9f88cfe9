"""Request and response bodies of API v1 (contract section 3). Unknown fields are rejected."""

from typing import Annotated
from uuid import UUID

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from onceflow import contract
from onceflow.contract import OrderStatus
from onceflow.settings import get_api_settings

# JSON Schema / pydantic (Rust) regexes: `$` is the very end of the text.
IDENTIFIER_PATTERN = f"^(?:{contract.IDENTIFIER})$"
CURRENCY_PATTERN = f"^(?:{contract.CURRENCY})$"
Identifier = Annotated[
    str, Field(min_length=1, max_length=contract.IDENTIFIER_MAX_LENGTH, pattern=IDENTIFIER_PATTERN)
]
Quantity = Annotated[int, Field(ge=contract.MIN_QUANTITY, le=contract.MAX_QUANTITY)]
UnitPrice = Annotated[
    int, Field(ge=contract.MIN_UNIT_PRICE_CENTS, le=contract.MAX_UNIT_PRICE_CENTS)
]
STRICT = ConfigDict(extra="forbid", strict=True)


class ItemIn(BaseModel):
    """One order line."""

    model_config = STRICT
    sku: Identifier
    quantity: Quantity
    unit_price_cents: UnitPrice


class OrderIn(BaseModel):
    """Body of POST /orders; the total is computed by the server."""

    model_config = STRICT
    customer_id: Identifier
    currency: Annotated[str, Field(pattern=CURRENCY_PATTERN, description="ISO 4217, allow-listed")]
    items: Annotated[
        list[ItemIn], Field(min_length=contract.MIN_ITEMS, max_length=contract.MAX_ITEMS)
    ]

    @field_validator("currency")
    @classmethod
    def _allowed(cls, code: str) -> str:
        allowed = get_api_settings().api_currencies
        if code not in allowed:
            raise ValueError(f"currency must be one of {', '.join(allowed)}")
        return code


class ItemOut(BaseModel):
    """One order line as stored."""

    sku: Identifier
    quantity: Quantity
    unit_price_cents: UnitPrice


class OrderOut(BaseModel):
    """An order, as returned by every endpoint and carried in events (held against the event's
    definition, onceflow/event_definition.py, by tests/unit/events/test_definition_holds.py)."""

    id: UUID
    customer_id: Identifier
    currency: Annotated[str, Field(max_length=contract.CURRENCY_LENGTH, pattern=CURRENCY_PATTERN)]
    status: OrderStatus
    total_cents: Annotated[int, Field(ge=0, le=contract.MAX_TOTAL_CENTS)]
    items: Annotated[
        list[ItemOut], Field(min_length=contract.MIN_ITEMS, max_length=contract.MAX_ITEMS)
    ]
    created_at: AwareDatetime
    updated_at: AwareDatetime


class OrderPage(BaseModel):
    """One page of GET /orders, newest first; pass `next_cursor` back to continue."""

    items: list[OrderOut]
    next_cursor: str | None


class Health(BaseModel):
    """Liveness or readiness report."""

    status: str
