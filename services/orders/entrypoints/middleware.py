"""Pure ASGI middleware: request id (a response header, a field of every problem body and of
every log line), authentication before the body is read, body limits and media type, the 500
answer, metrics and access log."""

import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from onceflow import logs
from onceflow.problems import PROBLEM_JSON, problem_response
from services.orders.entrypoints import metrics
from services.orders.entrypoints.problems import ProblemError

access_log = logging.getLogger("onceflow.access")
log = logging.getLogger("onceflow.api")
JSON_TYPE = re.compile(r"^application/([a-z0-9.+-]+\+)?json\s*(;.*)?$", re.IGNORECASE)
REQUEST_ID = re.compile(r"^[\x21-\x7e]{1,128}$")
BODY_METHODS = {"POST", "PUT", "PATCH"}
PROBLEM = PROBLEM_JSON.encode()
# Checks a request before its body is read: None to go on, or the problem to answer with.
Gate = Callable[[Scope], Awaitable[ProblemError | None]]


class TooLargeError(Exception):
    """The body exceeded the configured limit while it was being read."""


class _Reply:
    """A response on its way out: `X-Request-Id` on it, and `request_id` in a problem body."""

    def __init__(self, send: Send, rid: str) -> None:
        self.downstream, self.rid = send, rid
        self.status, self.started = 500, False
        self.held: Message | None = None  # a problem's start, until its body is complete
        self.body: list[bytes] = []

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status, self.started = message["status"], True
            headers = [*message.get("headers", []), (b"x-request-id", self.rid.encode())]
            message = {**message, "headers": headers}
            if any(k == b"content-type" and v.startswith(PROBLEM) for k, v in headers):
                self.held = message
                return
        elif message["type"] == "http.response.body" and self.held is not None:
            self.body.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            await self._send_problem()
            return
        await self.downstream(message)

    async def _send_problem(self) -> None:
        assert self.held is not None
        body = b"".join(self.body)
        if body:  # not a HEAD request's; a replayed answer names its first request already
            problem = orjson.loads(body)
            if "request_id" not in problem:
                body = orjson.dumps({**problem, "request_id": self.rid})
        headers = [(k, v) for k, v in self.held["headers"] if k != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await self.downstream({**self.held, "headers": headers})
        await self.downstream({"type": "http.response.body", "body": body})
        self.held = None


class RequestContextMiddleware:
    """Wraps every HTTP request; passes it through `gate` (authentication) before reading its
    body, then rejects oversized (413) and non-JSON (415) bodies early."""

    def __init__(
        self, app: ASGIApp, *, max_body_bytes: int, access_log_on: bool, gate: Gate
    ) -> None:
        self.app, self.max_body, self.access_log_on = app, max_body_bytes, access_log_on
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        given = headers.get("x-request-id", "")
        rid = given if REQUEST_ID.match(given) else uuid.uuid4().hex
        token = logs.request_id.set(rid)
        reply = _Reply(send, rid)
        try:
            refusal = await self.gate(scope)
            if refusal is not None:
                rejection: Receive | tuple[int, str, str] | ProblemError = refusal
            else:
                rejection = await self._read_body(scope, receive, headers)
            if isinstance(rejection, ProblemError):
                await problem_response(
                    rejection.status, rejection.slug, rejection.detail, headers=rejection.headers
                )(scope, receive, reply.send)
            elif isinstance(rejection, tuple):
                await problem_response(*rejection)(scope, receive, reply.send)
            else:
                await self.app(scope, rejection, reply.send)
        except Exception:
            if reply.started:
                raise
            # Answered here, not by Starlette's outermost error middleware, so the 500 carries
            # the request id too (header, body, log lines).
            log.exception("unhandled error")
            await problem_response(500, None, "an unexpected error occurred")(
                scope, receive, reply.send
            )
        finally:
            self._observe(scope, reply.status, time.perf_counter() - started)
            logs.request_id.reset(token)

    async def _read_body(
        self, scope: Scope, receive: Receive, headers: dict[str, str]
    ) -> Receive | tuple[int, str, str]:
        """Buffer the body (at most max_body bytes); return a replaying receive or a problem."""
        if scope["method"] not in BODY_METHODS:
            return receive
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            return 413, "body-too-large", f"the body exceeds {self.max_body} bytes"
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return receive
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
            if size > self.max_body:
                return 413, "body-too-large", f"the body exceeds {self.max_body} bytes"
        body = b"".join(chunks)
        if body and not JSON_TYPE.match(headers.get("content-type", "")):
            return 415, "unsupported-media-type", "the body must be application/json"
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return replay

    def _observe(self, scope: Scope, status: int, elapsed: float) -> None:
        route = scope.get("route")
        template = getattr(route, "path", None) or "<unmatched>"
        method = scope["method"]
        metrics.REQUESTS.labels(method, template, str(status)).inc()
        metrics.LATENCY.labels(method, template).observe(elapsed)
        if self.access_log_on:
            access_log.info(
                "%s %s %d",
                method,
                scope["path"],
                status,
                extra={"route": template, "status": status, "duration_ms": elapsed * 1000},
            )
