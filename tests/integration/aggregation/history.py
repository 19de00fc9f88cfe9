"""Generated order histories as contract-section-4 records, and an independent oracle.

The oracle computes every analytics table in plain Python from the events the test made, so a
test can compare Postgres against it row by row. Also used by bench/.
"""

import contextlib
import json
import random
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from onceflow import contract
from onceflow.settings.kafka_auth import client_config

CURRENCIES = contract.DEFAULT_CURRENCIES
STATUS = {event.value: status.value for event, status in contract.STATUS_AFTER.items()}
RANK = {status.value: rank for status, rank in contract.STATUS_RANK.items()}


@dataclass(frozen=True)
class Record:
    """One Kafka record: key, value and headers exactly as the connector writes them."""

    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, str | bytes | None]] = field(default_factory=list)


@dataclass(frozen=True)
class Event:
    """A valid order event and the record carrying it."""

    event_id: str
    event_type: str
    occurred_at: datetime
    order: dict[str, Any]

    def record(self) -> Record:
        value = {
            "event_id": self.event_id,
            "event_type": self.event_type,
            "schema_version": contract.SCHEMA_VERSION,
            "occurred_at": iso(self.occurred_at),
            "order": self.order,
        }
        return Record(
            key=self.order["id"].encode(),
            value=json.dumps(value).encode(),
            headers=[("id", self.event_id.encode()), ("eventType", self.event_type.encode())],
        )


