"""What one transaction writes for a batch of input records: the notifications of events not
yet notified, the dead letters, the ids to remember, and the input positions to commit."""

import logging
from collections import defaultdict
from dataclasses import dataclass, field

from services.notifications import metrics
from services.notifications.seen import Entry, SeenIds, epoch_of
from services.notifications.transform import DeadLetter, Notification, Record, route

log = logging.getLogger("onceflow.notifications")


@dataclass
class Batch:
    """The outputs of one transaction."""

    notifications: list[Notification] = field(default_factory=list)
    dead_letters: list[DeadLetter] = field(default_factory=list)
    changelog: list[tuple[int, str, str]] = field(default_factory=list)  # partition, id, time
    remembered: list[Entry] = field(default_factory=list)
    positions: dict[int, int] = field(default_factory=dict)  # partition -> next offset
    duplicates: int = 0
    late: int = 0

    def count(self) -> None:
        """Count a committed batch in the metrics."""
        metrics.RECORDS.labels("notified").inc(len(self.notifications))
        metrics.RECORDS.labels("dead_letter").inc(len(self.dead_letters))
        metrics.RECORDS.labels("duplicate").inc(self.duplicates)
        metrics.LATE.inc(self.late)


def plan(records: list[Record], seen: SeenIds, max_bytes: int, late_before: int) -> Batch:
    """The batch for `records` (in offset order per partition); events that occurred before
    `late_before` (epoch seconds) are outside the de-duplication window."""
    batch = Batch()
    routed = [(record, route(record, max_bytes)) for record in records]
    candidates: dict[int, list[str]] = defaultdict(list)
    for record, out in routed:
        if isinstance(out, Notification):
            candidates[record.partition].append(out.event.event_id)
    known = {p: seen.known(p, ids) for p, ids in candidates.items()}
    for record, out in routed:
        batch.positions[record.partition] = record.offset + 1
        if isinstance(out, DeadLetter):
            batch.dead_letters.append(out)
            continue
        event, partition = out.event, record.partition
        if event.event_id in known[partition]:
            batch.duplicates += 1
            continue
        known[partition].add(event.event_id)
        occurred = epoch_of(event.occurred_at)
        if occurred < late_before:
            batch.late += 1
            log.warning(
                "event older than the de-duplication window: notified, but a copy of it would "
                "no longer be recognised",
                extra={"event_id": event.event_id, "occurred_at": event.occurred_at},
            )
        batch.notifications.append(out)
        batch.changelog.append((partition, event.event_id, event.occurred_at))
        batch.remembered.append((partition, event.event_id, occurred))
    return batch
