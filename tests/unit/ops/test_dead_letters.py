"""`onceflow-ops dead-letters` without a stack: ids, --since, raw bytes, the list's filter, the
row a replay stages, and mistakes as one sentence before anything is read (the stages' dead
letters and the replay itself: tests/integration/ops/test_dead_letters.py)."""

import base64
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from onceflow import contract
from onceflow.events import parse
from services.ops import raw, replay_row
from services.ops.cli import app
from services.ops.dead_letters import (
    DeadLetter,
    DeadLetterError,
    Filter,
    Position,
    Stage,
    newest_first,
    parse_id,
    parse_since,
)
from services.ops.fingerprint import fingerprint, xxh64
from services.ops.notification_letters import refuse_replay
from services.ops.replay import valid_event
from spark_jobs.aggregation import staging
from tests.oracle.events import event

T0 = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def letter(
    stage: Stage,
    offset: int,
    error: str,
    at: datetime,
    headers: list[tuple[str, bytes | None]] | None = None,
) -> DeadLetter:
    topic = "outbox.event.order" if stage is Stage.AGGREGATION else "notifications.order.dlq"
    return DeadLetter(stage, topic, 1, offset, b"k", b"v", error, at, headers or [])


# ---------------------------------------------------------------------------- ids


@pytest.mark.parametrize(
    ("text", "position"),
    [
        (
            "aggregation:outbox.event.order:2:17",
            Position(Stage.AGGREGATION, "outbox.event.order", 2, 17),
        ),
        (" aggregation:agg-test_1:0:0 ", Position(Stage.AGGREGATION, "agg-test_1", 0, 0)),
        (
            "notifications:1:9007199254740993",
            Position(Stage.NOTIFICATIONS, None, 1, 9007199254740993),
        ),
    ],
)
def test_an_id_names_a_position(text: str, position: Position) -> None:
    assert parse_id(text) == position


@pytest.mark.parametrize(
    "text",
    [
        "",
        "bogus",
        "aggregation:2:17",
        "aggregation:outbox.event.order:2",
        "aggregation:outbox.event.order:-1:17",
        "aggregation:a:b:2:17",
        "notifications:x:1",
        "notifications:outbox.event.order:1:2",
        "spark:outbox.event.order:1:2",
    ],
)
def test_a_malformed_id_is_one_sentence_with_the_forms(text: str) -> None:
    with pytest.raises(DeadLetterError) as refused:
        parse_id(text)
    message = str(refused.value)
    assert "\n" not in message
    assert "aggregation:<topic>:<partition>:<offset>" in message
    assert "notifications:<partition>:<offset>" in message


@pytest.mark.parametrize("stage", list(Stage))
def test_every_letter_id_parses_back_to_its_position(stage: Stage) -> None:
    d = letter(stage, 42, "e", T0)
    position = parse_id(d.id)
    assert (position.stage, position.partition, position.offset) == (stage, 1, 42)
    assert position.topic == (d.topic if stage is Stage.AGGREGATION else None)


# ---------------------------------------------------------------------------- --since


@pytest.mark.parametrize(
    ("text", "ago"),
    [
        ("30s", timedelta(seconds=30)),
        ("30m", timedelta(minutes=30)),
        ("6h", timedelta(hours=6)),
        (" 2d", timedelta(days=2)),
        ("1w", timedelta(weeks=1)),
        ("0m", timedelta(0)),
    ],
)
def test_since_takes_a_duration_ago(text: str, ago: timedelta) -> None:
    assert parse_since(text, now=T0) == T0 - ago


def test_since_takes_an_iso_time_utc_unless_it_names_a_zone() -> None:
    assert parse_since("2026-11-25T10:00:00+02:00") == datetime(2026, 11, 25, 8, tzinfo=UTC)
    assert parse_since("2026-11-25T10:00") == datetime(2026, 11, 25, 10, tzinfo=UTC)
    assert parse_since("2026-11-25") == datetime(2026, 11, 25, tzinfo=UTC)