def iso(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def order_events(
    rng: random.Random,
    placed_at: datetime,
    customers: Sequence[str],
    skus: Sequence[str],
) -> list[Event]:
    """One order's life: placed, then maybe paid, then shipped or cancelled."""
    order_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    items: list[dict[str, Any]] = [
        {
            "sku": sku,
            "quantity": rng.randint(1, 5),
            "unit_price_cents": rng.choice((0, 99, 1250, 49999)),
        }
        for sku in rng.sample(list(skus), rng.randint(1, 3))
    ]
    total = sum(i["quantity"] * i["unit_price_cents"] for i in items)
    order = {
        "id": order_id,
        "customer_id": rng.choice(customers),
        "currency": rng.choice(CURRENCIES),
        "status": "PLACED",
        "total_cents": total,
        "created_at": iso(placed_at),
        "updated_at": iso(placed_at),
        "items": items,
    }
    path = ["OrderPlaced"]
    roll = rng.random()
    if roll < 0.55:
        path.append("OrderPaid")
        if rng.random() < 0.7:
            path.append("OrderShipped")
        elif rng.random() < 0.3:
            path.append("OrderCancelled")
    elif roll < 0.75:
        path.append("OrderCancelled")
    events = []
    at = placed_at
    for event_type in path:
        # Later changes may land on a later UTC day (hours apart).
        if event_type != "OrderPlaced":
            at = at + timedelta(minutes=rng.choice((0, 1, 30, 600, 1500)))
        current = {**order, "status": STATUS[event_type], "updated_at": iso(at)}
        event_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        events.append(Event(event_id, event_type, at, current))
    return events


def make_history(
    n_orders: int,
    *,
    seed: int = 7,
    start: datetime = datetime(2026, 11, 20, 21, 0, tzinfo=UTC),
    days: int = 3,
    n_customers: int = 40,
    n_skus: int = 25,
) -> list[Event]:
    """Events of n_orders orders placed across `days` days, each order's events in order."""
    rng = random.Random(seed)
    customers = [f"c-{seed}-{i}" for i in range(n_customers)]
    skus = [f"SKU-{seed}-{i}" for i in range(n_skus)]
    span = days * 86_400
    events: list[Event] = []
    for _ in range(n_orders):
        placed_at = start + timedelta(seconds=rng.uniform(0, span))
        events.extend(order_events(rng, placed_at, customers, skus))
    return events


def interleave(events: Sequence[Event], seed: int = 1) -> list[Event]:
    """A produce order that keeps each order's events in order but mixes orders."""
    rng = random.Random(seed)
    by_order: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by_order[e.order["id"]].append(e)
    queues = [list(reversed(v)) for v in by_order.values()]
    out: list[Event] = []
    while queues:
        i = rng.randrange(len(queues))
        out.append(queues[i].pop())
        if not queues[i]:
            queues[i] = queues[-1]
            queues.pop()
    return out


def expected_tables(events: Iterable[Event]) -> dict[str, Any]:
    """Every analytics table, computed independently, from distinct valid events: every money
    table per currency; a refund is a cancellation of an order that has a counted OrderPaid."""
    distinct: dict[str, Event] = {}
    for e in events:
        distinct.setdefault(e.event_id, e)
    paid = {e.order["id"] for e in distinct.values() if e.event_type == "OrderPaid"}
    daily: dict[tuple[date, str], Counter[str]] = defaultdict(Counter)
    customer: dict[tuple[str, str], dict[str, Any]] = {}
    product: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    daily_product: dict[tuple[date, str, str], Counter[str]] = defaultdict(Counter)
    latest: dict[str, tuple[datetime, int, str]] = {}
    for e in distinct.values():
        o = e.order
        currency, total = o["currency"], o["total_cents"]
        kind = STATUS[e.event_type].lower()
        day = e.occurred_at.astimezone(UTC).date()
        d = daily[(day, currency)]
        d[f"orders_{kind}"] += 1
        d[f"{kind}_cents"] += total
        c = customer.setdefault(
            (o["customer_id"], currency),
            {
                "orders_placed": 0,
                "placed_cents": 0,
                "paid_cents": 0,
                "cancelled_cents": 0,
                "refunded_cents": 0,
                "first_order_at": None,
                "last_order_at": None,
            },
        )
        if kind in ("placed", "paid", "cancelled"):
            c[f"{kind}_cents"] += total
        if kind == "cancelled" and o["id"] in paid:
            d["refunded_cents"] += total
            c["refunded_cents"] += total
        if kind == "placed":
            c["orders_placed"] += 1
            c["first_order_at"] = min(filter(None, (c["first_order_at"], e.occurred_at)))
            c["last_order_at"] = max(filter(None, (c["last_order_at"], e.occurred_at)))
        if kind in ("placed", "cancelled"):
            for item in o["items"]:
                for p in (
                    product[(item["sku"], currency)],
                    daily_product[(day, item["sku"], currency)],
                ):
                    p[f"units_{kind}"] += item["quantity"]
                    p[f"{kind}_cents"] += item["quantity"] * item["unit_price_cents"]
        key = (e.occurred_at, RANK[o["status"]], o["status"])
        if o["id"] not in latest or key > latest[o["id"]]:
            latest[o["id"]] = key
    for d in daily.values():
        d["net_paid_cents"] = d["paid_cents"] - d["refunded_cents"]
    status_counts = Counter(v[2] for v in latest.values())
    return {
        "daily_sales": {k: dict(v) for k, v in daily.items()},
        "customer_sales": customer,
        "product_sales": {k: dict(v) for k, v in product.items()},
        "daily_product_sales": {k: dict(v) for k, v in daily_product.items()},
        "order_status_counts": {s: status_counts.get(s, 0) for s in RANK},
        "events": len(distinct),
        "last_event_at": max((e.occurred_at for e in distinct.values()), default=None),
    }


# ---------------------------------------------------------------------------- Kafka helpers


def create_topic(bootstrap: str, topic: str, partitions: int = 3) -> None:
    admin = AdminClient(client_config(bootstrap, "tests"))
    futures = admin.create_topics(
        # -1: the broker's default replication (3 on the cluster topology, whose min ISR is 2).
        [NewTopic(topic, num_partitions=partitions, replication_factor=-1)]
    )
    for future in futures.values():
        future.result(timeout=30)


def delete_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient(client_config(bootstrap, "tests"))
    for future in admin.delete_topics([topic]).values():
        with contextlib.suppress(Exception):  # already gone
            future.result(timeout=30)


def produce(
    bootstrap: str,
    topic: str,
    records: Iterable[Record],
    *,
    transactional: bool = True,
    per_transaction: int = 1000,
) -> int:
    """Produce records (keyed, with headers), committing a Kafka transaction every N records."""
    config: dict[str, Any] = {
        **client_config(bootstrap, "tests"),
        "linger.ms": 5,
        "enable.idempotence": True,
        "compression.type": "lz4",
        "batch.size": 1_000_000,
    }
    if transactional:
        config["transactional.id"] = f"onceflow-test-{uuid.uuid4()}"
    producer = Producer(config)
    if transactional:
        producer.init_transactions(30)
        producer.begin_transaction()
    n = 0
    for r in records:
        while True:
            try:
                producer.produce(topic, key=r.key, value=r.value, headers=r.headers or None)
                break
            except BufferError:
                producer.poll(0.1)
        n += 1
        if transactional and n % per_transaction == 0:
            producer.commit_transaction(60)
            producer.begin_transaction()
        elif n % 10_000 == 0:
            producer.poll(0)
    if transactional:
        producer.commit_transaction(60)
    remaining = producer.flush(60)
    assert remaining == 0, f"{remaining} records were not delivered"
    return n
