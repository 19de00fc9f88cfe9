"""`onceflow-ops dead-letters` on the stack's Postgres and Kafka, run as operators run it (the
installed command, in a process of its own): each stage's dead letters are listed and shown
raw; an aggregation dead letter replayed after correction is counted once in every analytics
table and the ledger, and replayed again it is still counted once; an invalid replay, an
unknown id or a notifications replay is one readable sentence, exit 1, and changes nothing.

Isolation from the stack: a scratch database (migrated here, dropped afterwards), a topic name
of its own for the aggregation stage, a scratch dead-letter topic for the notifications stage.
The dead letters are written as each stage writes them: a row of analytics.dead_letters, a
record of the dead-letter topic (transactional, with the processor's headers)."""

import base64
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from onceflow.settings import get_settings
from services.ops.fingerprint import fingerprint
from stack.waiting import port_open
from tests.integration.aggregation.history import Record, create_topic, delete_topic, produce
from tests.integration.databases import create_database, drop_database
from tests.oracle.events import event

pytestmark = pytest.mark.integration
OPS = Path(sys.executable).parent / "onceflow-ops"
NUL_REASON = "order.customer_id contains U+0000"


class Scratch:
    """A migrated scratch database and the topic names the command is pointed at."""

    def __init__(self, tmp: Path) -> None:
        self.id = uuid.uuid4().hex[:10]
        self.database = f"dead_letters_{self.id}"
        self.topic = f"dl-test-{self.id}"
        self.dlq = f"dl-test-{self.id}.dlq"
        self.tmp = tmp
        self.settings = create_database(self.database)

    def run(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        """`onceflow-ops dead-letters ARGS` against the scratch database and topics."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("ONCEFLOW_") or k == "ONCEFLOW_TOPOLOGY"
        }
        env.update(
            # The scratch topics are the tests principal's (docs/security.md).
            ONCEFLOW_KAFKA_PRINCIPAL="tests",
            ONCEFLOW_PG_DATABASE=self.database,
            ONCEFLOW_TOPIC=self.topic,
            ONCEFLOW_NOTIFY_DLQ_TOPIC=self.dlq,
        )
        done = subprocess.run(
            [str(OPS), "dead-letters", *args], env=env, capture_output=True, timeout=120
        )
        assert b"Traceback" not in done.stderr + done.stdout, done.stderr.decode()
        return done

    def ok(self, *args: str) -> Any:
        """The command's JSON document (it must succeed)."""
        done = self.run(*args, "--json")
        assert done.returncode == 0, done.stderr.decode()
        return json.loads(done.stdout)

    def refused(self, *args: str) -> str:
        """The one sentence a refused command says (exit 1, nothing on stdout)."""
        done = self.run(*args)
        assert done.returncode == 1, (done.stdout + done.stderr).decode()
        assert done.stdout == b""
        said = " ".join(done.stderr.decode().split())
        assert said.count(" failed: ") == 1, said
        return said

    def file(self, value: bytes) -> str:
        path = self.tmp / f"value-{uuid.uuid4().hex[:8]}.json"
        path.write_bytes(value)
        return str(path)

    def dead_letter(self, offset: int, key: bytes | None, value: bytes | None, error: str) -> str:
        """An aggregation dead letter at (partition 1, `offset`), as the job writes it; its id."""
        with psycopg.connect(self.settings.dsn("spark")) as conn:
            conn.execute(
                "INSERT INTO analytics.dead_letters"
                " (topic, kafka_partition, kafka_offset, key, value, error)"
                " VALUES (%s, 1, %s, %s, %s, %s)",
                (self.topic, offset, key, value, error),
            )
        return f"aggregation:{self.topic}:1:{offset}"

    def query(self, sql: str, *params: object) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.settings.dsn("owner")) as conn:
            return conn.execute(sql, params).fetchall()

    def snapshot(self) -> dict[str, list[str]]:
        """Every row of every table of analytics and the job's bookkeeping (partitions through
        their parents; not the staging area)."""
        tables = self.query(
            "SELECT n.nspname || '.' || c.relname FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname IN ('analytics', 'aggregation') AND c.relkind IN ('r', 'p')"
            " AND NOT c.relispartition AND c.relname <> 'staged_records'"
        )
        return {
            name: [r[0] for r in self.query(f"SELECT to_jsonb(t)::text FROM {name} t")]
            for (name,) in tables
        }


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Scratch]:
    settings = get_settings()
    host, port = settings.kafka_bootstrap.split(",")[0].rsplit(":", 1)
    assert port_open(host, int(port)), f"no Kafka at {settings.kafka_bootstrap}: run `make up`"
    s = Scratch(tmp_path)
    yield s
    drop_database(s.database)