@pytest.mark.parametrize("text", ["yesterday", "5 minutes", "-3h", "3y", "", "2026-13-01"])
def test_a_bad_since_is_one_sentence(text: str) -> None:
    with pytest.raises(DeadLetterError, match="neither a duration") as refused:
        parse_since(text, now=T0)
    assert "\n" not in str(refused.value)


# ---------------------------------------------------------------------------- raw bytes


@pytest.mark.parametrize(
    ("data", "shown"),
    [
        (None, "(none)"),
        (b"", ""),
        (b'{"a": "b"}', '{"a": "b"}'),
        (b"c-\x00x", "c-\\x00x"),  # a raw NUL never reaches the terminal
        (b"line\nbreak\ttab\x1b[31m", "line\\x0abreak\\x09tab\\x1b[31m"),
        ("é€😀".encode(), "é€😀"),
        ("\u2028".encode(), "\\u2028"),
        (b"\xff\xfe", "hex:fffe"),  # not UTF-8
        (b"\xed\xa0\x80", "hex:eda080"),  # an encoded lone surrogate is not UTF-8 either
    ],
)
def test_raw_bytes_print_on_one_safe_line(data: bytes | None, shown: str) -> None:
    assert raw.printable(data) == shown


@pytest.mark.parametrize("data", [b'{"a": 1}', b"\x00\xff", b""])
def test_raw_bytes_in_json_lose_nothing(data: bytes) -> None:
    doc = raw.as_json(data)
    assert doc is not None
    assert base64.b64decode(doc["base64"]) == data
    assert doc["bytes"] == len(data)
    assert doc["text"] == raw.as_text(data)
    assert raw.as_json(None) is None


def test_json_gives_text_only_for_utf8() -> None:
    assert raw.as_text(b"\xff") is None
    assert raw.as_text("ü".encode()) == "ü"


# ---------------------------------------------------------------------------- the list


LETTERS = [
    letter(Stage.AGGREGATION, 1, "order.customer_id contains U+0000", T0 - timedelta(hours=3)),
    letter(Stage.AGGREGATION, 2, "schema_version is not 1", T0 - timedelta(minutes=5)),
    letter(Stage.NOTIFICATIONS, 3, "Order.Customer_ID contains U+0000", T0 - timedelta(hours=1)),
    letter(Stage.NOTIFICATIONS, 4, "value is not UTF-8 JSON", T0),
]


def offsets(wanted: Filter) -> list[int]:
    return [d.offset for d in newest_first(LETTERS, wanted)]


def test_the_list_is_newest_first_within_its_limit() -> None:
    assert offsets(Filter()) == [4, 2, 3, 1]
    assert offsets(Filter(limit=2)) == [4, 2]


def test_the_filter_keeps_a_stage_a_reason_and_a_time() -> None:
    assert offsets(Filter(stage=Stage.NOTIFICATIONS)) == [4, 3]
    assert offsets(Filter(reason="u+0000")) == [3, 1]  # any case
    assert offsets(Filter(since=T0 - timedelta(hours=1))) == [4, 2, 3]  # inclusive
    assert offsets(Filter(Stage.AGGREGATION, "U+0000", T0 - timedelta(hours=4), 1)) == [1]
    assert offsets(Filter(reason="no such reason")) == []


def test_a_summary_has_no_raw_bytes_and_the_detail_has_all() -> None:
    d = letter(Stage.AGGREGATION, 1, "e", T0, headers=[("id", b"x")])
    assert "value" not in d.summary()
    assert "key" not in d.summary()
    detail = d.detail()
    assert detail["value"] == raw.as_json(b"v")
    assert detail["headers"] == [{"name": "id", "value": raw.as_json(b"x")}]


# ---------------------------------------------------------------------------- replay


