"""The dead letters of every stage, as ops see them (contract 4c; docs/operations.md, "Dead
letters"), each named by an id that `show` and `replay` accept:

- `aggregation:<topic>:<partition>:<offset>`: a row of analytics.dead_letters, named by the
  position of the bad record on the order topic (the table's key);
- `notifications:<partition>:<offset>`: a record of the notifications dead-letter topic, named
  by its position there (its headers sourcePartition/sourceOffset give the input position).

Kafka topic names cannot hold `:`, so an id splits unambiguously.
"""

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from services.ops import raw


class Stage(StrEnum):
    """A stage that keeps dead letters."""

    AGGREGATION = "aggregation"
    NOTIFICATIONS = "notifications"


class DeadLetterError(ValueError):
    """A request ops can fix (an unknown id, a refused replay): said in one sentence."""


@dataclass(frozen=True)
class DeadLetter:
    """One dead letter: where it is, the raw record, why, when, and whether it was replayed."""

    stage: Stage
    topic: str  # the topic it came from (aggregation) or the dead-letter topic (notifications)
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    error: str
    at: datetime  # received (aggregation) or the dead letter's Kafka timestamp (notifications)
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    replayed_at: datetime | None = None
    replayed_event_id: str | None = None
    replay_batch_id: int | None = None

    @property
    def id(self) -> str:
        """The id `show` and `replay` accept."""
        if self.stage is Stage.AGGREGATION:
            return f"aggregation:{self.topic}:{self.partition}:{self.offset}"
        return f"notifications:{self.partition}:{self.offset}"

    def summary(self) -> dict[str, Any]:
        """What `list --json` shows of it (no raw bytes)."""
        return {
            "id": self.id,
            "stage": str(self.stage),
            "topic": self.topic,
            "partition": self.partition,
            "offset": self.offset,
            "error": self.error,
            "at": self.at,
            "replayed_at": self.replayed_at,
        }

    def detail(self) -> dict[str, Any]:
        """What `show --json` shows: the summary, the raw key, value and headers, the replay."""
        return {
            **self.summary(),
            "key": raw.as_json(self.key),
            "value": raw.as_json(self.value),
            "headers": [{"name": name, "value": raw.as_json(v)} for name, v in self.headers],
            "replayed_event_id": self.replayed_event_id,
            "replay_batch_id": self.replay_batch_id,
        }


@dataclass(frozen=True)
class Position:
    """A parsed dead-letter id."""

    stage: Stage
    topic: str | None  # None for notifications (the dead-letter topic of the settings)
    partition: int
    offset: int


_ID = re.compile(
    r"(?:aggregation:(?P<topic>[A-Za-z0-9._-]+)|notifications):(?P<partition>\d+):(?P<offset>\d+)"
)


def parse_id(text: str) -> Position:
    """The position a dead-letter id names; DeadLetterError with the expected forms."""
    match = _ID.fullmatch(text.strip())
    if match is None:
        raise DeadLetterError(
            f"{text!r} is not a dead-letter id: ids look like "
            "aggregation:<topic>:<partition>:<offset> or notifications:<partition>:<offset> "
            "(see `onceflow-ops dead-letters list`)"
        )
    topic = match["topic"]
    stage = Stage.AGGREGATION if topic is not None else Stage.NOTIFICATIONS
    return Position(stage, topic, int(match["partition"]), int(match["offset"]))


_AGO = re.compile(r"(\d+)\s*([smhdw])")
_UNIT = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str, *, now: datetime | None = None) -> datetime:
    """`30m`, `6h`, `2d`, `1w` ago, or an ISO 8601 time (UTC when it names no zone)."""
    match = _AGO.fullmatch(text.strip())
    if match is not None:
        amount, unit = match.groups()
        return (now or datetime.now(UTC)) - timedelta(**{_UNIT[unit]: int(amount)})
    try:
        at = datetime.fromisoformat(text.strip())
    except ValueError:
        raise DeadLetterError(
            f"--since {text!r} is neither a duration (30m, 6h, 2d, 1w) nor an ISO 8601 time"
        ) from None
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Filter:
    """Which dead letters `list` shows."""

    stage: Stage | None = None
    reason: str | None = None  # a case-insensitive substring of the error
    since: datetime | None = None
    limit: int = 50

    def keeps(self, letter: DeadLetter) -> bool:
        """Whether the dead letter passes the filter (the limit aside)."""
        return (
            (self.stage is None or letter.stage is self.stage)
            and (self.reason is None or self.reason.lower() in letter.error.lower())
            and (self.since is None or letter.at >= self.since)
        )


def newest_first(letters: list[DeadLetter], wanted: Filter) -> list[DeadLetter]:
    """The dead letters the filter keeps, newest first, at most its limit."""
    kept = [d for d in letters if wanted.keeps(d)]
    kept.sort(key=lambda d: (d.at, d.stage, d.partition, d.offset), reverse=True)
    return kept[: wanted.limit]