def placed(customer: str) -> dict[str, Any]:
    """A valid OrderPlaced of `customer`: 2 x SKU-1 at 12.50, 1 x SKU-2 at 1.00 (EUR 26.00)."""
    return event("OrderPlaced", order={"customer_id": customer})


def encoded(e: dict[str, Any]) -> tuple[bytes, bytes]:
    return e["order"]["id"].encode(), json.dumps(e).encode()


def with_nul(value: bytes, customer: str) -> bytes:
    """The same record with a NUL inside the customer id: not a valid v1 event."""
    return value.replace(
        f'"{customer}"'.encode(), f'"{customer[:2]}\\u0000{customer[2:]}"'.encode()
    )


def counted(s: Scratch, e: dict[str, Any]) -> dict[str, Any]:
    """Where the event is counted: what every analytics table and the ledger hold of it."""
    customer = e["order"]["customer_id"]
    return {
        "customer_sales": s.query(
            "SELECT orders_placed, placed_cents FROM analytics.customer_sales"
            " WHERE customer_id = %s",
            customer,
        ),
        "daily_sales": s.query(
            "SELECT day::text, currency, orders_placed, placed_cents FROM analytics.daily_sales"
        ),
        "product_sales": s.query(
            "SELECT sku, units_placed, placed_cents FROM analytics.product_sales ORDER BY sku"
        ),
        "order_state": s.query("SELECT order_id, status FROM aggregation.order_state"),
        "freshness": s.query("SELECT stream, events_applied FROM analytics.freshness"),
        "applied_events": s.query(
            "SELECT event_id::text, query_id, batch_id, kafka_partition, kafka_offset"
            " FROM aggregation.applied_events"
        ),
        "ledger": s.query(
            "SELECT query_id, batch_id, topic, records, events_new FROM aggregation.applied_batches"
        ),
    }


def once(s: Scratch, e: dict[str, Any], offset: int) -> dict[str, Any]:
    """What `counted` holds when the event was counted once, by batch 0 of query `replay`."""
    return {
        "customer_sales": [(1, 2600)],
        "daily_sales": [("2026-11-22", "EUR", 1, 2600)],
        "product_sales": [("SKU-1", 2, 2500), ("SKU-2", 1, 100)],
        "order_state": [(e["order"]["id"], "PLACED")],
        "freshness": [(s.topic, 1)],
        "applied_events": [(e["event_id"], "replay", 0, 1, offset)],
        "ledger": [("replay", 0, s.topic, 1, 1)],
    }


