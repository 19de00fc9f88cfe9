"""The deadline of a transactional call: a block that returns in time is left alone; one still
running past it is reported (the processor then exits; its restart fences the stuck producer)."""

import threading

from services.notifications.watchdog import deadline


def test_a_block_that_returns_in_time_is_left_alone() -> None:
    stuck: list[str] = []
    with deadline("quick", seconds=5, on_stuck=lambda what, _s: stuck.append(what)):
        pass
    assert stuck == []


def test_a_block_still_running_past_its_deadline_is_reported() -> None:
    reported = threading.Event()
    stuck: list[tuple[str, float]] = []

    def on_stuck(what: str, seconds: float) -> None:
        stuck.append((what, seconds))
        reported.set()

    with deadline("send_offsets_to_transaction", seconds=0.05, on_stuck=on_stuck):
        assert reported.wait(10), "the deadline did not fire"
    assert stuck == [("send_offsets_to_transaction", 0.05)]
