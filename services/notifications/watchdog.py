"""A deadline for the transactional calls librdkafka may block in for ever.

`send_offsets_to_transaction` ignores its timeout when the group coordinator is away, and can
wait without end once a restarted broker was dropped from the client's metadata (librdkafka
#5456, #5511): the calling thread cannot get out, so nothing in the process can recover. Past the
deadline the process exits; its restart (same transactional.id) fences the stuck producer, aborts
its open transaction and reads the input again from the committed offsets: nothing is lost or
notified twice, and supervisor (or compose's restart policy) starts it again.
"""

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterator

log = logging.getLogger("onceflow.notifications")
# Three times the 30 s each transactional call is given: only a call that will never return.
STUCK_AFTER_S = 90.0
EXIT_STUCK = 75  # EX_TEMPFAIL


def _exit(what: str, seconds: float) -> None:
    log.error(
        "%s has not returned in %.0f s (librdkafka #5456): exiting, the restart fences it",
        what,
        seconds,
    )
    logging.shutdown()
    os._exit(EXIT_STUCK)


@contextlib.contextmanager
def deadline(
    what: str,
    *,
    seconds: float = STUCK_AFTER_S,
    on_stuck: Callable[[str, float], None] = _exit,
) -> Iterator[None]:
    """Run the block; `on_stuck(what, seconds)` (by default: exit) if it is still running after
    `seconds`."""
    timer = threading.Timer(seconds, on_stuck, args=(what, seconds))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
