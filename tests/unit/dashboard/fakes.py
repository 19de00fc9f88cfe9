"""Stand-ins for the dashboard's tests: a Prometheus that answers like one (a real HTTP server
on a loopback port), the overview's hops and a journey in services.ops' shapes, and ports
nobody listens on."""

import json
import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from services.ops.overview import Hop
from stack.checks import Checked
from stack.health import Process

# The reconciliation hop's facts (services/ops/overview.py): a clean last run.
RECONCILED = {
    "differences": 0,
    "days_with_differences": 0,
    "last_run_at": "2026-11-26T02:10:00Z",
    "days_checked": 7,
    "first_day": "2026-11-19",
    "last_day": "2026-11-25",
    "note": None,
}

# Per-partition series: partition 1 lags most, so a headline of partition 0 would hide it.
PARTITION_LEVELS = {"0": 3.0, "1": 40.0, "2": 7.0}
# Notifications by outcome: the first series (dead_letter) is 0 while 26.3/s are notified.
OUTCOME_LEVELS = {"dead_letter": 0.0, "notified": 26.3}
# The pending alert has been true this long when Prometheus is asked.
PENDING_FOR_S = 14


def _series(query: str) -> list[tuple[dict[str, str], float]]:
    """The labelled series a query of the panels returns here, each at a constant level."""
    if "by (partition)" in query:
        return [({"partition": p}, level) for p, level in PARTITION_LEVELS.items()]
    if "by (outcome)" in query:
        return [({"outcome": o}, level) for o, level in OUTCOME_LEVELS.items()]
    return [({}, 2.0)]


def _alerts() -> list[dict[str, Any]]:
    pending_since = datetime.fromtimestamp(time.time() - PENDING_FOR_S, UTC)
    return [
        {
            "labels": {"alertname": "AggregationDown", "severity": "critical"},
            "annotations": {
                "summary": "the aggregation job is not scraped",
                "runbook": "docs/operations.md#scrapetargetdown",
            },
            "state": "firing",
            "activeAt": "2026-11-23T13:00:00Z",
        },
        {
            "labels": {
                "alertname": "ConnectorPausedTooLong",
                "severity": "warning",
                "connector": "orders-outbox",
            },
            "annotations": {
                "summary": "Connector orders-outbox is paused: order events wait in the slot",
                "runbook": "docs/operations.md#connectorpausedtoolong",
            },
            "state": "pending",
            "activeAt": pending_since.isoformat().replace("+00:00", "Z"),
        },
    ]


def _answer(path: str) -> dict[str, Any]:
    url = urlsplit(path)
    params = {key: values[0] for key, values in parse_qs(url.query).items()}
    data: dict[str, Any] = {"path": path}
    if url.path.endswith("/query_range"):
        start, end, step = (float(params[k]) for k in ("start", "end", "step"))
        result = [
            {
                "metric": metric,
                "values": [
                    [start + n * step, str(level + (level > 0) * math.sin(n / 9) / 10)]
                    for n in range(int((end - start) / step) + 1)
                ],
            }
            for metric, level in _series(params["query"])
        ]
        data |= {"resultType": "matrix", "result": result}
    elif url.path.endswith("/query"):
        up = [("api", "1"), ("kafka", "1"), ("aggregation", "0")]
        data |= {
            "resultType": "vector",
            "result": [{"metric": {"job": job}, "value": [0, value]} for job, value in up],
        }
    elif url.path.endswith("/alerts"):
        data |= {"alerts": _alerts()}
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


def overview_hops(connector: str = "RUNNING") -> list[dict[str, Any]]:
    """services.ops.overview's hops as `gather` returns them (Hop.as_dict()), every process
    running and healthy, the connector in state `connector` (its probe says so if not)."""
    running = Process(state="RUNNING", uptime=3725.0, restarts=1)
    problem = None if connector == "RUNNING" else f"connector orders-outbox: connector {connector}"
    hops = [
        Hop("api", ["api"], facts={"url": "http://127.0.0.1:8000"}),
        Hop(
            "connector",
            ["connect"],
            facts={
                "connector": {
                    "name": "orders-outbox",
                    "state": connector,
                    "tasks": [{"id": 0, "state": connector}],
                }
            },
            processes={"connect": Checked(running, problem)},
        ),
        Hop(
            "aggregation",
            ["aggregation"],
            facts={"lag": {"behind_total": 50, "worst_partition": 1, "behind_worst": 40}},
        ),
        Hop("reconciliation", [], facts={"reconciliation": RECONCILED}),
    ]
    for hop in hops:
        hop.processes = hop.processes or {p: Checked(running, None) for p in hop.programs}
    return [hop.as_dict() for hop in hops]
