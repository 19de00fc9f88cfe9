"""bench/floor.py against the stack's broker and Postgres: a small topic of valid events and
dead letters, read to its end once, every record COPYed."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import floor
from tests.integration.aggregation.conftest import Pipeline
from tests.integration.aggregation.history import Record, delete_topic, make_history, produce
from tests.integration.databases import drop_database

pytestmark = pytest.mark.integration


@pytest.fixture
def pipeline(tmp_path: Path) -> Iterator[Pipeline]:
    p = Pipeline(tmp_path)
    yield p
    delete_topic(p.bootstrap, p.topic)
    drop_database(p.database)


def test_the_floor_reads_the_topic_to_its_end_and_copies_every_record(pipeline: Pipeline) -> None:
    valid = [e.record() for e in make_history(150, seed=3)]
    dead = [Record(b"k-1", b"not json"), Record(None, b'{"event_id": 1}')]
    produced = produce(pipeline.bootstrap, pipeline.topic, [*valid, *dead], per_transaction=100)
    assert produced == len(valid) + len(dead)

    # Batches of 100 rows: several COPYs and commits, the last one shorter.
    result = floor.run(
        pipeline.bootstrap, pipeline.topic, pipeline.database, batch_rows=100, timeout=60
    )

    assert result.records == produced
    assert result.dead_letters == len(dead)
    assert result.seconds > 0
    assert result.rate == result.records / result.seconds
    assert pipeline.query("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'floor_%'") == [(0,)]
