"""Every input event becomes exactly one notification, and every poison record one dead
letter, while instances crash, stall, come and go (real broker, real processes)."""

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.integration.notifications.harness import (
    Input,
    Instance,
    Scratch,
    assert_exactly_once,
    read_output,
)

TIMEOUT = 120


@contextmanager
def flowing(source: Input, *, per_second: float) -> Iterator[None]:
    """Produce orders (and now and then a poison record) until the block ends."""
    stop = threading.Event()

    def run() -> None:
        produced = 0
        while not stop.wait(1 / per_second):
            source.order(events=1 + produced % 3)
            produced += 1
            if produced % 50 == 0:
                source.poison_record()
        source.flush()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(30)


def check(scratch: Scratch, source: Input) -> None:
    out = read_output(
        scratch,
        notifications=len(source.event_ids),
        dead=len(source.poison),
        timeout=TIMEOUT,
    )
    assert_exactly_once(source, out)


def test_duplicates_and_poison(scratch: Scratch, tmp_path: Path) -> None:
    source = Input(scratch)
    for _ in range(30):
        source.order(events=3)
    source.send(source.sent[0])  # a duplicate inside one batch's reach
    source.poison_record()
    source.flush()
    first = Instance(scratch, 1, tmp_path / "1.log")
    check(scratch, source)
    assert first.stop() == 0
    # Every event again (an upstream duplicate): nothing new.
    for r in source.sent:
        source.send(r)
    source.flush()
    # Instance 2 has no local cache: it knows the ids only from the changelog topic.
    second = Instance(scratch, 2, tmp_path / "2.log")
    check(scratch, source)
    assert second.stop() == 0


def test_a_crash_between_produce_and_commit(scratch: Scratch, tmp_path: Path) -> None:
    source = Input(scratch)
    with flowing(source, per_second=100):
        crasher = Instance(
            scratch, 1, tmp_path / "1.log", ONCEFLOW_NOTIFY_CRASH_BEFORE_COMMIT_AT="5"
        )
        assert crasher.process.wait(TIMEOUT) == -signal.SIGKILL
        time.sleep(0)  # the crashed transaction stays open until its successor fences it
        successor = Instance(scratch, 1, tmp_path / "2.log")
        other = Instance(scratch, 2, tmp_path / "3.log")
    check(scratch, source)
    assert successor.stop() == 0
    assert other.stop() == 0
