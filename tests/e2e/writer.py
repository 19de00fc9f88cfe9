"""A REST client placing and changing orders in the background while a test breaks things."""

import itertools
import threading
import uuid

import httpx

from stack.waiting import wait_for
from tests.e2e.orders import Expected, post_history


class Writer(threading.Thread):
    """A REST client placing and changing orders until told to stop."""

    def __init__(self, base_url: str, headers: dict[str, str]) -> None:
        super().__init__(daemon=True)
        self.base_url, self.headers = base_url, headers
        self.expected = Expected()
        self.stopping = threading.Event()
        self.failure: BaseException | None = None

    def run(self) -> None:
        run = uuid.uuid4().hex[:8]
        try:
            with httpx.Client(base_url=self.base_url, timeout=30, headers=self.headers) as api:
                for chunk in itertools.count():
                    if self.stopping.is_set():
                        return
                    post_history(api, f"{run}-{chunk}", self.expected, orders=2)
        except BaseException as exc:
            self.failure = exc

    def orders(self) -> int:
        return len(self.expected.status)

    def wait_more(self, more: int = 10, timeout: float = 120) -> None:
        """Wait until `more` further orders were posted (the API kept taking writes)."""
        target = self.orders() + more
        wait_for(lambda: self.orders() >= target, what=f"{target} orders posted", timeout=timeout)
        assert self.failure is None, f"a write failed: {self.failure!r}"

    def finish(self) -> Expected:
        self.stopping.set()
        self.join(60)
        assert not self.is_alive(), "the writer did not stop"
        assert self.failure is None, f"a write failed: {self.failure!r}"
        return self.expected
