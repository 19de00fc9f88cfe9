"""REST clients that retry each change with its Idempotency-Key until the API acknowledges it
(after a 503, a 409 request-in-flight or no answer at all), as a careful client does; every
attempt is logged with its time and outcome."""

import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

import httpx

# How long one attempt may wait for an answer: far beyond what the API takes to answer 503.
ATTEMPT_TIMEOUT_S = 30.0
# Give up on one change after this long (the test then fails, saying so).
CHANGE_DEADLINE_S = 120.0
BACKOFF_S = 0.2
RETRIED = {409, 503}


@dataclass(frozen=True)
class Attempt:
    started: float  # time.monotonic()
    ended: float
    status: int | None  # None: no answer (transport error or timeout)
    problem: str  # the problem's type, the content type or the error


class RetryingClient(threading.Thread):
    """Places orders and pays each, one change at a time, retrying each with its key."""

    def __init__(self, base_url: str, headers: dict[str, str], stopping: threading.Event) -> None:
        super().__init__(daemon=True)
        self.base_url, self.headers, self.stopping = base_url, headers, stopping
        self.attempts: list[Attempt] = []
        self.placed: dict[str, dict[str, Any]] = {}  # key -> the order as answered
        self.paid: dict[str, dict[str, Any]] = {}  # key -> the order as answered
        self.retried_keys: set[str] = set()
        # Retried keys answered as a replay: an earlier attempt had made the change after all.
        self.replayed_keys: set[str] = set()
        self.failure: BaseException | None = None

    def run(self) -> None:
        customer = f"faults-{uuid.uuid4().hex[:10]}"
        body = {
            "customer_id": customer,
            "currency": "EUR",
            "items": [{"sku": "FAULTS-1", "quantity": 1, "unit_price_cents": 700}],
        }
        try:
            with httpx.Client(
                base_url=self.base_url, headers=self.headers, timeout=ATTEMPT_TIMEOUT_S
            ) as api:
                while not self.stopping.is_set():
                    key = str(uuid.uuid4())
                    self.placed[key] = order = self._until_acknowledged(api, "/orders", key, body)
                    key = str(uuid.uuid4())
                    self.paid[key] = self._until_acknowledged(
                        api, f"/orders/{order['id']}/pay", key, None
                    )
        except BaseException as exc:
            self.failure = exc

    def _until_acknowledged(
        self, api: httpx.Client, path: str, key: str, body: dict[str, Any] | None
    ) -> dict[str, Any]:
        deadline = time.monotonic() + CHANGE_DEADLINE_S
        while True:
            started = time.monotonic()
            try:
                response = api.post(path, json=body, headers={"Idempotency-Key": key})
            except httpx.TransportError as exc:
                self.attempts.append(Attempt(started, time.monotonic(), None, type(exc).__name__))
            else:
                kind = response.headers.get("content-type", "")
                if kind == "application/problem+json":
                    kind = response.json()["type"]
                self.attempts.append(Attempt(started, time.monotonic(), response.status_code, kind))
                if response.is_success:
                    if "idempotent-replayed" in response.headers:
                        self.replayed_keys.add(key)
                    answered: dict[str, Any] = response.json()
                    return answered
                if response.status_code not in RETRIED:
                    raise AssertionError(f"POST {path}: {response.status_code} {response.text}")
            self.retried_keys.add(key)
            if time.monotonic() > deadline:
                raise AssertionError(f"POST {path} not acknowledged in {CHANGE_DEADLINE_S}s")
            time.sleep(BACKOFF_S)  # a client's backoff between retries, not a wait for a state
