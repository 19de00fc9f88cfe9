"""Stand-ins for the dashboard's tests: a Prometheus that answers like one (a real HTTP server
on a loopback port), a journey in services.ops.journey's shape, and ports nobody listens on."""

import json
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


def _answer(path: str) -> dict[str, Any]:
    url = urlsplit(path)
    params = {key: values[0] for key, values in parse_qs(url.query).items()}
    data: dict[str, Any] = {"path": path}
    if url.path.endswith("/query_range"):
        start, end, step = (float(params[k]) for k in ("start", "end", "step"))
        points = [
            [start + n * step, str(2 + math.sin(n / 9))]
            for n in range(int((end - start) / step) + 1)
        ]
        data |= {"resultType": "matrix", "result": [{"metric": {}, "values": points}]}
    elif url.path.endswith("/query"):
        up = [("api", "1"), ("kafka", "1"), ("aggregation", "0")]
        data |= {
            "resultType": "vector",
            "result": [{"metric": {"job": job}, "value": [0, value]} for job, value in up],
        }
    elif url.path.endswith("/alerts"):
        alert = {
            "labels": {"alertname": "AggregationDown", "severity": "critical"},
            "annotations": {"summary": "the aggregation job is not scraped"},
            "state": "firing",
            "activeAt": "2026-11-23T13:00:00Z",
        }
        data |= {"alerts": [alert]}
    return {"status": "success", "data": data}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps(_answer(self.path)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@contextmanager
def fake_prometheus() -> Iterator[int]:
    """A Prometheus HTTP API with a little of everything; yields its port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def journey_doc(order_id: str, *, complete: bool) -> dict[str, Any]:
    """Journey.as_dict() of a placed and paid order; the payment not yet applied unless
    `complete`."""

    def event(n: int, kind: str, offset: int, applied: bool) -> dict[str, Any]:
        return {
            "event_id": f"9b0e7f7e-1c55-4c55-9b1a-6d1f3f1e2a0{n}",
            "event_type": kind,
            "occurred_at": f"2026-11-23T13:40:0{n}.120301Z",
            "kafka": {"partition": 2, "offset": offset, "timestamp": f"2026-11-23T13:40:0{n}.5Z"},
            "batch": {
                "query_id": "5f2d1c3e-8a7b-4c6d-9e0f-1a2b3c4d5e6f",
                "batch_id": 1890 + n,
                "committed_at": f"2026-11-23T13:40:0{n + 2}.0Z",
            }
            if applied
            else None,
            "notification": {"id": f"0c5b2d1a-3e4f-5a6b-8c7d-9e0f1a2b3c4{n}", "produced": applied},
            "seconds_after_commit": {"kafka": 0.379699, "applied": 1.879699 if applied else None},
        }

    return {
        "order_id": order_id,
        "topic": "outbox.event.order",
        "order": {
            "status": "PAID",
            "created_at": "2026-11-23T13:40:01.120301Z",
            "updated_at": "2026-11-23T13:40:02.120301Z",
        },
        "events": [
            event(1, "OrderPlaced", 48211, applied=True),
            event(2, "OrderPaid", 48219, applied=complete),
        ],
        "notes": [],
    }
