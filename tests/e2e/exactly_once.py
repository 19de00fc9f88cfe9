"""The end-to-end oracle: every change a test made through the API is on the topic once
(read_committed, read to its end), is counted exactly once in every analytics table, is in the
de-duplication set once and in order_state as its latest status, and became exactly one
notification.

It holds with other writers present: the test's own customers, skus and orders are compared
directly; the global tables (daily_sales, freshness) must have gained exactly what the events
the job counted since the baseline add up to, each event read back from the topic at the
position the de-duplication set names.
"""

import json
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import psycopg

from onceflow.settings import Settings, get_notification_settings
from tests.e2e import analytics, ledger
from tests.e2e.kafka_reader import Event, Record, TopicReader, read_events
from tests.e2e.orders import Expected, daily_gain, day_of

K = TypeVar("K")


@dataclass(frozen=True)
class Baseline:
    """The analytics tables and bookkeeping before the test's orders (taken after a barrier)."""

    snapshot: ledger.Snapshot


@contextmanager
def _owner(settings: Settings) -> Iterator[analytics.Conn]:
    with psycopg.connect(settings.dsn("owner"), autocommit=True) as conn:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        yield conn


def baseline(settings: Settings) -> Baseline:
    with _owner(settings) as conn, conn.transaction():
        return Baseline(ledger.snapshot(conn))


def _diff(name: str, actual: Any, expected: Any) -> list[str]:
    if actual == expected:
        return []
    if isinstance(actual, dict) and isinstance(expected, dict):
        keys = sorted(set(actual) | set(expected), key=str)
        rows = [f"  {k}: {actual.get(k)} != {expected.get(k)}" for k in keys]
        wrong = [r for r, k in zip(rows, keys, strict=True) if actual.get(k) != expected.get(k)]
        return [f"{name} (actual != expected):", *wrong]
    return [f"{name}: {actual!r} != {expected!r}"]


def _gained(after: Counter[K], before: Counter[K]) -> Counter[K]:
    gained = Counter(after)
    gained.subtract(before)
    return Counter({k: v for k, v in gained.items() if v})


def _analytics_problems(
    conn: analytics.Conn,
    expected: Expected,
    before: Baseline,
    records: dict[ledger.Position, Record],
) -> list[str]:
    """Everything the analytics tables and bookkeeping get wrong now, in one snapshot."""
    ids = [o["id"] for o in expected.orders]
    with conn.transaction():
        now = ledger.snapshot(conn)
        counted = ledger.counted_since(conn, before.snapshot.batches)
        problems = [
            *_diff(
                "customer_sales",
                analytics.customer_sales(conn, expected.customer_ids),
                expected.customers,
            ),
            *_diff(
                "product_sales",
                analytics.product_sales(conn, expected.skus),
                expected.products,
            ),
            *_diff(
                "daily_product_sales",
                analytics.daily_product_sales(conn, expected.skus),
                expected.daily_products,
            ),
            *_diff("order_state", ledger.order_states(conn, ids), expected.status),
            *_diff("order_status_counts vs order_state", now.status_view, now.status_of_states),
        ]
        event_ids = _test_event_ids(records, set(expected.status))
        problems += _diff(
            "de-duplication set (test events)",
            ledger.remembered(conn, event_ids),
            Counter({e: 1 for e in event_ids}),
        )
    late = now.late - before.snapshot.late
    positions = [c.position for c in counted] + sorted(late)
    missing = [p for p in positions if p not in records]
    if missing:
        return [*problems, f"{len(missing)} counted records not read from the topic yet"]
    daily: Counter[tuple[str, str, str]] = Counter()
    paid = _paid_orders(records)
    for position in positions:
        daily.update(_daily_gain(records[position], paid))  # + would drop negatives
    mine = Counter(e for e in event_ids)
    problems += _diff(
        "test events counted since the baseline",
        Counter(c.event_id for c in counted if c.event_id in mine),
        mine,
    )
    expected_daily = Counter({k: v for k, v in daily.items() if v})
    problems += _diff(
        "daily_sales gained", _gained(now.daily, before.snapshot.daily), expected_daily
    )
    problems += _diff(
        "freshness.events_applied gained",
        now.events_applied - before.snapshot.events_applied,
        len(positions),
    )
    return problems


def _paid_orders(records: dict[ledger.Position, Record]) -> set[str]:
    """The orders with an OrderPaid on the topic (by the connector's eventType header)."""
    return {
        r.key.decode()
        for r in records.values()
        if r.key is not None and ("eventType", b"OrderPaid") in r.headers
    }