def test_a_corrected_replay_is_counted_once_and_a_second_replay_changes_nothing(
    scratch: Scratch,
) -> None:
    e = placed(f"c-{scratch.id}")
    key, good = encoded(e)
    ident = scratch.dead_letter(7, key, with_nul(good, e["order"]["customer_id"]), NUL_REASON)
    before = scratch.snapshot()

    said = scratch.refused("replay", ident)
    assert f"{ident} was not replayed, nothing changed: the stored record" in said
    assert "U+0000" in said
    assert scratch.snapshot() == before

    first = scratch.ok("replay", ident, "--value-file", scratch.file(good))
    assert first == {
        "id": ident,
        "event_id": e["event_id"],
        "event_type": "OrderPlaced",
        "counted": True,
        "batch_id": 0,
        "counted_by": None,
    }
    assert counted(scratch, e) == once(scratch, e, 7)
    after_first = scratch.snapshot()

    second = scratch.run("replay", ident, "--value-file", scratch.file(good))
    assert second.returncode == 0, second.stderr.decode()
    assert b"was already counted (batch 0 of query replay); nothing changed" in second.stdout
    assert scratch.snapshot() == after_first

    shown = scratch.ok("show", ident)
    assert shown["replayed_event_id"] == e["event_id"]
    assert shown["replay_batch_id"] == 0
    assert shown["replayed_at"] is not None
    assert base64.b64decode(shown["value"]["base64"]) != good  # the dead letter stays as it came


def test_a_replay_as_another_event_or_with_other_content_is_refused(scratch: Scratch) -> None:
    e = placed(f"c-{scratch.id}")
    key, good = encoded(e)
    ident = scratch.dead_letter(3, key, with_nul(good, e["order"]["customer_id"]), NUL_REASON)
    scratch.ok("replay", ident, "--value-file", scratch.file(good))
    remembered = scratch.query("SELECT fingerprint FROM aggregation.applied_events")
    assert remembered == [(fingerprint(e),)]
    # Another record of the same event id, valid, with other content: a conflicting copy.
    other_content = {**e, "occurred_at": "2026-11-21T08:00:00Z"}
    copy = scratch.dead_letter(4, key, json.dumps(other_content).encode(), "some reason")
    before = scratch.snapshot()

    other = {**e, "event_id": str(uuid.uuid4())}
    said = scratch.refused(
        "replay", ident, "--value-file", scratch.file(json.dumps(other).encode())
    )
    assert f"it was already replayed as event {e['event_id']}" in said
    not_json = scratch.refused("replay", ident, "--value-file", scratch.file(b"{not json"))
    assert "the corrected record is not a valid v1 event" in not_json
    conflict = scratch.refused("replay", copy)
    assert f"event {e['event_id']} was already counted (batch 0 of query replay) with other" in (
        conflict
    )
    assert scratch.snapshot() == before
    assert counted(scratch, e) == once(scratch, e, 3)


def test_a_dead_letter_valid_as_it_is_replays_once_and_its_copy_is_not_counted_again(
    scratch: Scratch,
) -> None:
    """A record a sink refused for a reason the checks did not see, delivered twice."""
    e = placed(f"c-{scratch.id}")
    key, good = encoded(e)
    refused = "value too long for type character varying(64)"
    first = scratch.dead_letter(11, key, good, refused)
    copy = scratch.dead_letter(12, key, good, refused)

    assert scratch.ok("replay", first)["counted"] is True
    after = scratch.snapshot()
    assert scratch.ok("replay", first)["counted"] is False
    again = scratch.ok("replay", copy)
    assert (again["counted"], again["counted_by"]) == (False, "batch 0 of query replay")
    assert counted(scratch, e) == once(scratch, e, 11)
    replays = scratch.query(
        "SELECT kafka_offset, replayed_event_id::text, replay_batch_id"
        " FROM analytics.dead_letters ORDER BY kafka_offset"
    )
    assert replays == [(11, e["event_id"], 0), (12, e["event_id"], None)]
    assert {k: v for k, v in scratch.snapshot().items() if k != "analytics.dead_letters"} == {
        k: v for k, v in after.items() if k != "analytics.dead_letters"
    }


