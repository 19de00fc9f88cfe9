"""The dashboard app without the stack: page, panels, journeys, and Prometheus down or slow.

"Prometheus" here is a real HTTP server on a loopback port (or a closed port, or a listener
that never answers), so the proxy's timeouts and errors are the ones a browser would see.
"""

import socket
import time
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from fastapi.testclient import TestClient

from onceflow.settings import ObservabilitySettings, Settings
from services.dashboard.app import create_app
from services.dashboard.login import Login
from services.dashboard.overviews import OverviewSource
from services.dashboard.panels import PANELS, offered_queries
from services.dashboard.routers import page
from stack.waiting import free_port
from tests.integration.observability.rules import alert_rules
from tests.unit.dashboard.fakes import fake_prometheus, overview_hops

ORDER = UUID("0193a4b2-7c1d-7e3f-9a2b-3c4d5e6f7a8b")
JOURNEY = {"order_id": str(ORDER), "events": [{"partition": 1, "offset": 7}]}
LOGIN = Login("ops", "unit-test-password")
# A panel's query, as the page asks for it over its first range.
PANEL_QUERY = PANELS[0].series[0].expr


def _lookup(order_id: UUID) -> dict[str, Any] | None:
    if order_id == ORDER:
        return JOURNEY
    if order_id.int == 0:
        raise ConnectionError("connection refused")
    return None


def _client(
    port: int, timeout_s: float = 1.0, hops: OverviewSource | None = None, retention: str = "7d"
) -> TestClient:
    obs = ObservabilitySettings(
        prometheus_port=port, prometheus_timeout_s=timeout_s, prometheus_retention_time=retention
    )
    hops = hops or (lambda: overview_hops())
    app = create_app(obs=obs, settings=Settings(), lookup=_lookup, hops=hops, login=LOGIN)
    client = TestClient(app)
    client.auth = (LOGIN.user, LOGIN.password)
    return client


@pytest.fixture
def prometheus() -> Iterator[int]:
    with fake_prometheus() as port:
        yield port


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A listener that accepts connections and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield sock.getsockname()[1]


def test_the_page_its_files_and_the_panels_are_served() -> None:
    with _client(free_port()) as client:
        html = client.get("/")
        assert html.status_code == 200
        assert "Order journey" in html.text
        assert client.get("/static/dashboard.js").status_code == 200
        assert client.get("/healthz").json() == {"status": "ok"}
        config = client.get("/api/panels").json()
        assert config["refresh_seconds"] <= 10
        assert config["range_seconds"] == 900
        assert all(panel["series"] and panel["unit"]["label"] for panel in config["panels"])


def test_the_chart_library_comes_from_node_modules_or_a_sentence_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    with _client(free_port()) as client:
        assert client.get("/vendor/other.js").status_code == 404
        monkeypatch.setattr(page, "VENDOR", {"uPlot.iife.min.js": tmp_path / "missing.js"})
        missing = client.get("/vendor/uPlot.iife.min.js")
    assert missing.status_code == 503
    assert missing.headers["content-type"] == "application/problem+json"
    assert "npm ci" in missing.json()["detail"]


def test_prometheus_answers_pass_through(prometheus: int) -> None:
    with _client(prometheus) as client:
        params = {"query": PANEL_QUERY, "start": "0", "end": "10", "step": "5"}
        answer = client.get("/api/prom/query_range", params=params)
        assert answer.status_code == 200
        data = answer.json()["data"]
        assert data["path"].startswith("/api/v1/query_range?query=sum")
        assert len(data["result"][0]["values"]) == 3
        assert client.get("/api/prom/alerts").json()["data"]["path"] == "/api/v1/alerts"
        assert client.get("/api/prom/admin/tsdb/delete_series").status_code == 404


def test_prometheus_down_is_one_sentence_not_a_trace() -> None:
    with _client(free_port()) as client:
        answer = client.get("/api/prom/alerts")
    assert answer.status_code == 502
    assert answer.headers["content-type"] == "application/problem+json"
    problem = answer.json()
    assert problem["type"].endswith("prometheus-unreachable")
    assert problem["detail"].startswith("Prometheus unreachable")


def test_a_silent_prometheus_is_reported_within_its_timeout(silent_port: int) -> None:
    with _client(silent_port, timeout_s=0.5) as client:
        started = time.monotonic()
        answer = client.get("/api/prom/alerts")
        waited = time.monotonic() - started
    assert answer.status_code == 504
    assert waited < 3
    assert "did not answer within 0.5 s" in answer.json()["detail"]


@pytest.mark.parametrize("order_id", ["42", "not-a-uuid", "0193a4b2-7c1d-7e3f-9a2b-3c4d5e6f7a8"])
def test_a_malformed_order_id_is_a_readable_422(order_id: str) -> None:
    with _client(free_port()) as client:
        answer = client.get(f"/api/journey/{order_id}")
    assert answer.status_code == 422
    assert answer.headers["content-type"] == "application/problem+json"
    assert "UUID" in answer.json()["detail"]


def test_journeys_known_unknown_and_unavailable() -> None:
    with _client(free_port()) as client:
        assert client.get(f"/api/journey/{ORDER}").json() == JOURNEY
        unknown = client.get("/api/journey/0193a4b2-7c1d-7e3f-9a2b-000000000000")
        assert unknown.status_code == 404
        assert "no order" in unknown.json()["detail"]
        down = client.get(f"/api/journey/{UUID(int=0)}")
        assert down.status_code == 503
        assert "ConnectionError: connection refused" in down.json()["detail"]


