"""The HTTP edge of each API worker: uvicorn's httptools protocol plus what uvicorn leaves out
(docs/security.md, "API edge").

- The request head is bounded: over api_max_header_bytes (request line and header fields) or
  api_max_header_fields → 431. An unfinished head stops being read at the bound, so a 32 MiB
  header costs at most the bound plus one read.
- A request must arrive whole (head and body) within api_request_read_timeout_s of its first
  byte, and a new connection must send one within that time (slowloris): with its head
  incomplete it is answered 408, otherwise the connection is cut (the app sees a disconnect).
- At api_max_concurrency connections, or requests in progress (each on its own, as uvicorn's
  limit_concurrency), 503.

uvicorn offers neither the head bound nor the read deadline for httptools (Kludex/uvicorn#157:
only `timeout_keep_alive`, which counts from the end of a response, and h11's incomplete-event
size); its concurrency limit answers text/plain. These refusals are problem+json like every
other error, with an X-Request-Id, and the connection is closed after them.
"""

import asyncio
import logging
import uuid
from typing import Any

import orjson
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol
from uvicorn.server import ServerState

from onceflow.problems import PROBLEM_JSON, problem_document
from onceflow.settings import get_api_settings
from services.orders.entrypoints import metrics

log = logging.getLogger("onceflow.api")


# What a head holds beyond on_headers_complete's count: the method, the version, the request
# line's spaces and line ends, the blank line (the bound's count is the URL and the fields).
HEAD_LINE = 64


def _blank_line_end(data: bytes) -> int:
    """Where the first blank line ends in `data` (CRLF CRLF, or the bare LF LF a lenient parser
    takes too); -1 when there is none."""
    ends = [i + len(m) for m in (b"\r\n\r\n", b"\n\n") if (i := data.find(m)) >= 0]
    return min(ends, default=-1)


class RefusalError(Exception):
    """Raised in a parser callback: stop reading this connection and answer `status`."""

    def __init__(self, status: int, slug: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.slug, self.detail = status, slug, detail


class EdgeProtocol(HttpToolsProtocol):
    """HttpToolsProtocol with a bounded head, a read deadline and a problem+json 503."""

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        api = get_api_settings()
        self.max_head, self.max_fields = api.api_max_header_bytes, api.api_max_header_fields
        self.read_timeout, self.max_concurrency = (
            api.api_request_read_timeout_s,
            api.api_max_concurrency,
        )
        self.head_open = True  # reading a request head (or waiting for the next one's)
        self.raw_head = 0  # bytes received while the head was open
        self.head_tail = b""  # the last 3 bytes of the head so far (a blank line may straddle)
        self.deadline: asyncio.TimerHandle | None = None
        self.refusal: RefusalError | None = None

    # The deadline: from a connection's start or a request's first byte to its last.

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self.deadline is None:
            self._arm()

    def on_message_complete(self) -> None:
        self._disarm()
        self.head_open, self.raw_head, self.head_tail = True, 0, b""
        super().on_message_complete()
        # A body that arrives after its response (a refusal does not wait for it) cancelled
        # uvicorn's keep-alive timer with its first byte: arm it again.
        idle = self.cycle is not None and self.cycle.response_complete and not self.pipeline
        if idle and self.timeout_keep_alive_task is None and not self.transport.is_closing():
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self.timeout_keep_alive_handler
            )

    def _arm(self) -> None:
        self.deadline = self.loop.call_later(self.read_timeout, self._too_slow)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _too_slow(self) -> None:
        self.deadline = None
        if self.transport.is_closing():
            return
        metrics.EDGE_REFUSALS.labels("request-timeout").inc()
        log.warning(
            "request not received whole within %g s: connection closed",
            self.read_timeout,
            extra={"peer": self.client[0] if self.client else None},
        )
        if self.head_open:  # no response of this request is under way: say why
            detail = f"the request did not arrive within {self.read_timeout:g} s"
            self._answer(RefusalError(408, "request-timeout", detail))
        else:
            self.transport.close()

    # The head's bound and the concurrency limit.

    def data_received(self, data: bytes) -> None:
        if self.head_open:
            before = self.raw_head
            self.raw_head += len(data)
            # The head's size on the wire, whatever it holds that httptools strips (whitespace
            # around a field value is not in on_headers_complete's count): a head whose blank
            # line lies past the bound is refused before it is parsed, however it was split.
            if self.raw_head > self.max_head + HEAD_LINE and not self.transport.is_closing():
                end = _blank_line_end(self.head_tail + data)
                if end < 0 or before - len(self.head_tail) + end > self.max_head + HEAD_LINE:
                    self._answer(self._too_large())
                    return
            self.head_tail = (self.head_tail + data)[-3:]
            # Any byte between requests starts the next one's deadline: uvicorn cancels the
            # keep-alive timer on every read, and bytes httptools skips before a request line
            # (CR, LF) never reach on_message_begin, so without this a connection that sends
            # one CRLF after its response is held open with no timer at all.
            if self.deadline is None:
                self._arm()
        super().data_received(data)
        # A head still unfinished past the bound is not read further (httptools buffers a
        # header field whole before it calls on_header).
        if self.head_open and self.raw_head > self.max_head and not self.transport.is_closing():
            self._answer(self._too_large())

    def on_headers_complete(self) -> None:
        # The exact size of a head that arrived within the bound's reach (counted once here
        # rather than in a callback per header field).
        self.head_open = False
        size = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
        if size > self.max_head or len(self.headers) > self.max_fields:
            self._refuse(self._too_large())
        limit = self.max_concurrency
        if len(self.connections) >= limit or len(self.tasks) >= limit:
            self._refuse(RefusalError(503, "overloaded", "the API is at its concurrency limit"))
        super().on_headers_complete()

    def _refuse(self, refusal: RefusalError) -> None:
        """Stop the parser (uvicorn then calls send_400_response, which answers `refusal`)."""
        self.refusal = refusal
        raise refusal

    def _too_large(self) -> RefusalError:
        detail = (
            f"the request head exceeds {self.max_head} bytes or {self.max_fields} header fields"
        )
        return RefusalError(431, "header-fields-too-large", detail)

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a parser error, which a callback's RefusalError also is."""
        if self.refusal is not None:
            self._answer(self.refusal)
        else:
            super().send_400_response(msg)

    def _answer(self, refusal: RefusalError) -> None:
        """Write the problem and close the connection (what follows is not read). Behind a
        response still under way (pipelining) it only closes: the answers would interleave."""
        self.refusal = None
        if refusal.status != 408:
            metrics.EDGE_REFUSALS.labels(refusal.slug).inc()
        if self.cycle is not None and not self.cycle.response_complete:
            self.transport.close()
            return
        rid = uuid.uuid4().hex
        body = orjson.dumps(
            {
                **problem_document(refusal.status, refusal.slug),
                "detail": refusal.detail,
                "request_id": rid,
            }
        )
        head = [STATUS_LINE[refusal.status]]
        headers = [
            *self.server_state.default_headers,
            (b"content-type", PROBLEM_JSON.encode()),
            (b"content-length", str(len(body)).encode()),
            (b"x-request-id", rid.encode()),
            (b"connection", b"close"),
        ]
        if refusal.status == 503:
            headers.append((b"retry-after", b"1"))
        head.extend(name + b": " + value + b"\r\n" for name, value in headers)
        self.transport.write(b"".join([*head, b"\r\n", body]))
        self.transport.close()
