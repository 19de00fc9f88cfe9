"""Where the overview comes from: `services.ops.overview.gather` (the same facts as
`onceflow-ops overview --json`), read at most once per MAX_AGE_S however many tabs ask."""

import threading
import time
from collections.abc import Callable
from typing import Any

from onceflow.settings import NotificationSettings, ObservabilitySettings, Settings
from services.dashboard.panels import OVERVIEW_SECONDS
from services.ops.overview import gather

OverviewSource = Callable[[], list[dict[str, Any]]]
# A read costs about a second of probes and queries (0.4 s of CPU here): tabs share one.
MAX_AGE_S = OVERVIEW_SECONDS - 1.0
# How long a caller waits for a read another caller is making (the route's own deadline).
WAIT_S = 20.0


def ops_overview(
    settings: Settings, notify: NotificationSettings, observe: ObservabilitySettings
) -> OverviewSource:
    """A blocking read of every hop, as `Hop.as_dict()`."""

    def read() -> list[dict[str, Any]]:
        return [hop.as_dict() for hop in gather(settings, notify, observe)]

    return read


class Shared:
    """The last read of `source` while it is younger than `max_age_s`; one read at a time, and
    a caller waits at most `wait_s` for another's read (a read that hangs holds no more than
    one thread: the others give up, so the dashboard's thread pool does not fill)."""

    def __init__(
        self, source: OverviewSource, max_age_s: float = MAX_AGE_S, wait_s: float = WAIT_S
    ) -> None:
        self._source = source
        self._max_age_s = max_age_s
        self._wait_s = wait_s
        self._lock = threading.Lock()
        self._read: tuple[float, float, list[dict[str, Any]]] | None = None

    def __call__(self) -> tuple[float, list[dict[str, Any]]]:
        """(when it was read, epoch seconds; the hops); TimeoutError past `wait_s` waiting."""
        if not self._lock.acquire(timeout=self._wait_s):
            raise TimeoutError(f"another read of the overview took over {self._wait_s:g} s")
        try:
            if self._read is None or time.monotonic() - self._read[0] > self._max_age_s:
                hops = self._source()
                self._read = (time.monotonic(), time.time(), hops)
            return self._read[1], self._read[2]
        finally:
            self._lock.release()
