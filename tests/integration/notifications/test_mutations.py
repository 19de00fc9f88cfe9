"""The notification oracles can fail: a processor made to leave one notification out, or to
send one twice (NotificationSettings.notify_fault_output, test only), fails both the harness's
oracle and the end-to-end one (tests/e2e/exactly_once.assert_notified_once); the same run
without a fault passes both, so a failure is the mutation's doing."""

import json
from pathlib import Path

import pytest

from tests.e2e.exactly_once import assert_notified_once
from tests.e2e.kafka_reader import Event
from tests.integration.notifications.harness import (
    Input,
    Instance,
    Scratch,
    assert_exactly_once,
    read_output,
    wait_caught_up,
)

TIMEOUT = 120


def _as_events(source: Input) -> list[Event]:
    """The produced events, in production order (one partition's order per order id)."""
    events = []
    for offset, (key, value, *_, headers) in enumerate(source.sent):
        assert key is not None
        assert value is not None
        names = {name: (raw or b"").decode() for name, raw in headers}
        events.append(Event(key.decode(), names, json.loads(value), 0, offset))
    return events


@pytest.mark.parametrize("fault", ["", "lose_one", "duplicate_one"])
def test_the_oracles_fail_when_one_notification_is_lost_or_duplicated(
    scratch: Scratch, tmp_path: Path, fault: str
) -> None:
    source = Input(scratch)
    for _ in range(40):
        source.order(events=3)
    source.flush()
    instance = Instance(scratch, 1, tmp_path / "1.log", ONCEFLOW_NOTIFY_FAULT_OUTPUT=fault)
    wait_caught_up(scratch, TIMEOUT)
    assert instance.stop() == 0
    expected = len(source.event_ids) - (fault == "lose_one")
    out = read_output(scratch, notifications=expected, dead=0, timeout=TIMEOUT)
    notify = scratch.notify

    def e2e_oracle() -> None:
        assert_notified_once(
            scratch.settings.kafka_bootstrap,
            notify.notify_topic,
            _as_events(source),
            list(source.sequence),
            timeout=10,
        )

    if fault:
        with pytest.raises(AssertionError):
            assert_exactly_once(source, out)
        with pytest.raises(AssertionError):
            e2e_oracle()
    else:
        assert_exactly_once(source, out)
        e2e_oracle()
