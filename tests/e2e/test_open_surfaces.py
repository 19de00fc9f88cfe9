"""What answers on the running stack without any credential shows no secret (docs/security.md,
threat model): every target Prometheus scrapes (the /metrics of every service and exporter),
Prometheus's own config, flags and targets, and the job's Spark UI (its environment, where Spark
redacts what looks like a secret, and its queries' plans)."""

import httpx

from onceflow.settings import get_aggregation_settings, get_observability_settings
from tests.integration.stack.stack_secrets import secrets


def _open_pages() -> dict[str, str]:
    """Each address that needs no credential, and what it answered."""
    prometheus = get_observability_settings().prometheus_url
    urls = [
        f"{prometheus}/api/v1/{path}"
        for path in ("status/config", "status/flags", "status/runtimeinfo", "targets")
    ]
    targets = httpx.get(f"{prometheus}/api/v1/targets", timeout=30).json()["data"]
    urls += sorted({target["scrapeUrl"] for target in targets["activeTargets"]})
    agg = get_aggregation_settings()
    if agg.agg_ui_enabled:
        ui = f"http://127.0.0.1:{agg.agg_ui_port}"
        (app,) = httpx.get(f"{ui}/api/v1/applications", timeout=30).json()
        api = f"{ui}/api/v1/applications/{app['id']}"
        urls += [f"{api}/environment", f"{api}/sql?details=true&length=1000", f"{ui}/environment/"]
    return {url: httpx.get(url, timeout=60).text for url in urls}


def test_nothing_open_shows_a_secret() -> None:
    known = secrets()
    pages = _open_pages()
    assert len(pages) > 10, sorted(pages)  # every scrape target, not just Prometheus itself
    assert all(pages.values())
    shown = {
        url: sorted(name for name, secret in known.items() if secret in text)
        for url, text in pages.items()
    }
    assert {url: names for url, names in shown.items() if names} == {}


def test_prometheus_offers_no_admin_or_lifecycle_api() -> None:
    """Anyone on the host reaches Prometheus: it must not delete series or stop on request."""
    prometheus = get_observability_settings().prometheus_url
    flags = httpx.get(f"{prometheus}/api/v1/status/flags", timeout=30).json()["data"]
    assert (flags["web.enable-admin-api"], flags["web.enable-lifecycle"]) == ("false", "false")
