"""Structured logs: one JSON object per line with the request id and any extra fields."""

import logging

import orjson

from onceflow.logs import JsonFormatter, configure, request_id


def _record(**extra: object) -> logging.LogRecord:
    record = logging.makeLogRecord({"name": "onceflow.access", "levelname": "INFO", **extra})
    record.msg, record.args = "%s %s %d", ("POST", "/orders", 201)
    return record


def test_a_line_is_json_with_the_request_id_and_extras() -> None:
    token = request_id.set("req-123")
    try:
        line = JsonFormatter().format(_record(route="/orders", status=201))
    finally:
        request_id.reset(token)
    doc = orjson.loads(line)
    assert doc["msg"] == "POST /orders 201"
    assert doc["request_id"] == "req-123"
    assert (doc["level"], doc["logger"], doc["route"], doc["status"]) == (
        "INFO",
        "onceflow.access",
        "/orders",
        201,
    )
    assert "\n" not in line


def test_outside_a_request_there_is_no_request_id() -> None:
    assert "request_id" not in orjson.loads(JsonFormatter().format(_record()))


def test_no_ansi_codes_reach_a_line() -> None:
    # uvicorn logs "Started server process [%d]" with a coloured copy as an extra
    record = _record(color_message="Started server process [\x1b[36m%d\x1b[0m]")
    line = JsonFormatter().format(record)
    assert "\x1b" not in line
    assert "\\u001b" not in line
    assert "color_message" not in orjson.loads(line)


def test_http_clients_log_no_line_per_request() -> None:
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        configure("INFO")
        for name in ("httpx", "httpcore"):
            assert not logging.getLogger(name).isEnabledFor(logging.INFO)
            assert logging.getLogger(name).isEnabledFor(logging.WARNING)
    finally:
        root.handlers[:], root.level = saved[0], saved[1]


def test_uvicorn_does_not_log_each_request_a_second_time() -> None:
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        configure("INFO")
        # uvicorn writes its access line only when this logger has handlers (its own or
        # inherited); the middleware's onceflow.access line is the one access log.
        assert not logging.getLogger("uvicorn.access").hasHandlers()
        assert logging.getLogger("uvicorn.error").hasHandlers()
        assert logging.getLogger("onceflow.access").hasHandlers()
    finally:
        root.handlers[:], root.level = saved[0], saved[1]
