"""Liveness, readiness (database + replication slot) and Prometheus metrics."""

from fastapi.testclient import TestClient

from onceflow.settings import Settings
from services.orders.entrypoints.app import create_app
from tests.integration.orders.conftest import act, place


def test_healthz_and_readyz(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json() == {"status": "ready"}


def test_readyz_is_503_without_the_slot(settings: Settings) -> None:
    other = settings.model_copy(update={"replication_slot": "no_such_slot"})
    with TestClient(create_app(other)) as c:
        response = c.get("/readyz")
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/problem+json"


def test_readyz_is_503_without_the_database(settings: Settings) -> None:
    down = settings.model_copy(update={"pg_port": 1})
    with TestClient(create_app(down), raise_server_exceptions=False) as c:
        assert c.get("/healthz").status_code == 200
        response = c.get("/readyz")
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/problem+json"


REQUESTS, LATENCY = "onceflow_http_requests_total", "onceflow_http_request_duration_seconds_count"
SHIP_409 = 'method="POST",route="/orders/{order_id}/ship",status="409"'
POST_ORDERS = 'method="POST",route="/orders"'


def sample(text: str, name: str) -> float:
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(name) and not line.startswith("#")
    )


def test_metrics_count_requests_orders_replays_and_rejections(client: TestClient) -> None:
    before = client.get("/metrics").text
    order = place(client)
    idem = "metrics-" + order["id"]
    act(client, order["id"], "ship", idem)
    act(client, order["id"], "ship", idem)
    after = client.get("/metrics")
    assert after.headers["content-type"].startswith("text/plain")
    text = after.text
    for name, delta in [
        ("onceflow_orders_created_total", 1),
        ("onceflow_transitions_rejected_total", 1),
        ("onceflow_idempotent_replays_total", 1),
        (f"{REQUESTS}{{{SHIP_409}}}", 2),
        (f"{LATENCY}{{{POST_ORDERS}}}", 1),
    ]:
        assert sample(text, name) - sample(before, name) == delta, name
