"""The job's de-duplication set is bounded: with a window of minutes, ids older than the window
are forgotten (their partition is gone), a duplicate inside the window is still dropped, and a
duplicate of a forgotten event takes the documented path (counted, traced in late_events)."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from services.maintenance.tasks import RollDedup, Windows
from tests.integration.aggregation.conftest import Pipeline
from tests.integration.aggregation.history import Event, interleave, make_history, produce
from tests.integration.aggregation.tables import assert_exact

pytestmark = pytest.mark.integration
WINDOWS = Windows(
    idempotency_keys=timedelta(hours=24),
    dedup=timedelta(minutes=5),
    dedup_partition=timedelta(minutes=1),
)


def _roll(pipeline: Pipeline) -> int:
    with psycopg.connect(pipeline.settings.dsn("spark"), autocommit=True) as conn:
        return RollDedup().run(conn, WINDOWS, batch=1000)


def test_a_window_of_minutes_forgets_old_ids_and_still_drops_recent_duplicates(
    pipeline: Pipeline,
) -> None:
    now = datetime.now(UTC)
    _roll(pipeline)  # partitions of one minute from now on
    # Each order's first events only: later ones of a generated history may lie hours ahead.
    old = [
        e
        for e in make_history(15, seed=11, start=now - timedelta(minutes=30), days=0)
        if e.occurred_at < now - timedelta(minutes=10)
    ]
    recent = [
        e
        for e in make_history(15, seed=12, start=now - timedelta(seconds=30), days=0)
        if e.occurred_at <= now
    ]
    events = interleave([*old, *recent])
    produce(pipeline.bootstrap, pipeline.topic, [e.record() for e in events])
    job = pipeline.start()
    try:
        pipeline.wait_applied(len(events), 0, job)
        assert _roll(pipeline) == len(old)
        ids = pipeline.query("SELECT event_id::text FROM aggregation.applied_events")
        remembered = {r[0] for r in ids}
        assert remembered == {e.event_id for e in recent}
        horizon = pipeline.query("SELECT forgotten_before FROM aggregation.dedup_state")[0][0]
        assert max(e.occurred_at for e in old) < horizon <= datetime.now(UTC) - WINDOWS.dedup
        stale = pipeline.query(
            "SELECT count(*) FROM aggregation.dedup_partitions "
            "WHERE upper_bound <= now() - interval '5 minutes'"
        )
        assert stale == [(0,)]

        duplicates = [recent[0], old[0]]
        produce(pipeline.bootstrap, pipeline.topic, [e.record() for e in duplicates])
        pipeline.wait_applied(len(events) + 1, 0, job)
    finally:
        assert job.stop() == 0
    # The recent duplicate was dropped; the forgotten one was counted again, and traced.
    assert_exact(pipeline, [*events, _twin(old[0])])
    late = pipeline.query("SELECT event_id::text FROM aggregation.late_events")
    assert late == [(old[0].event_id,)]
    ledger = pipeline.query(
        "SELECT sum(duplicates), sum(late_events) FROM aggregation.applied_batches"
    )
    assert ledger == [(1, 1)]


def _twin(event: Event) -> Event:
    """The oracle counts an event once per id: a copy under another id is counted again."""
    return replace(event, event_id=f"{event.event_id}-twin")