def test_unknown_paths_are_problems() -> None:
    with _client(free_port()) as client:
        answer = client.get("/nope")
    assert answer.status_code == 404
    assert answer.headers["content-type"] == "application/problem+json"


def test_the_overview_is_the_hops_as_tiles_read_once_for_every_tab() -> None:
    reads: list[str] = []

    def hops() -> list[dict[str, Any]]:
        reads.append("read")
        return overview_hops(connector="PAUSED")

    with _client(free_port(), hops=hops) as client:
        first, second = client.get("/api/overview").json(), client.get("/api/overview").json()
    assert len(reads) == 1  # the second tab within MAX_AGE_S shares the first read
    assert first == second
    assert first["healthy"] is False
    assert {t["hop"]: t["state"] for t in first["tiles"]}["connector"] == "paused"
    assert [h["hop"] for h in first["hops"]] == [t["hop"] for t in first["tiles"]]
    assert first["read_at"].endswith("Z")


def test_an_overview_that_fails_is_a_sentence() -> None:
    def broken() -> list[dict[str, Any]]:
        raise RuntimeError("supervisord vanished")

    with _client(free_port(), hops=broken) as client:
        answer = client.get("/api/overview")
    assert answer.status_code == 503
    assert answer.headers["content-type"] == "application/problem+json"
    assert "RuntimeError: supervisord vanished" in answer.json()["detail"]


def test_every_runbook_an_alert_links_opens_on_its_own_section() -> None:
    with _client(free_port()) as client:
        html = client.get("/docs/operations.md")
        for path in ("/docs/../pyproject.toml", "/docs/nothing.md", "/docs/operations.txt"):
            assert client.get(path).status_code == 404, path
    assert html.status_code == 200
    assert html.headers["content-type"].startswith("text/html")
    # Whatever a doc holds, its page runs no script (services/dashboard/docs.py HEADERS).
    assert html.headers["content-security-policy"].startswith("default-src 'none';")
    assert "script-src" not in html.headers["content-security-policy"]
    assert html.headers["x-content-type-options"] == "nosniff"
    for rule in alert_rules():
        page_path, anchor = rule["annotations"]["runbook"].split("#")
        assert page_path == "docs/operations.md"
        assert f'id="{anchor}"' in html.text, rule["alert"]


def test_docs_list_the_project_docs_and_load_nothing_from_elsewhere() -> None:
    with _client(free_port()) as client:
        listing = client.get("/docs")
        assert client.get("/redoc").status_code == 404
    assert listing.status_code == 200
    assert '<a href="/docs/operations.md">' in listing.text
    assert "http" not in listing.text  # no CDN: everything it shows is local


def test_the_range_picker_is_as_long_as_prometheus_keeps() -> None:
    with _client(free_port(), retention="2d") as client:
        config = client.get("/api/panels").json()
    assert [r["label"] for r in config["ranges"]] == ["15m", "1h", "6h", "24h"]
    assert config["retention"] == "2d"


PROTECTED = [
    "/",
    "/static/dashboard.js",
    "/vendor/uPlot.iife.min.js",
    "/api/panels",
    "/api/overview",
    f"/api/journey/{ORDER}",
    "/api/prom/alerts",
    "/docs",
    "/docs/operations.md",
    "/nope",
]


@pytest.mark.parametrize("auth", [None, ("ops", "wrong"), ("someone", LOGIN.password)])
def test_every_page_and_api_but_healthz_needs_the_ops_credential(
    auth: tuple[str, str] | None,
) -> None:
    with _client(free_port()) as client:
        client.auth = auth
        for path in PROTECTED:
            answer = client.get(path)
            assert answer.status_code == 401, path
            assert answer.headers["content-type"] == "application/problem+json"
            assert answer.headers["www-authenticate"].startswith('Basic realm="Onceflow')
            assert "partition" not in answer.text  # nothing of the journey
        assert client.get("/healthz").status_code == 200


@pytest.mark.parametrize(
    "authorization",
    ["Bearer unit-test-password", "Basic !!!", "Basic b3Bz", "Basic " + "x" * 10_000],
)
def test_a_malformed_authorization_is_refused(authorization: str) -> None:
    with _client(free_port()) as client:
        client.auth = None
        answer = client.get("/api/panels", headers={"Authorization": authorization})
    assert answer.status_code == 401


def test_the_proxy_runs_every_panels_query_at_every_range_and_nothing_else(
    prometheus: int,
) -> None:
    offered = offered_queries("7d")
    widened = PANEL_QUERY.replace("[1m]", "[840s]")  # the 7d range's rate window
    assert widened in offered
    with _client(prometheus) as client:
        for query in (PANEL_QUERY, widened):
            params = {"query": query, "start": "0", "end": "10", "step": "5"}
            assert client.get("/api/prom/query_range", params=params).status_code == 200
        for query in ("up", PANEL_QUERY + " or vector(1)", 'count({__name__=~".+"})'):
            params = {"query": query, "start": "0", "end": "10", "step": "5"}
            refused = client.get("/api/prom/query_range", params=params)
            assert refused.status_code == 403, query
            assert refused.headers["content-type"] == "application/problem+json"
        extra = {"query": PANEL_QUERY, "start": "0", "end": "10", "step": "5", "timeout": "9m"}
        assert client.get("/api/prom/query_range", params=extra).status_code == 400
        twice = [("query", PANEL_QUERY), ("query", "up")]
        assert client.get("/api/prom/query_range", params=twice).status_code == 400
        assert client.get("/api/prom/alerts", params={"x": "1"}).status_code == 400
        for endpoint in ("query", "targets", "series", "labels"):
            params = {"query": PANEL_QUERY}
            assert client.get(f"/api/prom/{endpoint}", params=params).status_code != 200
