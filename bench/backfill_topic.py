"""A backfill benchmark's input: a fresh topic holding N generated contract-section-4 events
(~2.2 an order) and a fresh migrated database, on the stack's broker and Postgres, both removed
afterwards. bench.aggregation_bench and bench.floor read the same one."""

import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.integration.aggregation.conftest import Pipeline
from tests.integration.aggregation.history import (
    Event,
    delete_topic,
    interleave,
    make_history,
    produce,
)
from tests.integration.databases import drop_database


def events(n: int) -> list[Event]:
    """About n generated events (~2.2 an order on average), the same for the same n."""
    return interleave(
        make_history(max(1, int(n / 2.2)), seed=11, days=30, n_customers=5000, n_skus=500)
    )


@contextmanager
def backfill_topic(n: int) -> Iterator[tuple[Pipeline, int]]:
    """A pipeline (topic, database, checkpoint) whose topic holds ~n events in Kafka
    transactions of 5,000, and how many it holds."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Pipeline(Path(tmp))
        try:
            t0 = time.monotonic()
            history = events(n)
            produced = produce(
                p.bootstrap, p.topic, (e.record() for e in history), per_transaction=5000
            )
            print(f"produced {produced} events in {time.monotonic() - t0:.0f}s")
            yield p, produced
        finally:
            delete_topic(p.bootstrap, p.topic)
            drop_database(p.database)
