"""On the real broker: a copy of a notified event id with other content is a dead letter
("event id reused with different content"; also after a restart that knows the ids only from
the changelog), an exact re-delivery in other bytes is a silent duplicate, and a notification
the output topic refuses (larger than its max.message.bytes) is its record's dead letter while
the rest of the batch is notified exactly once."""

import json
import urllib.request
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from onceflow.event_definition import REUSED_ID
from services.notifications.transform import Notification, Record, route
from stack import topics
from stack.waiting import wait_for
from tests.integration.notifications.harness import (
    Input,
    Instance,
    Scratch,
    check,
    read_output,
    wait_caught_up,
)
from tests.oracle import events as oracle

TIMEOUT = 120
# A record batch's header, and a bound of one record's framing (varints, attributes).
BATCH_OVERHEAD = 61 + 16


def changed(r: oracle.Record, **changes: Any) -> oracle.Record:
    """The record `r` with fields of its event changed (same key, headers and event id)."""
    key, value, *rest = r
    return (key, json.dumps({**json.loads(value), **changes}).encode(), *rest)


def reserialised(r: oracle.Record) -> oracle.Record:
    """The same event in other bytes: keys sorted, indented."""
    key, value, *rest = r
    return (key, json.dumps(json.loads(value), sort_keys=True, indent=1).encode(), *rest)


def send_conflict(source: Input, r: oracle.Record, **changes: Any) -> None:
    copy = changed(r, **changes)
    source.send(copy)
    source.poison[copy[1]] = REUSED_ID


def conflicts_counted(scratch: Scratch, n: int) -> float:
    url = f"http://127.0.0.1:{scratch.port_base + n}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    name = "onceflow_notifications_conflicting_duplicates_total"
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name))


def wait_counted(scratch: Scratch, n: int, *, conflicts: int) -> None:
    """Wait until instance n's metric counts `conflicts` (it counts after its commit); fail at
    once on more."""

    def counted() -> bool:
        value = conflicts_counted(scratch, n)
        assert value <= conflicts
        return value == conflicts

    wait_for(counted, what=f"{conflicts} conflicting duplicates counted", timeout=30)


def test_an_event_id_reused_with_other_content_is_a_dead_letter(
    scratch: Scratch, tmp_path: Path
) -> None:
    source = Input(scratch)
    for _ in range(40):
        source.order(events=3)
    first, second = source.sent[0], source.sent[1]
    source.send(reserialised(first))  # an exact re-delivery: nothing new
    send_conflict(source, first, occurred_at="2026-11-22T10:00:00Z")  # another occurred_at
    order = {**json.loads(second[1])["order"], "updated_at": "2026-11-22T10:00:00Z"}
    send_conflict(source, second, order=order)  # the same occurred_at, another order
    one = Instance(scratch, 1, tmp_path / "1.log")
    check(scratch, source)
    wait_counted(scratch, 1, conflicts=2)
    assert one.stop() == 0
    # A later batch, read by an instance without a local cache (the ids and their contents
    # come from the changelog): every event again in other bytes, and one more conflict.
    for r in source.sent:
        source.send(reserialised(r))
    send_conflict(source, source.sent[5], occurred_at="2026-11-22T10:00:01Z")
    two = Instance(scratch, 2, tmp_path / "2.log")
    check(scratch, source)
    wait_counted(scratch, 2, conflicts=1)
    assert two.stop() == 0


def framed(record: oracle.Record) -> int:
    """The bytes the notification of `record` takes in a record batch of its own (about)."""
    key, value, _topic, _partition, _offset, headers = record
    out = route(Record(key, value, headers, 0, 0), oracle.MAX)
    assert isinstance(out, Notification)
    sizes = [len(n) + len(v or b"") for n, v in out.headers]
    return BATCH_OVERHEAD + len(out.key) + len(out.value) + sum(sizes)


def test_a_notification_larger_than_the_output_topic_takes_is_a_dead_letter(
    scratch: Scratch, tmp_path: Path
) -> None:
    source = Input(scratch)
    for _ in range(40):
        source.order(events=3)
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    customer = "c-" + "x" * 62  # the longest customer id: the largest notification
    big = oracle.record(
        oracle.event(order={"id": str(uuid.uuid4()), "customer_id": customer}, occurred_at=now)
    )
    limit = (framed(source.sent[0]) + framed(big)) // 2
    assert framed(source.sent[0]) < limit - 30 < limit + 30 < framed(big)
    topic = scratch.notify.notify_topic
    topics.ensure_topics(
        scratch.settings.kafka_bootstrap,
        [topics.Topic(topic, {"max.message.bytes": str(limit)})],
    )
    source.send(big)
    for _ in range(10):
        source.order(events=2)
    source.flush()
    one = Instance(scratch, 1, tmp_path / "1.log")
    wait_caught_up(scratch, TIMEOUT)
    out = read_output(scratch, notifications=len(source.event_ids), dead=1, timeout=TIMEOUT)
    notified = [n["event_id"] for n in out.notifications]
    assert sorted(notified) == sorted(source.event_ids)
    ((value, headers),) = out.dead_letters
    assert value == big[1]
    assert headers["error"].startswith(f"{topic} refused the notification: ")
    assert "too large" in headers["error"].lower()
    assert one.stop() == 0
