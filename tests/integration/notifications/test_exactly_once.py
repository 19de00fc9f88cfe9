"""Every input event becomes exactly one notification, and every poison record one dead
letter, while instances crash, stall, come and go (real broker, real processes)."""

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stack.waiting import wait_for
from tests.integration.notifications.harness import (
    Input,
    Instance,
    Scratch,
    check,
    wait_notified,
)

TIMEOUT = 120
STORM = 20  # instance starts (and as many stops) in the rebalance storm


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


def fault(signal_name: str, *, at: int) -> dict[str, str]:
    """The environment making an instance signal itself in transaction `at`, before commit."""
    return {
        "ONCEFLOW_NOTIFY_FAULT_SIGNAL": signal_name,
        "ONCEFLOW_NOTIFY_FAULT_AT_TRANSACTION": str(at),
    }


def test_duplicates_and_poison(scratch: Scratch, tmp_path: Path) -> None:
    source = Input(scratch)
    for _ in range(40):
        source.order(events=3)
    source.send(source.sent[0])  # a duplicate inside one batch's reach
    source.poison_record()
    source.poison_record(pad=scratch.notify.notify_max_event_bytes)  # oversized, < 1 MiB
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
        crasher = Instance(scratch, 1, tmp_path / "1.log", **fault("SIGKILL", at=5))
        assert crasher.process.wait(TIMEOUT) == -signal.SIGKILL
        # Its open transaction is aborted when the same transactional.id starts again.
        successor = Instance(scratch, 1, tmp_path / "2.log")
        other = Instance(scratch, 2, tmp_path / "3.log")
    check(scratch, source)
    assert successor.stop() == 0
    assert other.stop() == 0


def test_a_stalled_instance_returns_as_a_fenced_zombie(scratch: Scratch, tmp_path: Path) -> None:
    notify = scratch.notify
    stall = (notify.notify_session_timeout_ms + notify.notify_transaction_timeout_ms) / 1000 + 5
    source = Input(scratch)
    with flowing(source, per_second=100):
        # It stops itself in its 20th transaction, after producing, before committing.
        zombie = Instance(scratch, 1, tmp_path / "1.log", **fault("SIGSTOP", at=20))
        wait_for(lambda: zombie.status() == "T", what="the stall", timeout=TIMEOUT)
        survivor = Instance(scratch, 2, tmp_path / "2.log")
        # Past its session and transaction timeouts, the survivor has taken its partitions.
        before = list(source.event_ids)
        wait_notified(scratch, source, before, not_before=time.monotonic() + stall, timeout=TIMEOUT)
        zombie.signal(signal.SIGCONT)
        # Its late commit is refused: it exits non-zero (fenced), as the supervisor would see.
        assert zombie.process.wait(TIMEOUT) == 1
        assert "fenced" in (tmp_path / "1.log").read_text()
        back = Instance(scratch, 1, tmp_path / "3.log")
        later = time.monotonic() + 5
        wait_notified(scratch, source, list(source.event_ids), not_before=later, timeout=TIMEOUT)
    check(scratch, source)
    assert survivor.stop() == 0
    assert back.stop() == 0


def test_a_rebalance_storm(scratch: Scratch, tmp_path: Path) -> None:
    """STORM instances come and go (two at a time beside a steady one, each stopped once the
    group made progress) while input flows: none exits on its own, each event notified once."""
    source = Input(scratch)
    with flowing(source, per_second=100):
        steady = Instance(scratch, 1, tmp_path / "steady.log")
        running: list[Instance] = []
        for round_ in range(STORM):
            # Numbers 2, 3, 4 in turn: the two running at once never share a transactional.id.
            running.append(Instance(scratch, 2 + round_ % 3, tmp_path / f"{round_}.log"))
            wait_notified(scratch, source, list(source.event_ids), not_before=0, timeout=TIMEOUT)
            if len(running) == 2:
                stop_running(running.pop(0))
        stop_running(running.pop())
    check(scratch, source)
    stop_running(steady)


def stop_running(instance: Instance) -> None:
    """Stop an instance that must still be running (it never exited on its own)."""
    assert instance.process.poll() is None, f"instance {instance.n} exited on its own"
    assert instance.stop() == 0
