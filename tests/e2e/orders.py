"""Driving the public API the way a REST client does, and the model of what it should produce."""

import random
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx

EVENT_OF_ACTION = {"pay": "OrderPaid", "ship": "OrderShipped", "cancel": "OrderCancelled"}


def place(
    api: httpx.Client, customer_id: str, currency: str, items: list[dict[str, Any]]
) -> dict[str, Any]:
    body = {"customer_id": customer_id, "currency": currency, "items": items}
    response = api.post("/orders", json=body, headers={"Idempotency-Key": str(uuid.uuid4())})
    assert response.status_code == 201, response.text
    order: dict[str, Any] = response.json()
    return order


def act(api: httpx.Client, order_id: str, action: str) -> dict[str, Any]:
    response = api.post(
        f"/orders/{order_id}/{action}", headers={"Idempotency-Key": str(uuid.uuid4())}
    )
    assert response.status_code == 200, response.text
    order: dict[str, Any] = response.json()
    return order


def day_of(timestamp: str) -> str:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).date().isoformat()


def daily_gain(
    event_type: str, day: str, currency: str, total: int, *, refund: bool = False
) -> Counter[tuple[str, str, str]]:
    """What one counted event adds to analytics.daily_sales (`refund`: a cancellation of an
    order that had been paid)."""
    name = event_type.removeprefix("Order").lower()
    gain = Counter({(day, currency, f"orders_{name}"): 1, (day, currency, f"{name}_cents"): total})
    if event_type == "OrderPaid":
        gain[(day, currency, "net_paid_cents")] += total
    if refund:
        gain[(day, currency, "refunded_cents")] += total
        gain[(day, currency, "net_paid_cents")] -= total
    return Counter({k: v for k, v in gain.items() if v})  # net may be negative


@dataclass
class Expected:
    """The changes a test made through the API, and what the money tables keyed by its own
    customers and skus must gain from them, per currency: customers by (customer_id, currency),
    products by (sku, currency), daily_products by (day, sku, currency)."""

    customers: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)
    products: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)
    daily_products: dict[tuple[str, str, str], Counter[str]] = field(default_factory=dict)
    events: list[tuple[str, str]] = field(default_factory=list)
    orders: list[dict[str, Any]] = field(default_factory=list)  # the order after each change
    status: dict[str, str] = field(default_factory=dict)
    paid: set[str] = field(default_factory=set)

    @property
    def customer_ids(self) -> list[str]:
        return sorted({c for c, _ in self.customers})

    @property
    def skus(self) -> list[str]:
        return sorted({s for s, _ in self.products})

    def record(self, event_type: str, order: dict[str, Any]) -> None:
        total, currency = order["total_cents"], order["currency"]
        self.events.append((order["id"], event_type))
        self.orders.append(order)
        self.status[order["id"]] = order["status"]
        customer = self.customers.setdefault((order["customer_id"], currency), Counter())
        name = event_type.removeprefix("Order").lower()
        if event_type != "OrderShipped":
            customer[f"{name}_cents"] += total
        if event_type == "OrderPaid":
            self.paid.add(order["id"])
        if event_type == "OrderCancelled" and order["id"] in self.paid:
            customer["refunded_cents"] += total
        if event_type == "OrderPlaced":
            customer["orders_placed"] += 1
        if event_type in ("OrderPlaced", "OrderCancelled"):
            prefix = "placed" if event_type == "OrderPlaced" else "cancelled"
            day = day_of(order["updated_at"])  # the event's occurred_at
            for item in order["items"]:
                sku = item["sku"]
                for row in (
                    self.products.setdefault((sku, currency), Counter()),
                    self.daily_products.setdefault((day, sku, currency), Counter()),
                ):
                    row[f"units_{prefix}"] += item["quantity"]
                    row[f"{prefix}_cents"] += item["quantity"] * item["unit_price_cents"]


LIVES: tuple[list[str], ...] = ([], ["pay"], ["pay", "ship"], ["cancel"], ["pay", "cancel"])


def post_history(api: httpx.Client, run: str, expected: Expected, orders: int) -> list[str]:
    """Place `orders` orders and walk each through a random life; return their ids."""
    rng = random.Random(run)
    customers = [f"e2e-{run}-c{i}" for i in range(4)]
    skus = [f"E2E-{run}-S{i}" for i in range(5)]
    ids = []
    for _ in range(orders):
        items = [
            {"sku": sku, "quantity": rng.randint(1, 5), "unit_price_cents": rng.randint(0, 5000)}
            for sku in rng.sample(skus, rng.randint(1, 3))
        ]
        order = place(api, rng.choice(customers), rng.choice(["EUR", "USD", "JPY"]), items)
        expected.record("OrderPlaced", order)
        for action in rng.choice(LIVES):
            order = act(api, order["id"], action)
            expected.record(EVENT_OF_ACTION[action], order)
        ids.append(order["id"])
    return ids