def _daily_gain(record: Record, paid: set[str]) -> Counter[tuple[str, str, str]]:
    """What the counted `record` adds to daily_sales; a cancellation of an order of `paid` is
    a refund."""
    value = json.loads(record.value or b"{}")
    order = value["order"]
    day = day_of(value["occurred_at"])
    refund = value["event_type"] == "OrderCancelled" and order["id"] in paid
    return daily_gain(
        value["event_type"], day, order["currency"], order["total_cents"], refund=refund
    )


def _test_event_ids(records: dict[ledger.Position, Record], order_ids: set[str]) -> list[str]:
    return [
        json.loads(r.value or b"{}")["event_id"]
        for r in records.values()
        if r.key is not None and r.key.decode() in order_ids
    ]


def assert_exactly_once(
    settings: Settings, expected: Expected, before: Baseline, *, timeout: float = 180
) -> None:
    """Wait until every comparison holds, or fail after `timeout` with all that differs."""
    records = assert_counted_once(settings, expected, before, timeout=timeout)
    events = [
        Event(
            r.key.decode(),
            {n: (v or b"").decode() for n, v in r.headers},
            json.loads(r.value or b"{}"),
            r.partition,
            r.offset,
        )
        for r in records.values()
        if r.key is not None and r.key.decode() in expected.status
    ]
    _assert_on_topic_once(expected, events)
    assert_notified_once(
        settings.kafka_bootstrap,
        get_notification_settings().notify_topic,
        events,
        expected.customer_ids,
        timeout,
    )


def assert_counted_once(
    settings: Settings, expected: Expected, before: Baseline, *, timeout: float
) -> dict[ledger.Position, Record]:
    """Wait until the analytics tables and bookkeeping hold exactly the expected changes, or
    fail after `timeout` with all that differs; then read the topic to its end (the pipeline is
    quiet for the test's orders, so its tail holds any duplicate). Returns the topic's records."""
    deadline = time.monotonic() + timeout
    reader = TopicReader(settings.kafka_bootstrap, [settings.topic])
    records: dict[ledger.Position, Record] = {}
    try:
        with _owner(settings) as conn:
            while True:
                for r in reader.read_to(reader.high_watermarks(), deadline):
                    records[(r.partition, r.offset)] = r
                problems = _analytics_problems(conn, expected, before, records)
                if not problems or time.monotonic() >= deadline:
                    break
                time.sleep(1)
        assert not problems, "the analytics tables never matched:\n" + "\n".join(problems)
        for r in reader.read_to(reader.high_watermarks(), deadline + 60):
            records[(r.partition, r.offset)] = r
    finally:
        reader.close()
    return records


def _assert_on_topic_once(expected: Expected, events: list[Event]) -> None:
    """The topic holds each change once, as the API answered it, each order in one partition."""
    assert Counter((e.key, e.value["event_type"]) for e in events) == Counter(expected.events)
    assert all(count == 1 for count in Counter(e.headers["id"] for e in events).values())
    for event in events:
        assert event.headers["id"] == event.value["event_id"]
        assert event.headers["eventType"] == event.value["event_type"]
        assert event.value["order"]["id"] == event.key
        assert event.value["schema_version"] == 1
    written = sorted(json.dumps(o, sort_keys=True) for o in expected.orders)
    published = sorted(json.dumps(e.value["order"], sort_keys=True) for e in events)
    assert published == written, "an event's order differs from what the API answered"
    partitions: dict[str, set[int]] = defaultdict(set)
    for e in events:
        partitions[e.key].add(e.partition)
    for order_id in expected.status:
        assert len(partitions[order_id]) == 1


def assert_notified_once(
    bootstrap: str, topic: str, events: list[Event], customers: list[str], timeout: float
) -> None:
    """Each event has exactly one notification on `topic` (contract 4b), each order's in event
    order."""
    notifications = read_events(
        bootstrap,
        topic,
        keys=customers,
        expected=len(events),
        timeout=timeout,
    )
    notified = Counter(n.value["event_id"] for n in notifications)
    assert notified == Counter(e.value["event_id"] for e in events)
    # Grouped once: one pass per order over every event was minutes of CPU at ~20,000 events.
    sent: dict[str, list[str]] = defaultdict(list)
    for e in sorted(events, key=lambda e: e.offset):
        sent[e.key].append(e.value["event_id"])
    received: dict[str, list[str]] = defaultdict(list)
    for n in notifications:
        received[n.value["order_id"]].append(n.value["event_id"])
    for order_id, event_ids in sent.items():
        assert received[order_id] == event_ids
