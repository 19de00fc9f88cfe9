"""A stand-in for Prometheus's HTTP API on a free loopback port: answers /api/v1/alerts with a
given document (or after a delay, or with an error status)."""

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Answer:
    """What the fake answers: status, body, and how long it waits first."""

    status: int = 200
    body: Any = field(default_factory=lambda: {"status": "success", "data": {"alerts": []}})
    delay_s: float = 0.0


@contextmanager
def fake_prometheus(answer: Answer) -> Iterator[str]:
    """Serve `answer` until the block ends; yield the base URL."""
    done = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if done.wait(answer.delay_s):
                return
            payload = (
                answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body).encode()
            )
            self.send_response(answer.status if self.path == "/api/v1/alerts" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        done.set()
        server.shutdown()
        server.server_close()


def alert(name: str, state: str, severity: str, **labels: str) -> dict[str, Any]:
    """One entry of /api/v1/alerts as Prometheus writes it."""
    return {
        "labels": {"alertname": name, "severity": severity, **labels},
        "annotations": {
            "summary": f"{name} summary",
            "runbook": f"docs/operations.md#{name.lower()}",
        },
        "state": state,
        "activeAt": "2026-11-23T13:00:00.123456789Z",
        "value": "1e+00",
    }


def alerts_body(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"status": "success", "data": {"alerts": list(entries)}}
