"""Structured JSON logs, one object per line (every service), with the API's request id."""

import logging
import sys
from contextvars import ContextVar
from datetime import UTC, datetime

import orjson

request_id: ContextVar[str | None] = ContextVar("request_id", default=None)
# Record attributes that are not extras; uvicorn's `color_message` (its message with ANSI colour
# codes, for terminals) is one too: `msg` already says it, in plain text.
_STANDARD = set(logging.makeLogRecord({}).__dict__) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}
# HTTP clients log every request at INFO (the dashboard's 16 Prometheus queries a refresh):
# their warnings and errors still show.
QUIET = ("httpx", "httpcore")


class JsonFormatter(logging.Formatter):
    """Render a record as JSON: time, level, logger, message, request_id and any `extra`."""

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if (rid := request_id.get()) is not None:
            doc["request_id"] = rid
        doc.update({k: v for k, v in record.__dict__.items() if k not in _STANDARD})
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(doc, default=str).decode()


def configure(level: str) -> None:
    """Send every log record (uvicorn's included, but its access log and the HTTP clients'
    per-request lines) to stderr as JSON."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # The access log is the middleware's `onceflow.access` (route, status, duration); uvicorn's
    # own would log every request a second time, so it alone does not reach the root handler.
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = name != "uvicorn.access"
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