def test_list_and_show_each_stage_raw(scratch: Scratch) -> None:
    e = placed(f"c-{scratch.id}")
    key, good = encoded(e)
    bad = with_nul(good, e["order"]["customer_id"])
    nul = scratch.dead_letter(5, key, bad, NUL_REASON)
    garbage = scratch.dead_letter(6, None, b"\xff\xfe not utf-8", "value is not UTF-8")
    create_topic(scratch.settings.kafka_bootstrap, scratch.dlq, partitions=1)
    try:
        headers: list[tuple[str, str | bytes | None]] = [
            ("error", NUL_REASON.encode()),
            ("sourcePartition", b"1"),
            ("sourceOffset", b"5"),
        ]
        produce(scratch.settings.kafka_bootstrap, scratch.dlq, [Record(key, bad, headers)])
        notified = "notifications:0:0"

        listed = scratch.ok("list")
        assert {d["id"] for d in listed["dead_letters"]} == {nul, garbage, notified}
        assert listed["notes"] == []
        assert sorted((g["stage"], g["reason"], g["count"]) for g in listed["reasons"]) == [
            ("aggregation", NUL_REASON, 1),
            ("aggregation", "value is not UTF-8", 1),
            ("notifications", NUL_REASON, 1),
        ]
        by_reason = scratch.ok("list", "--reason", "u+0000", "--stage", "aggregation")
        assert [d["id"] for d in by_reason["dead_letters"]] == [nul]
        assert scratch.ok("list", "--since", "2999-01-01")["dead_letters"] == []
        assert len(scratch.ok("list", "--limit", "1")["dead_letters"]) == 1
        table = scratch.run("list")
        assert table.returncode == 0
        assert all(i.encode() in table.stdout for i in (nul, garbage, notified))

        shown = scratch.ok("show", notified)
        assert base64.b64decode(shown["value"]["base64"]) == bad
        assert shown["error"] == NUL_REASON
        assert {h["name"]: h["value"]["text"] for h in shown["headers"]} == {
            "error": NUL_REASON,
            "sourcePartition": "1",
            "sourceOffset": "5",
        }
        assert scratch.run("show", nul, "--raw").stdout == bad
        printed = scratch.run("show", garbage).stdout.decode()
        assert "hex:fffe" in printed
        assert "(none)" in printed  # no key
        text = scratch.run("show", nul).stdout
        assert b"\x00" not in text
        assert b"\\u0000" in text  # the JSON escape the record holds, as it is

        said = scratch.refused("replay", notified)
        assert f"replay aggregation:{scratch.topic}:1:5 to count it" in said
        assert "docs/operations.md#dead-letters" in said
    finally:
        delete_topic(scratch.settings.kafka_bootstrap, scratch.dlq)


def test_unknown_ids_and_bad_input_are_one_sentence(scratch: Scratch) -> None:
    before = scratch.snapshot()
    missing = f"aggregation:{scratch.topic}:0:99"
    assert f"there is no dead letter {missing}" in scratch.refused("show", missing)
    good = scratch.file(encoded(placed("c-x"))[1])
    assert f"there is no aggregation dead letter {missing}" in scratch.refused(
        "replay", missing, "--value-file", good
    )
    # The scratch dead-letter topic does not exist: nothing was dead-lettered there yet.
    assert "there is no dead letter notifications:0:0" in scratch.refused(
        "show", "notifications:0:0"
    )
    assert "is not a dead-letter id" in scratch.refused("replay", "outbox.event.order:0:1")
    assert "neither a duration" in scratch.refused("list", "--since", "last week")
    assert scratch.ok("list") == {"dead_letters": [], "reasons": [], "notes": []}
    assert scratch.snapshot() == before


def test_an_event_older_than_the_horizon_is_not_replayed(scratch: Scratch) -> None:
    e = placed(f"c-{scratch.id}")  # occurred 2026-11-22T23:59:59.999999Z
    key, good = encoded(e)
    ident = scratch.dead_letter(8, key, good, "some reason")
    with psycopg.connect(scratch.settings.dsn("owner")) as conn:
        conn.execute("UPDATE aggregation.dedup_state SET forgotten_before = '2026-11-23T00:00Z'")
    before = scratch.snapshot()
    said = scratch.refused("replay", ident)
    assert "before the de-duplication horizon" in said
    assert "a second replay would count it twice" in said
    assert scratch.snapshot() == before
