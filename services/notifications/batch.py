"""What one transaction writes for a batch of input records: the notifications of events not
yet notified, the dead letters, the ids to remember, and the input positions to commit."""

import logging
from dataclasses import dataclass, field

from onceflow.event_definition import REUSED_ID
from services.notifications import metrics
from services.notifications.seen import Entry, SeenIds, epoch_of
from services.notifications.transform import DeadLetter, Notification, Record, dead_letter, route

log = logging.getLogger("onceflow.notifications")
# event id, occurred_at, content fingerprint
ChangelogEntry = tuple[str, str, str]
Position = tuple[int, int]  # an input record's partition and offset


@dataclass
class Batch:
    """The outputs of one transaction. The i-th notification comes from the i-th source record
    and remembers the i-th changelog and remembered entries."""

    notifications: list[Notification] = field(default_factory=list)
    sources: list[Record] = field(default_factory=list)
    dead_letters: list[DeadLetter] = field(default_factory=list)
    changelog: list[ChangelogEntry] = field(default_factory=list)
    remembered: list[Entry] = field(default_factory=list)
    positions: dict[int, int] = field(default_factory=dict)  # partition -> next offset
    duplicates: int = 0
    conflicts: int = 0  # copies of a notified event id with other content (dead letters)
    late: int = 0

    def count(self) -> None:
        """Count a committed batch in the metrics."""
        metrics.RECORDS.labels("notified").inc(len(self.notifications))
        metrics.RECORDS.labels("dead_letter").inc(len(self.dead_letters))
        metrics.RECORDS.labels("duplicate").inc(self.duplicates)
        metrics.CONFLICTS.inc(self.conflicts)
        metrics.LATE.inc(self.late)

    def notify(self, record: Record, out: Notification, occurred: int) -> None:
        """Add the notification of `record`, and its id to remember."""
        event = out.event
        self.notifications.append(out)
        self.sources.append(record)
        self.changelog.append((event.event_id, event.occurred_at, out.content))
        self.remembered.append((event.event_id, occurred, out.content))

    def refusing(self, refused: dict[Position, str]) -> "Batch":
        """This batch with the notifications of the source records at `refused`'s positions
        (which the output topic refused, with the reason) turned into dead letters of those
        records: they are not notified, so their ids are not remembered."""
        kept = Batch(
            dead_letters=[*self.dead_letters],
            positions=dict(self.positions),
            duplicates=self.duplicates,
            conflicts=self.conflicts,
            late=self.late,
        )
        for i, out in enumerate(self.notifications):
            source = self.sources[i]
            reason = refused.get((source.partition, source.offset))
            if reason is not None:
                kept.dead_letters.append(dead_letter(source, reason))
                continue
            kept.notifications.append(out)
            kept.sources.append(self.sources[i])
            kept.changelog.append(self.changelog[i])
            kept.remembered.append(self.remembered[i])
        return kept


Routed = tuple[Record, Notification | DeadLetter]


def route_all(records: list[Record], max_bytes: int) -> list[Routed]:
    """Each record with its notification or dead letter (pure: the processor does this while
    the previous batch's transaction commits)."""
    return [(record, route(record, max_bytes)) for record in records]


def plan(records: list[Record], seen: SeenIds, max_bytes: int, late_before: int) -> Batch:
    """The batch for `records` (in offset order per partition): decide(route_all(...))."""
    return decide(route_all(records, max_bytes), seen, late_before)


def decide(routed: list[Routed], seen: SeenIds, late_before: int) -> Batch:
    """The batch for routed records (in offset order per partition); events that occurred
    before `late_before` (epoch seconds) are outside the de-duplication window. A copy of a known
    id, from whichever partition, is a duplicate when its content is the same (or the known
    content is unknown), else a dead letter (REUSED_ID); the first copy stays notified."""
    batch = Batch()
    known = seen.known([out.event.event_id for _r, out in routed if isinstance(out, Notification)])
    for record, out in routed:
        batch.positions[record.partition] = record.offset + 1
        if isinstance(out, DeadLetter):
            batch.dead_letters.append(out)
            continue
        event, partition = out.event, record.partition
        if event.event_id in known:
            content = known[event.event_id]
            if content is None or content == out.content:
                batch.duplicates += 1
            else:
                batch.conflicts += 1
                batch.dead_letters.append(dead_letter(record, REUSED_ID))
                log.warning(
                    "event id reused with different content: dead letter",
                    extra={"event_id": event.event_id, "partition": partition},
                )
            continue
        known[event.event_id] = out.content
        occurred = epoch_of(event.occurred_at)
        if occurred < late_before:
            batch.late += 1
            log.warning(
                "event older than the de-duplication window: notified, but a copy of it would "
                "no longer be recognised",
                extra={"event_id": event.event_id, "occurred_at": event.occurred_at},
            )
        batch.notify(record, out, occurred)
    return batch
