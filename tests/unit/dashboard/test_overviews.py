"""The overview shared between tabs (services/dashboard/overviews.py): one read while it is
young, and a read that hangs keeps the other callers waiting no longer than `wait_s`."""

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from services.dashboard.overviews import Shared


def test_a_young_read_is_shared_and_an_old_one_is_read_again() -> None:
    reads: list[int] = []

    def source() -> list[dict[str, Any]]:
        reads.append(len(reads))
        return [{"hop": "api", "read": len(reads)}]

    shared = Shared(source, max_age_s=3600)
    assert shared()[1] == shared()[1] == [{"hop": "api", "read": 1}]
    stale = Shared(source, max_age_s=0)
    stale()
    stale()
    assert len(reads) == 3


def test_a_caller_waits_for_a_hanging_read_no_longer_than_wait_s() -> None:
    started, release = threading.Event(), threading.Event()

    def hangs() -> list[dict[str, Any]]:
        started.set()
        assert release.wait(timeout=30), "never released"
        return [{"hop": "api"}]

    shared = Shared(hangs, max_age_s=3600, wait_s=0.2)
    with ThreadPoolExecutor(max_workers=1) as pool:
        first = pool.submit(shared)
        assert started.wait(timeout=10)
        with pytest.raises(TimeoutError, match="another read of the overview"):
            shared()
        release.set()
        assert first.result(timeout=10)[1] == [{"hop": "api"}]
    assert shared()[1] == [{"hop": "api"}]  # the lock was released
