"""Prometheus's HTTP API, as the tests read it: instant queries and the scrape targets."""

from typing import Any, cast

import httpx

from onceflow.settings import get_observability_settings
from stack.waiting import NotReadyError, wait_for


def api(path: str, **params: str) -> Any:
    """The `data` of a Prometheus API answer (raises on an HTTP or query error)."""
    url = get_observability_settings().prometheus_url + path
    answer = httpx.get(url, params=params, timeout=5)
    answer.raise_for_status()
    body = cast(dict[str, Any], answer.json())
    assert body["status"] == "success", body
    return body["data"]


def query(expr: str) -> list[dict[str, Any]]:
    """The samples of an instant query: [{"metric": {...}, "value": [ts, "1"]}, ...]."""
    return cast(list[dict[str, Any]], api("/api/v1/query", query=expr)["result"])


def value(sample: dict[str, Any]) -> float:
    """One sample's value."""
    return float(sample["value"][1])


def wait_for_samples(expr: str, *, timeout: float = 60) -> list[dict[str, Any]]:
    """Wait until `expr` has samples (a few scrapes), and return them; fail saying which."""
    found: list[dict[str, Any]] = []

    def some() -> bool:
        found[:] = query(expr)
        return bool(found)

    try:
        wait_for(some, what=expr, timeout=timeout, interval=1)
    except NotReadyError as exc:
        raise AssertionError(f"no samples of {expr} in Prometheus after {timeout:.0f}s") from exc
    return found
