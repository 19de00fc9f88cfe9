"""Tuning and policy of the order API (`ONCEFLOW_API_*`)."""

import os
from functools import lru_cache
from typing import Annotated, Self

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from onceflow.contract import DEFAULT_CURRENCIES


class ApiSettings(BaseSettings):
    """Tuning and policy of the order API process."""

    model_config = SettingsConfigDict(env_prefix="ONCEFLOW_", env_file=".env", extra="ignore")

    api_workers: int = Field(default_factory=lambda: os.cpu_count() or 1, ge=1, le=64)
    api_pool_size: int = Field(default=8, ge=1, le=100)
    api_pool_timeout_s: float = Field(default=5.0, gt=0)
    # Postgres cut off (packets dropped, nothing refused): a pooled connection whose data stays
    # unacknowledged this long is abandoned (TCP_USER_TIMEOUT, keepalive probes included, so a
    # query waiting for its answer is covered too), and a new one that does not open within
    # the connect timeout is given up: the request answers 503 instead of hanging for the cut.
    api_pg_tcp_user_timeout_ms: int = Field(default=5000, ge=1000)
    api_pg_connect_timeout_s: int = Field(default=3, ge=2)
    # A statement (a write function, a read) that runs or waits for a lock longer is cancelled
    # and answered 503 (a migration's or an operator's table lock, a stuck transaction): no
    # request hangs on the database. An order's write takes milliseconds.
    api_pg_statement_timeout_ms: int = Field(default=5000, ge=100)
    api_currencies: Annotated[tuple[str, ...], NoDecode] = DEFAULT_CURRENCIES
    api_max_body_bytes: int = Field(default=64 * 1024, ge=1024)
    api_idempotency_wait_ms: int = Field(default=50, ge=1, le=10_000)
    api_log_level: str = "INFO"
    api_access_log: bool = True
    # FastAPI's native OpenTelemetry; off, it costs nothing per request (metrics are Prometheus).
    api_otel: bool = False
    # Requests a second per client, for the whole API (a client's own `--rate` overrides it):
    # about two thirds of what a 2-core API serves, so one client cannot take all of it.
    # Each worker enforces rate / api_workers with its own token bucket (docs/api.md).
    api_rate_per_s: float = Field(default=1_000, gt=0)
    # The bucket holds this many seconds of the rate: how big a burst may be (at least 1).
    api_rate_burst_s: float = Field(default=1.0, gt=0)
    # How long a worker trusts a verified key: a revocation takes effect within this time.
    api_key_cache_ttl_s: float = Field(default=1.0, gt=0, le=1.0)

    # The edge: what an unauthenticated peer can cost (docs/security.md, "API edge").
    # How long a worker remembers a key the database did not know (at most this many keys, the
    # least recently seen forgotten first). A key issued later is never among them: nobody
    # could have sent it before it existed.
    api_unknown_key_ttl_s: float = Field(default=5.0, gt=0, le=60)
    api_unknown_key_cache_size: int = Field(default=10_000, ge=1)
    # Failed authentications per peer address for the whole API (each worker allows its share):
    # a bucket of `burst` refilled at `per_s`; an empty one answers 429 before any lookup.
    api_auth_failures_burst: int = Field(default=20, ge=1)
    api_auth_failures_per_s: float = Field(default=1.0, gt=0)
    # Request head (request line and header fields, in bytes) and header field count: over
    # either → 431.
    api_max_header_bytes: int = Field(default=16 * 1024, ge=1024)
    api_max_header_fields: int = Field(default=100, ge=8)
    # A request must arrive whole (head and body) within this time of its first byte (or of
    # the connection's opening): a slow or stalled one is cut (408 if its head is incomplete).
    api_request_read_timeout_s: float = Field(default=10.0, gt=0)
    # An idle keep-alive connection is closed after this many seconds.
    api_keep_alive_s: int = Field(default=5, ge=1)
    # Connections plus requests in progress per worker; over it → 503 (uvicorn's measure).
    api_max_concurrency: int = Field(default=1000, ge=2)

    @field_validator("api_currencies", mode="before")
    @classmethod
    def _split_currencies(cls, value: object) -> object:
        """Accept `EUR,USD` as well as a sequence; codes are upper-cased ISO 4217."""
        if isinstance(value, str):
            value = [part for part in value.replace(" ", ",").split(",") if part]
        if isinstance(value, list | tuple):
            codes = tuple(str(code).upper() for code in value)
            if not codes or any(len(code) != 3 or not code.isalpha() for code in codes):
                raise ValueError("currencies must be three-letter ISO 4217 codes")
            return codes
        return value

    @model_validator(mode="after")
    def _in_flight_wait_within_the_statement_timeout(self) -> Self:
        """The same-key wait (api_idempotency_wait_ms, lock_timeout inside the write's one
        statement) must end before the statement's timeout, else a request in flight is
        answered 503 unavailable instead of 409 request-in-flight."""
        if self.api_idempotency_wait_ms >= self.api_pg_statement_timeout_ms:
            raise ValueError(
                "ONCEFLOW_API_IDEMPOTENCY_WAIT_MS must be below"
                f" ONCEFLOW_API_PG_STATEMENT_TIMEOUT_MS ({self.api_idempotency_wait_ms}"
                f" >= {self.api_pg_statement_timeout_ms})"
            )
        return self


@lru_cache
def get_api_settings() -> ApiSettings:
    """Return the process-wide API settings, read once."""
    return ApiSettings()
