"""The exactly-once oracles can fail: a job made to lose one event, or to count one twice
(AggregationSettings.fault, test only), fails both the table oracle (tables.assert_exact) and
the end-to-end one (tests/e2e/exactly_once.assert_counted_once); the same run without a fault
passes both, so a failure is the mutation's doing."""

import pytest

from stack.waiting import wait_for
from tests.e2e import exactly_once
from tests.e2e.orders import Expected
from tests.integration.aggregation.conftest import Pipeline
from tests.integration.aggregation.history import interleave, make_history, produce
from tests.integration.aggregation.tables import assert_exact

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("fault", ["", "lose_one_event", "duplicate_one_event"])
def test_the_oracles_fail_when_one_event_is_lost_or_duplicated(
    pipeline: Pipeline, fault: str
) -> None:
    events = interleave(make_history(30, seed=27, days=2), seed=27)
    settings = pipeline.settings.model_copy(update={"topic": pipeline.topic})
    before = exactly_once.baseline(settings)
    expected = Expected()
    for e in events:
        expected.record(e.event_type, e.order)
    produce(pipeline.bootstrap, pipeline.topic, [e.record() for e in events])
    job = pipeline.start(fault=fault)
    try:

        def folded() -> bool:
            assert job.proc.poll() is None, f"job exited early:\n{job.output()[-3000:]}"
            rows = pipeline.query(
                "SELECT coalesce(sum(records), 0) FROM aggregation.applied_batches"
            )
            return bool(rows[0][0] == len(events))

        wait_for(folded, what="every record folded", timeout=180)
    finally:
        assert job.stop() == 0
    assert ("fault injection" in job.output()) == bool(fault)
    if fault:
        with pytest.raises(AssertionError, match="differs from the oracle"):
            assert_exact(pipeline, events)
        with pytest.raises(AssertionError, match="never matched"):
            exactly_once.assert_counted_once(settings, expected, before, timeout=5)
    else:
        assert_exact(pipeline, events)
        exactly_once.assert_counted_once(settings, expected, before, timeout=5)
