"""Pure ASGI middleware: request id, body limits and media type, metrics and access log."""

import logging
import re
import time
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from onceflow import logs
from services.orders.entrypoints import metrics
from services.orders.entrypoints.problems import problem_response

access_log = logging.getLogger("onceflow.access")
JSON_TYPE = re.compile(r"^application/([a-z0-9.+-]+\+)?json\s*(;.*)?$", re.IGNORECASE)
REQUEST_ID = re.compile(r"^[\x21-\x7e]{1,128}$")
BODY_METHODS = {"POST", "PUT", "PATCH"}


class TooLargeError(Exception):
    """The body exceeded the configured limit while it was being read."""


class RequestContextMiddleware:
    """Wraps every HTTP request; rejects oversized (413) and non-JSON (415) bodies early."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int, access_log_on: bool) -> None:
        self.app, self.max_body, self.access_log_on = app, max_body_bytes, access_log_on

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        given = headers.get("x-request-id", "")
        rid = given if REQUEST_ID.match(given) else uuid.uuid4().hex
        token = logs.request_id.set(rid)
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", rid.encode())]
            await send(message)

        try:
            rejection = await self._read_body(scope, receive, headers)
            if isinstance(rejection, tuple):
                await problem_response(*rejection)(scope, receive, send_with_id)
            else:
                await self.app(scope, rejection, send_with_id)
        finally:
            self._observe(scope, status, time.perf_counter() - started)
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
