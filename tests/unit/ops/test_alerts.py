"""services/ops/alerts.py against a fake Prometheus: what is firing, most severe first; every
failure to ask is one sentence (PrometheusError)."""

import pytest

from services.ops.alerts import PrometheusError, current
from stack.waiting import free_port
from tests.unit.ops.fake_prometheus import Answer, alert, alerts_body, fake_prometheus


def test_firing_alerts_most_severe_first_and_pending_only_when_asked() -> None:
    body = alerts_body(
        alert("AggregationStale", "firing", "warning"),
        alert("ConnectorPausedTooLong", "pending", "warning", connector="orders-outbox"),
        alert("ConnectorNotRunning", "firing", "critical", connector="orders-outbox"),
    )
    with fake_prometheus(Answer(body=body)) as url:
        firing = current(url=url, timeout=2)
        everything = current(url=url, timeout=2, include_pending=True)
    assert [a.name for a in firing] == ["ConnectorNotRunning", "AggregationStale"]
    assert [a.name for a in everything][-1] == "ConnectorPausedTooLong"
    assert firing[0].runbook == "docs/operations.md#connectornotrunning"
    assert firing[0].labels["connector"] == "orders-outbox"


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (Answer(delay_s=3), "did not answer within 0.5 s"),
        (Answer(status=503, body={"status": "error"}), "answered 503"),
        (Answer(body=b"<html>not prometheus</html>"), "did not answer as Prometheus"),
        (Answer(body={"status": "error", "error": "boom"}), "refused the request"),
    ],
)
def test_a_prometheus_that_misbehaves_is_one_sentence(answer: Answer, says: str) -> None:
    with fake_prometheus(answer) as url, pytest.raises(PrometheusError, match=says):
        current(url=url, timeout=0.5)


def test_a_prometheus_that_is_down_is_one_sentence() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(PrometheusError, match=f"Prometheus at {url} is unreachable"):
        current(url=url, timeout=0.5)
