"""The alerts Prometheus is raising now (its /api/v1/alerts), with readable errors instead of
stack traces. The rules: observability/prometheus/rules/; the runbooks: docs/operations.md."""

from dataclasses import dataclass
from typing import Any

import httpx

SEVERITY_ORDER = {"critical": 0, "warning": 1}


class PrometheusError(RuntimeError):
    """Prometheus could not be reached or did not answer: said in one sentence."""


@dataclass(frozen=True)
class Alert:
    """One alert instance: a rule's name and the labels of the series it fired for."""

    name: str
    state: str  # firing, or pending (true, but not yet for the rule's `for:`)
    severity: str
    summary: str
    runbook: str
    active_at: str
    value: str
    labels: dict[str, str]

    @classmethod
    def of(cls, doc: dict[str, Any]) -> "Alert":
        labels: dict[str, str] = dict(doc.get("labels", {}))
        annotations: dict[str, str] = doc.get("annotations", {})
        return cls(
            name=labels.get("alertname", "?"),
            state=str(doc.get("state", "?")),
            severity=labels.get("severity", ""),
            summary=annotations.get("summary", ""),
            runbook=annotations.get("runbook", ""),
            active_at=str(doc.get("activeAt", "")),
            value=str(doc.get("value", "")),
            labels=labels,
        )


def current(*, url: str, timeout: float, include_pending: bool = False) -> list[Alert]:
    """The firing (and with `include_pending` the pending) alerts, most severe first."""
    try:
        response = httpx.get(f"{url}/api/v1/alerts", timeout=timeout)
        response.raise_for_status()
        body = response.json()
    except httpx.TimeoutException as exc:
        raise PrometheusError(f"Prometheus at {url} did not answer within {timeout:g} s") from exc
    except httpx.HTTPStatusError as exc:
        raise PrometheusError(
            f"Prometheus at {url} answered {exc.response.status_code}: {exc.response.text[:200]}"
        ) from exc
    except httpx.HTTPError as exc:
        raise PrometheusError(f"Prometheus at {url} is unreachable ({exc})") from exc
    except ValueError as exc:
        raise PrometheusError(f"{url} did not answer as Prometheus (no JSON)") from exc
    if not isinstance(body, dict) or body.get("status") != "success":
        raise PrometheusError(f"Prometheus at {url} refused the request: {body!r:.200}")
    alerts = [Alert.of(doc) for doc in body["data"]["alerts"]]
    states = {"firing", "pending"} if include_pending else {"firing"}
    wanted = [a for a in alerts if a.state in states]
    return sorted(
        wanted,
        key=lambda a: (a.state != "firing", SEVERITY_ORDER.get(a.severity, 9), a.name, a.active_at),
    )