@pytest.mark.parametrize("event_type", [t.value for t in contract.EventType])
def test_a_replay_stages_the_row_the_job_stages(event_type: str) -> None:
    e = event(event_type, occurred_at="2026-11-23T01:30:00+02:00")
    value = json.dumps(e).encode()
    parsed = parse(e["order"]["id"].encode(), value, None)
    row = replay_row.staged_row(event=parsed, value=value, partition=2, offset=17)
    assert set(row) == set(staging.EVENTS.names)
    assert (row["kafka_partition"], row["kafka_offset"]) == (2, 17)
    assert row["day"].isoformat() == "2026-11-22"  # the UTC day
    assert row["status"] == e["order"]["status"]
    counted = event_type in ("OrderPlaced", "OrderCancelled")
    assert (row["items"] is not None) == counted
    if counted:
        assert row["items"].obj == e["order"]["items"]


@pytest.mark.parametrize(
    ("data", "seed", "expected"),
    [
        (b"", 0, 0xEF46DB3751D8E999),
        (b"a", 0, 0xD24EC4F1A98C6E5B),
        (b"abc", 0, 0x44BC2CF5AD770999),
        (b"Nobody inspects the spammish repetition", 0, 0xFBCEA83C8A378BF1),
    ],
)
def test_the_fingerprint_hash_is_xxh64(data: bytes, seed: int, expected: int) -> None:
    assert xxh64(data, seed) == expected


def test_the_fingerprint_is_a_bigint_of_the_content_not_the_text() -> None:
    e = event()
    value = fingerprint(e)
    assert -(2**63) <= value < 2**63
    assert fingerprint(json.loads(json.dumps(e, sort_keys=True, indent=2))) == value
    assert fingerprint({**e, "occurred_at": "2026-11-22T23:59:59Z"}) != value


def test_an_invalid_record_is_not_replayed_and_says_why_in_one_sentence() -> None:
    e = event(order={"customer_id": "c-\x00"})
    value = json.dumps(e).encode()
    for corrected, what in ((False, "the stored record"), (True, "the corrected record")):
        with pytest.raises(DeadLetterError) as refused:
            valid_event(
                ident="aggregation:t:0:1",
                key=e["order"]["id"].encode(),
                value=value,
                corrected=corrected,
                max_bytes=contract.MAX_EVENT_BYTES,
            )
        message = str(refused.value)
        assert "\n" not in message
        assert message.startswith(f"aggregation:t:0:1 was not replayed, nothing changed: {what}")
        assert "U+0000" in message
        assert "--value-file" in message


def test_a_notifications_replay_is_refused_naming_what_to_do() -> None:
    d = letter(
        Stage.NOTIFICATIONS,
        5,
        "e",
        T0,
        headers=[("error", b"e"), ("sourcePartition", b"2"), ("sourceOffset", b"40")],
    )
    with pytest.raises(DeadLetterError) as refused:
        refuse_replay(d, topic="outbox.event.order")
    message = str(refused.value)
    assert "\n" not in message
    assert "replay aggregation:outbox.event.order:2:40" in message
    assert "docs/operations.md#dead-letters" in message


# ---------------------------------------------------------------------------- the command


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["show", "bogus"], "is not a dead-letter id"),
        (["replay", "aggregation:t:1"], "is not a dead-letter id"),
        (["list", "--since", "yesterday"], "neither a duration"),
        (
            ["replay", "aggregation:t:1:2", "--value-file", "/nonexistent/v.json"],
            "cannot read /nonexistent/v.json",
        ),
    ],
)
def test_mistakes_are_one_sentence_before_anything_is_read(args: list[str], said: str) -> None:
    result = CliRunner().invoke(app, ["dead-letters", *args])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert said in result.stderr
    assert "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) <= 2  # one sentence, wrapped at most once


def test_a_value_file_that_is_a_folder_is_one_sentence(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["dead-letters", "replay", "aggregation:t:1:2", "--value-file", str(tmp_path)]
    )
    assert result.exit_code == 1
    assert "cannot read" in result.stderr
