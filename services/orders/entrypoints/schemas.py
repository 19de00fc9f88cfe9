"""Request and response bodies of API v1 (contract section 3). Unknown fields are rejected."""

from typing import Annotated
from uuid import UUID

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from onceflow.settings import get_api_settings
from services.orders.domain.order import MAX_ITEMS, MAX_QUANTITY, MAX_UNIT_PRICE_CENTS
from services.orders.domain.status import OrderStatus

IDENTIFIER_PATTERN = r"^[A-Za-z0-9._:-]{1,64}$"
Identifier = Annotated[str, Field(min_length=1, max_length=64, pattern=IDENTIFIER_PATTERN)]
Quantity = Annotated[int, Field(ge=1, le=MAX_QUANTITY)]
UnitPrice = Annotated[int, Field(ge=0, le=MAX_UNIT_PRICE_CENTS)]
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
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$", description="ISO 4217, allow-listed")]
    items: Annotated[list[ItemIn], Field(min_length=1, max_length=MAX_ITEMS)]

    @field_validator("currency")
    @classmethod
    def _allowed(cls, code: str) -> str:
        allowed = get_api_settings().api_currencies
        if code not in allowed:
            raise ValueError(f"currency must be one of {', '.join(allowed)}")
        return code


class ItemOut(BaseModel):
    """One order line as stored."""

    sku: str
    quantity: int
    unit_price_cents: int


class OrderOut(BaseModel):
    """An order, as returned by every endpoint and carried in events."""

    id: UUID
    customer_id: str
    currency: str
    status: OrderStatus
    total_cents: int
    items: list[ItemOut]
    created_at: AwareDatetime
    updated_at: AwareDatetime


class OrderPage(BaseModel):
    """One page of GET /orders, newest first; pass `next_cursor` back to continue."""

    items: list[OrderOut]
    next_cursor: str | None


class Health(BaseModel):
    """Liveness or readiness report."""

    status: str
