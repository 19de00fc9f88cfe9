"""The job's per-batch log lines."""

import logging
import time

from spark_jobs.aggregation.sink import BatchResult

log = logging.getLogger("onceflow.aggregation")


class Progress:
    """Per-batch log lines; in backfill mode also the share of the topic done and the rate."""

    def __init__(self, watermarks: dict[int, tuple[int, int]] | None) -> None:
        self.watermarks = watermarks
        self.started = time.monotonic()
        self.events = 0
        self.records = 0
        self.done: dict[int, int] = {}

    def __call__(self, r: BatchResult) -> None:
        if r.skipped:
            return
        self.events += r.events_new
        self.records += r.records
        line = (
            f"batch {r.batch_id}: {r.records} records, {r.events_new} new events "
            f"({r.late_events} late), {r.duplicates} duplicates, {r.dead_letters} dead letters "
            f"(spark {r.spark_seconds:.2f}s, postgres {r.postgres_seconds:.2f}s)"
        )
        if self.watermarks:
            for partition, span in r.offsets.items():
                self.done[int(partition)] = span["last"] + 1
            total = sum(high - low for low, high in self.watermarks.values()) or 1
            covered = sum(
                min(self.done.get(p, low), high) - low for p, (low, high) in self.watermarks.items()
            )
            elapsed = time.monotonic() - self.started
            line += (
                f" | backfill {100 * covered / total:5.1f}% ({covered}/{total} offsets), "
                f"{self.records / elapsed:,.0f} records/s"
            )
        log.info(line)
        if r.late_events:
            log.warning(
                "batch %d: %d events occurred before the de-duplication horizon; counted and "
                "recorded in aggregation.late_events",
                r.batch_id,
                r.late_events,
            )
